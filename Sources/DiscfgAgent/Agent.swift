import DiscfgCore
import Foundation
import Logging
import Synchronization

/// `discfg agent`'s parts put together: a ``ReplicaStore`` of the configs, a
/// ``ConfigFollower`` each, and, with a cache directory, the last known good copies.
///
/// The configs are those named, and, with `prefixes`, every config of the source whose
/// name starts with one of them: listed at ``load()`` and again each interval, so a config
/// created later is taken on and one deleted is dropped (see `Agent+Prefixes.swift`).
///
/// ```swift
/// let agent = Agent(source: StoreSource(store, description: "dynamodb:///discfg"), configs: [app], interval: .seconds(15))
/// try await agent.load()
/// Task { await agent.run() }   // serve agent.replica meanwhile
/// ```
public final class Agent: Sendable {
    /// The copies, as a store to serve.
    public let replica: ReplicaStore
    /// How often each follower checks its source.
    public let interval: Duration
    /// Config name prefixes whose configs are held as they come and go; empty for none.
    public let prefixes: [String]
    /// The configs named, held whatever the listings say.
    let named: [ConfigName]
    let source: any AgentSource
    let cache: SnapshotCache?
    let clock: AgentClock
    let deadline: Duration
    let logger: Logger
    let held = Mutex(Held())

    /// The followers and what runs them.
    struct Held {
        var order: [ConfigName] = []
        var followers: [ConfigName: ConfigFollower] = [:]
        /// Each follower's loop while ``Agent/run()`` runs; nil before and after.
        var tasks: [ConfigName: Task<Void, Never>]?
        var listings = 0
        var listingErrors = 0
    }

    /// Creates an agent; nothing is read until ``load()``.
    /// - Parameter prefixes: config name prefixes to hold every config of; the source must
    ///   then be a ``ConfigListingSource`` (``load()`` refuses it otherwise).
    public init(
        source: any AgentSource, configs: [ConfigName], prefixes: [String] = [], interval: Duration, cache: SnapshotCache? = nil,
        clock: AgentClock = .continuous, deadline: Duration = .seconds(10), logger: Logger = Logger(label: "discfg.agent")
    ) {
        replica = ReplicaStore(source: source.description, configs: configs)
        self.source = source
        self.interval = interval
        self.prefixes = prefixes
        self.named = configs
        self.cache = cache
        self.clock = clock
        self.deadline = deadline
        self.logger = logger
        for config in configs { _ = follow(config) }
    }

    /// The longest the first load of a config waits for its source when a copy on disk
    /// can be served instead (a Lambda cold start while the store is down).
    public static let startDeadlineWithCopy: Duration = .seconds(2)

    /// One follower per config held, in the order they were taken on.
    public var followers: [ConfigFollower] {
        held.withLock { held in held.order.compactMap { held.followers[$0] } }
    }

    /// Loads every config from the source, or, when the source fails, from the cache.
    /// - Throws: `unavailable` naming the configs that neither could give; `invalidArgument`
    ///   when prefixes are given and the source cannot list its configs.
    public func load() async throws {
        if !prefixes.isEmpty { try await discoverAtStart() }
        var missing: [String] = []
        for follower in followers {
            // With a copy on disk to fall back on, a source that is down is not waited for
            // long: the copy is served and the source tried again each interval. The copy
            // is read only when it is needed.
            let onDisk = cache.map { FileManager.default.fileExists(atPath: $0.path(of: follower.config)) } ?? false
            guard case .failed(var reason) = await follower.refresh(within: onDisk ? Self.startDeadlineWithCopy : nil) else { continue }
            if let copy = cachedCopy(follower.config) {
                replica.install(copy)
                source.resume(from: copy)
                logger.warning("serving the copy on disk until the source answers", metadata: ["config": "\(follower.config)", "revision": "\(copy.revision)"])
                continue
            }
            // The file failed its check: the source is all there is, so give it its full deadline.
            if onDisk {
                guard case .failed(let again) = await follower.refresh() else { continue }
                reason = again
            }
            missing.append("\"\(follower.config)\" (\(reason))")
        }
        guard missing.isEmpty else {
            throw DiscfgError(.unavailable, "could not load \(missing.joined(separator: ", ")) from \(replica.source), and no copy on disk")
        }
    }

    /// Follows every config until the task is cancelled; with prefixes, lists the source's
    /// configs again each interval.
    public func run() async {
        let started = held.withLock { held in
            held.tasks = [:]
            return held.order.compactMap { held.followers[$0] }
        }
        for follower in started { startLoop(follower) }
        while !Task.isCancelled {
            do { try await clock.sleep(interval) } catch { break }
            if !prefixes.isEmpty { await discover() }
        }
        let tasks = held.withLock { held in
            defer { held.tasks = nil }
            return Array((held.tasks ?? [:]).values)
        }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }

    /// Takes on a follower of `config`; returns it, or nil when it is held already.
    func follow(_ config: ConfigName) -> ConfigFollower? {
        let cache = self.cache
        let logger = self.logger
        let replica = self.replica
        let follower = ConfigFollower(config: config, source: source, replica: replica, clock: clock, deadline: deadline, logger: logger) { snapshot in
            guard let cache, replica.configs.contains(config) else { return }
            do { try cache.write(snapshot) } catch {
                logger.error("could not keep the copy on disk", metadata: ["config": "\(config)", "error": "\(error)"])
            }
        }
        let added = held.withLock { held in
            guard held.followers[config] == nil else { return false }
            held.followers[config] = follower
            held.order.append(config)
            return true
        }
        guard added else { return nil }
        replica.hold(config)
        return follower
    }

    /// Runs `follower`'s loop while ``run()`` runs.
    func startLoop(_ follower: ConfigFollower) {
        let interval = self.interval
        held.withLock { held in
            guard held.tasks != nil, held.tasks?[follower.config] == nil else { return }
            held.tasks?[follower.config] = Task { await follower.run(every: interval) }
        }
    }

    func cachedCopy(_ config: ConfigName) -> PublishedSnapshot? {
        guard let cache else { return nil }
        do { return try cache.read(config) } catch {
            logger.error("ignoring the copy on disk", metadata: ["config": "\(config)", "error": "\(error)"])
            return nil
        }
    }

    /// The most seconds since any config's source last answered; nil when one never did.
    public var staleness: Double? {
        var worst = 0.0
        for follower in followers {
            guard let staleness = follower.staleness else { return nil }
            worst = max(worst, Self.seconds(staleness))
        }
        return worst
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// `/healthz`: `ok` while every config was checked within two intervals, else `stale`;
    /// per config its revision, staleness and errors.
    public func health() -> Data {
        struct Config: Encodable {
            let errors: Int
            let revision: UInt64?
            let stalenessSeconds: Double?
        }
        struct Health: Encodable {
            let configs: [String: Config]
            let source: String
            let status: String
        }
        let limit = Self.seconds(interval) * 2 + 10
        var configs: [String: Config] = [:]
        for follower in followers {
            let seconds = follower.staleness.map(Self.seconds).map { ($0 * 1000).rounded() / 1000 }
            configs[follower.config.rawValue] = Config(
                errors: follower.status.errors, revision: replica.revision(of: follower.config)?.rawValue, stalenessSeconds: seconds
            )
        }
        let stale = configs.values.contains { ($0.stalenessSeconds ?? .infinity) > limit }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(Health(configs: configs, source: replica.source, status: stale ? "stale" : "ok"))) ?? Data("{}".utf8)
        return body + Data("\n".utf8)
    }

    /// The agent's series in Prometheus text: checks, refreshes, errors and staleness per config.
    public func metricsText() -> String {
        var lines = [
            "# HELP discfg_agent_checks_total Revision checks made of the source.", "# TYPE discfg_agent_checks_total counter",
        ]
        var refreshes = ["# HELP discfg_agent_refreshes_total Refreshes that changed the copy.", "# TYPE discfg_agent_refreshes_total counter"]
        var errors = ["# HELP discfg_agent_store_errors_total Refreshes that failed or passed their deadline.", "# TYPE discfg_agent_store_errors_total counter"]
        var staleness = ["# HELP discfg_agent_staleness_seconds Seconds since the source last answered.", "# TYPE discfg_agent_staleness_seconds gauge"]
        var revisions = ["# HELP discfg_agent_revision The revision held.", "# TYPE discfg_agent_revision gauge"]
        for follower in followers {
            let status = follower.status
            let label = "{config=\"\(follower.config)\"}"
            lines.append("discfg_agent_checks_total\(label) \(status.checks)")
            refreshes.append("discfg_agent_refreshes_total\(label) \(status.refreshes)")
            errors.append("discfg_agent_store_errors_total\(label) \(status.errors)")
            if let seconds = follower.staleness.map(Self.seconds) { staleness.append("discfg_agent_staleness_seconds\(label) \(seconds)") }
            if let revision = replica.revision(of: follower.config) { revisions.append("discfg_agent_revision\(label) \(revision.rawValue)") }
        }
        var listings: [String] = []
        if !prefixes.isEmpty {
            let (count, failed) = held.withLock { ($0.listings, $0.listingErrors) }
            listings = [
                "# HELP discfg_agent_listings_total Listings of the source's configs for --prefix.", "# TYPE discfg_agent_listings_total counter",
                "discfg_agent_listings_total \(count)",
                "# HELP discfg_agent_listing_errors_total Listings that failed (the configs held stay).", "# TYPE discfg_agent_listing_errors_total counter",
                "discfg_agent_listing_errors_total \(failed)",
            ]
        }
        return (lines + refreshes + errors + staleness + revisions + listings).joined(separator: "\n") + "\n"
    }
}
