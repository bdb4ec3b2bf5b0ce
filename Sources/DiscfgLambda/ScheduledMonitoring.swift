import DiscfgCore
import DiscfgJSON
import DiscfgSignals
import Foundation
import Logging
import Synchronization

/// The scheduled event's deployment work: one ``DeploymentMonitor`` pass over the
/// function's store, which records what the clock made COMPLETE or ROLLED_BACK and rolls
/// back a deployment whose signal reads unhealthy (on AWS a rule sends the event once a
/// minute; `deploy/template.yaml`).
///
/// A pass fits in its invocation: once less than ``margin`` of it is left, no further
/// config is read (the one being checked finishes, its change included), and the configs
/// left are counted; the next event checks them. The signal reader is made once per
/// execution environment and kept across invocations, with its connections.
struct ScheduledMonitoring: Sendable {
    let store: any ConfigStore
    let signals: SignalReader

    /// What one pass did.
    struct Summary: Encodable, Sendable {
        /// One transition recorded, or tried.
        struct Transition: Encodable, Sendable {
            var config: String
            var id: String
            var state: String
            var reason: String
            /// The revision of the change that recorded it; nil when it was not recorded.
            var revision: UInt64?
            /// Why it was not recorded.
            var failure: String?
        }

        var transitions: [Transition]
        /// Configs not read because the invocation's time was nearly up.
        var configsSkipped: Int
    }

    /// The time a config's check may take and still leave the function time to answer: a
    /// health probe's timeout (signals are read together), then one change, then the answer.
    var margin: Duration { signals.probe.configuration.timeout + .seconds(2) }

    /// One pass, over every config or only `configs` (those a stream batch brought health
    /// reports for), each action logged on a line of its own, bounded by `deadline`.
    func pass(over configs: [ConfigName]? = nil, deadline: ContinuousClock.Instant, logger: Logger) async -> Summary {
        let bounded = TimeBoundStore(base: store, stopAt: deadline - margin)
        let monitor = DeploymentMonitor(store: bounded, signals: signals)
        let actions = await Deadline.within(Deadline(deadline)) {
            if let configs { await monitor.pass(over: configs) } else { await monitor.pass() }
        }
        for action in actions {
            logger.log(level: action.revision == nil ? .warning : .info, "deployment monitor: \(action.description)")
        }
        let skipped = bounded.refusedConfigs
        let left = skipped.isEmpty ? "" : "; \(skipped.count) config(s) not checked, the invocation's time being nearly up: the next scheduled event checks them"
        logger.info("deployment monitor: \(actions.count) transition(s)\(left)")
        return Summary(
            transitions: actions.map { action in
                Summary.Transition(
                    config: action.config.rawValue, id: action.id, state: action.due.kind.rawValue, reason: action.due.reason,
                    revision: action.revision?.rawValue, failure: action.failure
                )
            },
            configsSkipped: skipped.count
        )
    }
}

/// A store whose config reads are refused from `stopAt` on, and counted: the monitor,
/// which skips a config it cannot read, then stops reading configs without being told.
/// Changes always go through, so a config whose check began is checked to its end.
final class TimeBoundStore: ConfigStore {
    let base: any ConfigStore
    let stopAt: ContinuousClock.Instant
    private let refused = Mutex<Set<ConfigName>>([])

    init(base: any ConfigStore, stopAt: ContinuousClock.Instant) {
        self.base = base
        self.stopAt = stopAt
    }

    /// The configs whose reads were refused.
    var refusedConfigs: Set<ConfigName> { refused.withLock { $0 } }

    private func admit(_ config: ConfigName) throws {
        guard ContinuousClock.now >= stopAt else { return }
        refused.withLock { _ = $0.insert(config) }
        throw DiscfgError(.unavailable, "config \"\(config)\" was not read: the invocation's time is nearly up", field: "timeout")
    }

    func listConfigs() async throws -> [ConfigInfo] { try await base.listConfigs() }
    func configInfo(_ name: ConfigName) async throws -> ConfigInfo {
        try admit(name)
        return try await base.configInfo(name)
    }
    func get(_ key: Key, in config: ConfigName, atRevision revision: Revision?) async throws -> Item? {
        try admit(config)
        return try await base.get(key, in: config, atRevision: revision)
    }
    func list(in config: ConfigName, _ query: ListQuery) async throws -> ListPage {
        try admit(config)
        return try await base.list(in: config, query)
    }
    func history(of key: Key, in config: ConfigName, _ query: HistoryQuery) async throws -> HistoryPage {
        try admit(config)
        return try await base.history(of: key, in: config, query)
    }
    func events(in config: ConfigName, scope: WatchScope, from: Revision, limit: Int, maxBytes: Int) async throws -> EventBatch {
        try admit(config)
        return try await base.events(in: config, scope: scope, from: from, limit: limit, maxBytes: maxBytes)
    }
    func watch(_ config: ConfigName, scope: WatchScope, from: Revision?) async -> AsyncThrowingStream<Event, any Error> {
        await base.watch(config, scope: scope, from: from)
    }
    func exportPages(_ config: ConfigName, maxBytes: Int, atRevision revision: Revision?) async throws -> SnapshotPages {
        try admit(config)
        return try await base.exportPages(config, maxBytes: maxBytes, atRevision: revision)
    }

    func createConfig(_ name: ConfigName, settings: ConfigSettings) async throws -> ConfigInfo { try await base.createConfig(name, settings: settings) }
    func deleteConfig(_ name: ConfigName) async throws { try await base.deleteConfig(name) }
    func updateConfig(_ name: ConfigName, _ patch: ConfigSettingsPatch) async throws -> ConfigInfo { try await base.updateConfig(name, patch) }
    func set(_ key: Key, to value: Data, in config: ConfigName, options: SetOptions) async throws -> Event {
        try await base.set(key, to: value, in: config, options: options)
    }
    func patch(_ key: Key, _ patch: ValuePatch, in config: ConfigName, conditions: [Condition]) async throws -> Event {
        try await base.patch(key, patch, in: config, conditions: conditions)
    }
    func putDocument(_ document: JSONValue, under prefix: KeyPrefix, in config: ConfigName, replace: Bool) async throws -> ImportResult {
        try await base.putDocument(document, under: prefix, in: config, replace: replace)
    }
    func setSchema(_ target: SchemaTarget, to schema: Data?, in config: ConfigName, force: Bool) async throws -> SchemaChange {
        try await base.setSchema(target, to: schema, in: config, force: force)
    }
    func changeDeployment(_ change: DeploymentChange, in config: ConfigName) async throws -> DeploymentOutcome {
        try await base.changeDeployment(change, in: config)
    }
    func reportHealth(_ report: HealthReport, deployment id: String, in config: ConfigName) async throws {
        try await base.reportHealth(report, deployment: id, in: config)
    }
    func healthReports(deployment id: String, in config: ConfigName) async throws -> [HealthReport] {
        try await base.healthReports(deployment: id, in: config)
    }
    func delete(_ key: Key, in config: ConfigName, conditions: [Condition]) async throws -> Event {
        try await base.delete(key, in: config, conditions: conditions)
    }
    func deletePrefix(_ prefix: KeyPrefix, in config: ConfigName) async throws -> [Event] { try await base.deletePrefix(prefix, in: config) }
    func compact(_ config: ConfigName, through revision: Revision) async throws -> ConfigInfo { try await base.compact(config, through: revision) }
    func transact(_ transaction: Transaction, in config: ConfigName) async throws -> TransactionResult { try await base.transact(transaction, in: config) }
    func importSnapshot(_ snapshot: ConfigSnapshot, into config: ConfigName, options: ImportOptions) async throws -> ImportResult {
        try await base.importSnapshot(snapshot, into: config, options: options)
    }
    func sweepExpired() async throws -> [Event] { try await base.sweepExpired() }
}

/// The answer to a scheduled event: `{"expired": N, "deployments": {"transitions": […], "configsSkipped": N}}`.
struct ScheduledAnswer: Encodable, Sendable {
    /// Keys the sweep expired.
    var expired: Int
    /// What the deployment monitor's pass did.
    var deployments: ScheduledMonitoring.Summary
}
