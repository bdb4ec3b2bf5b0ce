import DiscfgCore
import DiscfgJSON
import Foundation

/// A store that passes every call to another: tests that change one behaviour of a real
/// store (drop a set's conditions, land another writer's change first, hold the watch
/// back) conform, name the store behind them, and implement only what they change.
///
/// ```swift
/// struct IgnoresConditions: ForwardingStore {
///     let base: MemoryStore
///     var forwardee: any ConfigStore { base }
///     func set(_ key: Key, to value: Data, in config: ConfigName, options: SetOptions) async throws -> Event { … }
/// }
/// ```
public protocol ForwardingStore: ConfigStore {
    /// Where every call the conformer does not implement goes.
    var forwardee: any ConfigStore { get }
}

extension ForwardingStore {
    public func createConfig(_ name: ConfigName, settings: ConfigSettings) async throws -> ConfigInfo { try await forwardee.createConfig(name, settings: settings) }
    public func deleteConfig(_ name: ConfigName) async throws { try await forwardee.deleteConfig(name) }
    public func updateConfig(_ name: ConfigName, _ patch: ConfigSettingsPatch) async throws -> ConfigInfo { try await forwardee.updateConfig(name, patch) }
    public func listConfigs() async throws -> [ConfigInfo] { try await forwardee.listConfigs() }
    public func configInfo(_ name: ConfigName) async throws -> ConfigInfo { try await forwardee.configInfo(name) }
    public func get(_ key: Key, in config: ConfigName, atRevision revision: Revision?) async throws -> Item? {
        try await forwardee.get(key, in: config, atRevision: revision)
    }
    public func list(in config: ConfigName, _ query: ListQuery) async throws -> ListPage { try await forwardee.list(in: config, query) }
    public func set(_ key: Key, to value: Data, in config: ConfigName, options: SetOptions) async throws -> Event {
        try await forwardee.set(key, to: value, in: config, options: options)
    }
    public func delete(_ key: Key, in config: ConfigName, conditions: [Condition]) async throws -> Event {
        try await forwardee.delete(key, in: config, conditions: conditions)
    }
    public func deletePrefix(_ prefix: KeyPrefix, in config: ConfigName) async throws -> [Event] { try await forwardee.deletePrefix(prefix, in: config) }
    public func patch(_ key: Key, _ patch: ValuePatch, in config: ConfigName, conditions: [Condition]) async throws -> Event {
        try await forwardee.patch(key, patch, in: config, conditions: conditions)
    }
    public func putDocument(_ document: JSONValue, under prefix: KeyPrefix, in config: ConfigName, replace: Bool) async throws -> ImportResult {
        try await forwardee.putDocument(document, under: prefix, in: config, replace: replace)
    }
    public func setSchema(_ target: SchemaTarget, to schema: Data?, in config: ConfigName, force: Bool) async throws -> SchemaChange {
        try await forwardee.setSchema(target, to: schema, in: config, force: force)
    }
    public func changeDeployment(_ change: DeploymentChange, in config: ConfigName) async throws -> DeploymentOutcome {
        try await forwardee.changeDeployment(change, in: config)
    }
    public func reportHealth(_ report: HealthReport, deployment id: String, in config: ConfigName) async throws {
        try await forwardee.reportHealth(report, deployment: id, in: config)
    }
    public func healthReports(deployment id: String, in config: ConfigName) async throws -> [HealthReport] {
        try await forwardee.healthReports(deployment: id, in: config)
    }
    public func compact(_ config: ConfigName, through revision: Revision) async throws -> ConfigInfo { try await forwardee.compact(config, through: revision) }
    public func transact(_ transaction: Transaction, in config: ConfigName) async throws -> TransactionResult { try await forwardee.transact(transaction, in: config) }
    public func history(of key: Key, in config: ConfigName, _ query: HistoryQuery) async throws -> HistoryPage {
        try await forwardee.history(of: key, in: config, query)
    }
    public func events(in config: ConfigName, scope: WatchScope, from: Revision, limit: Int, maxBytes: Int) async throws -> EventBatch {
        try await forwardee.events(in: config, scope: scope, from: from, limit: limit, maxBytes: maxBytes)
    }
    public func watch(_ config: ConfigName, scope: WatchScope, from: Revision?) async -> AsyncThrowingStream<Event, any Error> {
        await forwardee.watch(config, scope: scope, from: from)
    }
    public func exportPages(_ config: ConfigName, maxBytes: Int, atRevision revision: Revision?) async throws -> SnapshotPages {
        try await forwardee.exportPages(config, maxBytes: maxBytes, atRevision: revision)
    }
    public func importSnapshot(_ snapshot: ConfigSnapshot, into config: ConfigName, options: ImportOptions) async throws -> ImportResult {
        try await forwardee.importSnapshot(snapshot, into: config, options: options)
    }
    public func sweepExpired() async throws -> [Event] { try await forwardee.sweepExpired() }
}
