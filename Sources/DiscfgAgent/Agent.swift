import DiscfgCore
import Foundation
import Logging

/// `discfg agent`'s parts put together: a ``ReplicaStore`` of the configs, a
/// ``ConfigFollower`` each, and, with a cache directory, the last known good copies.
///
/// ```swift
/// let agent = Agent(source: StoreSource(store, description: "dynamodb:///discfg"), configs: [app], interval: .seconds(15))
/// try await agent.load()
/// Task { await agent.run() }   // serve agent.replica meanwhile
/// ```
public final class Agent: Sendable {
    /// The copies, as a store to serve.
    public let replica: ReplicaStore
    /// One follower per config, in the order given.
    public let followers: [ConfigFollower]
    /// How often each follower checks its source.
    public let interval: Duration
    private let cache: SnapshotCache?
    private let logger: Logger

    /// Creates an agent; nothing is read until ``load()``.
    public init(
        source: any AgentSource, configs: [ConfigName], interval: Duration, cache: SnapshotCache? = nil, clock: AgentClock = .continuous,
        deadline: Duration = .seconds(10), logger: Logger = Logger(label: "discfg.agent")
    ) {
        let replica = ReplicaStore(source: source.description, configs: configs)
        self.replica = replica
        self.interval = interval
        self.cache = cache
        self.logger = logger
        followers = configs.map { config in
            ConfigFollower(config: config, source: source, replica: replica, clock: clock, deadline: deadline, logger: logger) { snapshot in
                guard let cache else { return }
                do { try cache.write(snapshot) } catch {
                    logger.error("could not keep the copy on disk", metadata: ["config": "\(config)", "error": "\(error)"])
                }
            }
        }
    }

    /// Loads every config from the source, or, when the source fails, from the cache.
    /// - Throws: `unavailable` naming the configs that neither could give.
    public func load() async throws {
        var missing: [String] = []
        for follower in followers {
            if case .failed(let reason) = await follower.refresh() {
                if let copy = cachedCopy(follower.config) {
                    replica.install(copy)
                    logger.warning("serving the copy on disk until the source answers", metadata: ["config": "\(follower.config)", "revision": "\(copy.revision)"])
                } else {
                    missing.append("\"\(follower.config)\" (\(reason))")
                }
            }
        }
        guard missing.isEmpty else {
            throw DiscfgError(.unavailable, "could not load \(missing.joined(separator: ", ")) from \(replica.source), and no copy on disk")
        }
    }

    /// Follows every config until the task is cancelled.
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            for follower in followers {
                group.addTask { await follower.run(every: self.interval) }
            }
        }
    }

    private func cachedCopy(_ config: ConfigName) -> PublishedSnapshot? {
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
        return (lines + refreshes + errors + staleness + revisions).joined(separator: "\n") + "\n"
    }
}
