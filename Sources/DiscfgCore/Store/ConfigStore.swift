import Foundation
import DiscfgJSON

/// The one interface every writable store implements: the embedded SQLite file,
/// DynamoDB, a remote discfg server, and memory. Every face (CLI, HTTP server, Lambda)
/// talks to a `ConfigStore`, reading through what it inherits from ``ConfigReading``, so
/// every feature works on every store; `StoreConformanceTests` holds each store to the
/// same behaviour.
///
/// Every change advances the config's revision by one and is recorded as an ``Event``;
/// a ``Transaction``'s changes share one revision.
///
/// ```swift
/// let store = try SQLiteStore(path: "/tmp/discfg.db")
/// let app = try ConfigName("myapp")
/// _ = try await store.createConfig(app, settings: ConfigSettings())
/// let change = try await store.set(Key("/db/host"), to: Data("db1".utf8), in: app)
/// print(change.revision) // 1
/// ```
public protocol ConfigStore: ConfigReading {
    /// Creates a config. Throws `configExists` if the name is taken.
    func createConfig(_ name: ConfigName, settings: ConfigSettings) async throws -> ConfigInfo
    /// Deletes a config with all its keys and history. Throws `configNotFound`.
    func deleteConfig(_ name: ConfigName) async throws
    /// Changes some settings of a config and returns the result.
    func updateConfig(_ name: ConfigName, _ patch: ConfigSettingsPatch) async throws -> ConfigInfo
    /// Sets a key's value if every condition holds, at a new revision.
    /// Throws `conditionFailed` (carrying the current item) and changes nothing otherwise.
    func set(_ key: Key, to value: Data, in config: ConfigName, options: SetOptions) async throws -> Event
    /// Patches a key's JSON value inside the store's change transaction, if every
    /// condition holds, keeping its content type and TTL. Throws `keyNotFound` when it is
    /// absent, `conditionFailed` (carrying the current item) when a condition does not
    /// hold, `patchFailed` when the patch does not apply, `schemaViolation` when the
    /// result breaks a schema; nothing changes then.
    func patch(_ key: Key, _ patch: ValuePatch, in config: ConfigName, conditions: [Condition]) async throws -> Event
    /// Writes a document as the keys under a prefix in one transaction at one revision
    /// (see ``KeyDocument``): only keys whose value changes, and with `replace` deletes of
    /// the keys under it the document lacks.
    func putDocument(_ document: JSONValue, under prefix: KeyPrefix, in config: ConfigName, replace: Bool) async throws -> ImportResult
    /// Attaches a JSON Schema to a key or a prefix's document, or removes it (nil).
    /// Refused with `schemaViolation` when what it covers breaks it, unless `force`.
    func setSchema(_ target: SchemaTarget, to schema: Data?, in config: ConfigName, force: Bool) async throws -> SchemaChange
    /// Starts a staged deployment, or records a transition of one, as one change
    /// (``ChangeTransaction/changeDeployment(_:)`` says what each does).
    func changeDeployment(_ change: DeploymentChange, in config: ConfigName) async throws -> DeploymentOutcome
    /// Keeps `report`, replacing its reporter's earlier one unless that one is newer, for
    /// deployment `id` while it runs. Reports are kept apart from keys and history: they
    /// make no revision and no event, and deleting the config deletes them.
    /// - Throws: `configNotFound`; `invalidArgument` for an id that is not a deployment's;
    ///   `keyNotFound` when no deployment `id` runs; `tooLarge` for a new reporter past
    ///   ``HealthReport/maxReporters``.
    func reportHealth(_ report: HealthReport, deployment id: String, in config: ConfigName) async throws
    /// The reports kept for deployment `id`, one per reporter, in reporter order (none for
    /// a deployment nobody reported on). Throws `configNotFound`.
    func healthReports(deployment id: String, in config: ConfigName) async throws -> [HealthReport]
    /// Deletes a key if every condition holds. Throws `keyNotFound` when it is absent.
    func delete(_ key: Key, in config: ConfigName, conditions: [Condition]) async throws -> Event
    /// Deletes every key under a prefix atomically as one change: one new revision that
    /// every removal carries, in key order.
    func deletePrefix(_ prefix: KeyPrefix, in config: ConfigName) async throws -> [Event]
    /// Drops the config's history at or below `revision`, as etcd's compaction does:
    /// reads before it and watches from it then throw `compacted`. A revision at or below
    /// the compacted one changes nothing; returns the config as it is afterwards.
    /// Throws `invalidArgument` for a revision the config has not reached.
    func compact(_ config: ConfigName, through revision: Revision) async throws -> ConfigInfo
    /// Runs a multi-key transaction atomically (see ``Transaction``): every change it
    /// makes carries one new revision. Throws `invalidArgument` for a malformed
    /// transaction and `tooLarge` for one the store cannot hold in one commit; either way
    /// nothing changes.
    func transact(_ transaction: Transaction, in config: ConfigName) async throws -> TransactionResult
    /// Writes a snapshot's items into a config as one change: one transaction, one new
    /// revision that every changed key carries; unchanged keys are skipped. The options
    /// say what else it deletes (a replace), on what condition, and whether it only
    /// works the change out (a dry run writes nothing).
    func importSnapshot(_ snapshot: ConfigSnapshot, into config: ConfigName, options: ImportOptions) async throws -> ImportResult
    /// Removes keys whose TTL ran out, each as one `expire` event at a new revision.
    /// Returns the events it made; a key is expired exactly once, however many sweepers run.
    func sweepExpired() async throws -> [Event]
}

extension ConfigStore {
    /// The error for compacting past the config's revision.
    public static func futureCompaction(_ revision: Revision, config: ConfigName, current: Revision) -> DiscfgError {
        DiscfgError.invalid("revision", "config \"\(config)\" is at revision \(current); it cannot be compacted through revision \(revision)")
    }

    /// Patches through ``transact(_:in:)``: the conditions as comparisons, the patch as
    /// the one operation, and the key read back when a condition fails.
    public func patch(_ key: Key, _ patch: ValuePatch, in config: ConfigName, conditions: [Condition]) async throws -> Event {
        let transaction = Transaction(compares: conditions.map { $0.comparison(key) }, success: [.patch(key, patch)], failure: [.get(key)])
        let result = try await transact(transaction, in: config)
        guard result.succeeded, case .put(let event)? = result.responses.first else {
            let current: Item? = if case .get(let items)? = result.responses.first { items.first } else { nil }
            try conditions.check(against: current, key: key)
            throw DiscfgError(.conditionFailed, "condition failed for \(key)", field: "condition", currentItem: current)
        }
        return event
    }

    /// Imports a snapshot; with `replace`, deletes the keys it does not name (schemas
    /// aside).
    public func importSnapshot(_ snapshot: ConfigSnapshot, into config: ConfigName, replace: Bool) async throws -> ImportResult {
        try await importSnapshot(snapshot, into: config, options: ImportOptions(replace: replace))
    }

    /// Sets a key with no conditions and no TTL.
    public func set(_ key: Key, to value: Data, in config: ConfigName) async throws -> Event {
        try await set(key, to: value, in: config, options: SetOptions())
    }
}

/// How a value is set.
public struct SetOptions: Hashable, Sendable {
    /// Every condition must hold for the set to happen.
    public var conditions: [Condition]
    /// Seconds until the key expires; nil for never. A set without a TTL clears any
    /// earlier one.
    public var ttlSeconds: Int64?
    /// The value's media type, kept with it and returned by raw reads.
    public var contentType: String?

    /// Creates options.
    public init(conditions: [Condition] = [], ttlSeconds: Int64? = nil, contentType: String? = nil) {
        self.conditions = conditions
        self.ttlSeconds = ttlSeconds
        self.contentType = contentType
    }

    /// Checks the TTL and content type.
    public func validate() throws {
        if let ttlSeconds { try Limits.validateTTL(seconds: ttlSeconds) }
        if let contentType { try Limits.validateContentType(contentType) }
    }
}

/// What an import did.
public struct ImportResult: Hashable, Sendable {
    /// The changes it made, oldest first.
    public var events: [Event]
    /// Keys whose value was already the same, left alone.
    public var unchanged: Int
    /// The config's revision afterwards.
    public var revision: Revision

    /// Creates a result.
    public init(events: [Event], unchanged: Int, revision: Revision) {
        self.events = events
        self.unchanged = unchanged
        self.revision = revision
    }
}
