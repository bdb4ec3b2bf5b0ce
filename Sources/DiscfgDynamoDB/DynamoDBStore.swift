import DiscfgAWS
import DiscfgCore
import Foundation
import Synchronization

/// The DynamoDB store: many configs in one table, with the layout and algorithms of
/// DESIGN §3.
///
/// - get is one `GetItem` (a second one only when the key is missing, to tell a missing
///   key from a missing config); lists, history, events and export are `Query`s; nothing
///   on a request path ever `Scan`s.
/// - a change is a strongly consistent `BatchGetItem` of the config's meta item and the
///   keys it touches, the shared ``ChangeTransaction`` rules, then one
///   `TransactWriteItems` with a `ClientRequestToken` that moves the meta item from
///   lock L to L+1 (the optimistic lock), writes each key conditioned on its old
///   modRevision (or absence) and puts the history events. A lost race is retried with
///   full-jitter backoff; a failed user condition is `conditionFailed`. Nothing is ever
///   half-written.
/// - reads of the current state (`get`, `list`, `export`, `configInfo`, `listConfigs`)
///   are eventually consistent by default — half the read cost, and usually current
///   within a second — or strongly consistent with ``Configuration/consistentReads``
///   (`?consistent=true` in the store URL). Everything whose correctness depends on
///   it is always strongly consistent: the reads of a change, events for watchers,
///   history and reads at a past revision.
///
/// ```swift
/// let client = AWSJSONClient(configuration: .dynamoDB(region: "eu-west-1"), credentialProvider: CredentialChain.standard())
/// let store = DynamoDBStore(client: client, configuration: .init(table: "discfg"))
/// _ = try await store.createConfig(ConfigName("myapp"), settings: ConfigSettings()) // creates the table if missing
/// ```
public final class DynamoDBStore: ConfigStore {
    /// How the store uses its table.
    public struct Configuration: Sendable {
        /// The table holding every config (default `discfg`).
        public var table: String
        /// Strongly consistent reads of the current state (double the read cost).
        public var consistentReads: Bool
        /// Whether `createConfig` creates a missing table (with ``tableCapacity``).
        public var createTableIfMissing: Bool
        /// Billing of a table this store creates.
        public var tableCapacity: TableCapacity
        /// How often watchers poll the meta item for changes made by other processes (and
        /// expire due keys).
        public var pollInterval: Duration
        /// How many times a change that lost a race on the meta item is tried.
        public var maxChangeAttempts: Int
        /// Told about table creation and waiting.
        public var progress: @Sendable (String) -> Void

        /// Creates a configuration.
        public init(
            table: String = "discfg", consistentReads: Bool = false, createTableIfMissing: Bool = true,
            tableCapacity: TableCapacity = .onDemand, pollInterval: Duration = .milliseconds(500),
            maxChangeAttempts: Int = 12, progress: @escaping @Sendable (String) -> Void = { _ in }
        ) {
            self.table = table
            self.consistentReads = consistentReads
            self.createTableIfMissing = createTableIfMissing
            self.tableCapacity = tableCapacity
            self.pollInterval = pollInterval
            self.maxChangeAttempts = maxChangeAttempts
            self.progress = progress
        }
    }

    /// The client every call goes through; its ``AWSJSONClient/metrics`` count round
    /// trips and consumed capacity.
    public let client: AWSJSONClient
    /// How the store uses its table.
    public let configuration: Configuration
    /// The table, for creating, describing and resizing it.
    public let table: DynamoDBTable
    let connection: DynamoDBConnection
    let clock: any WallClock
    let notifier: ChangeNotifier
    let watched: WatchedConfigs
    /// Whether the table has the `byKey` index of tables made before key chains, once a
    /// read asked it (nil before).
    let keyIndex = Mutex<Bool?>(nil)
    /// Runs (once) between a change's reads and its commit; lets tests lose a race on purpose.
    let beforeCommit = Mutex<(@Sendable () async throws -> Void)?>(nil)
    /// Runs (once) when a ``BulkChange`` is staged and again when it is committed; a test's
    /// hook that throws stops the change there, as a writer that stops would.
    let afterBulkStep = Mutex<(@Sendable (BulkChange.State) async throws -> Void)?>(nil)
    /// Runs after each staging transaction of a ``BulkChange``, with its index; a test's hook
    /// that waits holds the writer up there.
    let afterStagingTransaction = Mutex<(@Sendable (Int) async -> Void)?>(nil)

    /// Creates a store on `client`'s region and endpoint. The caller owns the client and
    /// shuts it down.
    public init(client: AWSJSONClient, configuration: Configuration = Configuration(), clock: any WallClock = SystemClock()) {
        self.client = client
        self.configuration = configuration
        self.clock = clock
        let estimate = CapacityEstimate()
        estimatedCapacity = estimate
        connection = DynamoDBConnection(client: client, table: configuration.table, estimate: estimate)
        table = DynamoDBTable(connection: connection)
        let watched = WatchedConfigs()
        self.watched = watched
        notifier = ChangeNotifier(pollInterval: configuration.pollInterval) { await watched.poll() }
        watched.store.withLock { $0 = WeakStore(store: self) }
    }

    /// Round trips and reported capacity per DynamoDB operation.
    public var metrics: ConsumedCapacityRecorder { client.metrics }
    /// Capacity units computed from item sizes by DynamoDB's rules (see ``CapacityEstimate``).
    public let estimatedCapacity: CapacityEstimate

    public func createConfig(_ name: ConfigName, settings: ConfigSettings) async throws -> ConfigInfo {
        do {
            return try await insertConfig(name, settings: settings)
        } catch let error as DiscfgError where error.field == "table" && configuration.createTableIfMissing {
            try await table.ensure(capacity: configuration.tableCapacity, progress: configuration.progress)
            return try await insertConfig(name, settings: settings)
        }
    }

    private func insertConfig(_ name: ConfigName, settings: ConfigSettings) async throws -> ConfigInfo {
        if let existing = try await meta(name, consistent: true, includingDeleted: true) {
            guard existing.deleting else { throw DiscfgError(.configExists, "config \"\(name)\" already exists", field: "config") }
            // Finish a deletion that was interrupted, so the new config starts from nothing.
            try await purge(name)
        }
        let now = clock.now()
        let meta = ConfigMeta(info: ConfigInfo(name: name, revision: .zero, createdAt: now, modifiedAt: now, settings: settings))
        var registry = DynamoDBLayout.registryKey(name)
        registry[.created] = .number(now.milliseconds)
        // The token stays on the meta item until its next rewrite: a retry refused because
        // its own first attempt landed (an answer lost in the network) can tell so.
        let token = UUID().uuidString
        var attributes = meta.attributes
        attributes[.transactionToken] = .s(token)
        let actions: [WriteAction] = [
            .put(attributes, condition: .itemAbsent),
            .put(registry, condition: nil),
        ]
        do {
            try await transactWrite(actions, token: token)
        } catch let error as AWSError where error.code == .transactionCanceled {
            let created = error.mayHaveApplied
                ? try? await connection.getItem(DynamoDBLayout.metaKey(name), consistent: true)
                : nil
            guard let created, created[.transactionToken]?.string == token else {
                throw DiscfgError(.configExists, "config \"\(name)\" already exists", field: "config")
            }
        } catch {
            throw connection.mapped(error, operation: "TransactWriteItems")
        }
        watched.forget(name)
        remember(name, .zero)
        return meta.info
    }

    public func deleteConfig(_ name: ConfigName) async throws {
        var attempt = 0
        while true {
            guard var meta = try await meta(name, consistent: true, includingDeleted: true) else { throw DiscfgError.configNotFound(name) }
            if meta.deleting {
                try await purge(name)
                throw DiscfgError.configNotFound(name)
            }
            // Mark it first: from now on no change can commit (they are conditioned on the
            // lock) and no reader sees the config; then remove the items, the meta item last.
            let lock = meta.lock
            meta.deleting = true
            meta.lock += 1
            do {
                try await putMeta(meta, expectedLock: lock)
                break
            } catch let error as AWSError where error.code == .conditionalCheckFailed {
                attempt += 1
                try await raceBackoff(attempt, config: name)
            }
        }
        try await purge(name)
        watched.forget(name)
        notifier.deleted(name)
    }

    /// Deletes every item of a config whose meta item is marked `deleting`, the meta
    /// item and registry entry last.
    func purge(_ name: ConfigName) async throws {
        for pk in [name.rawValue, DynamoDBLayout.historyPK(name), DynamoDBLayout.tombstonePK(name), DynamoDBLayout.leasePK(name), DynamoDBLayout.healthPK(name)] {
            var query = QueryInput(table: connection.table, key: .partition(pk), consistent: true)
            query.project([.pk, .sk])
            while true {
                let page = try await connection.queryPage(query)
                let keys = (page.Items ?? []).filter { $0[.sk]?.string != DynamoDBLayout.metaSK || pk != name.rawValue }
                try await connection.batchDelete(keys)
                guard let next = page.LastEvaluatedKey else { break }
                query.ExclusiveStartKey = next
            }
        }
        try await connection.batchDelete([DynamoDBLayout.key(DynamoDBLayout.registryPK, name.rawValue), DynamoDBLayout.metaKey(name)])
    }

    public func updateConfig(_ name: ConfigName, _ patch: ConfigSettingsPatch) async throws -> ConfigInfo {
        try patch.checkAlarms()
        if let quota = patch.quotaBytes, quota != ConfigSettingsPatch.removeQuota {
            // A quota needs the config's size: count a config from before sizes were kept.
            try await countKeysAndBytes(name)
        }
        let (old, written) = try await rewriteMeta(name) { old in
            var meta = old
            let now = clock.now()
            meta.info.settings = patch.applied(to: old.info.settings)
            meta.info.modifiedAt = now
            try await compact(&meta, now: now, exact: true)
            meta.purgedRevision = max(meta.purgedRevision, meta.info.compactedRevision)
            if old.info.settings.history != meta.info.settings.history, case .days = meta.info.settings.history {
                meta.overflowRevisions = []
                meta.sharedRevisions = [:]
            }
            return meta
        }
        guard let meta = written else { return old.info }
        // Physical clean-up after the commit; readers already ignore what it removes.
        try await deleteHistory(name, from: old.purgedRevision.next, through: meta.info.compactedRevision)
        if old.info.settings.history != meta.info.settings.history {
            try await retimeHistory(name, after: meta.info.compactedRevision, retention: meta.info.settings.history)
        }
        notifier.notify(name)
        return meta.info
    }

    /// Moves the meta item's compacted revision (conditioned on its lock), then deletes
    /// the history items it let go; readers ignore them from the first step on.
    public func compact(_ name: ConfigName, through revision: Revision) async throws -> ConfigInfo {
        let (old, written) = try await rewriteMeta(name) { old in
            guard revision <= old.info.revision else { throw Self.futureCompaction(revision, config: name, current: old.info.revision) }
            guard revision > old.info.compactedRevision else { return nil }
            var meta = old
            meta.info.compactedRevision = revision
            meta.purgedRevision = max(meta.purgedRevision, revision)
            meta.overflowRevisions = meta.overflowRevisions.filter { $0 > revision.rawValue }
            meta.sharedRevisions = meta.sharedRevisions.filter { $0.key > revision.rawValue }
            return meta
        }
        guard let meta = written else { return old.info }
        try await deleteHistory(name, from: old.purgedRevision.next, through: revision)
        notifier.notify(name)
        return meta.info
    }

    /// Replaces the config's meta item with what `change` makes of it (nil: nothing to
    /// write), conditioned on the lock it was read with and moving the lock on; a change
    /// that lost a race reads the item again and retries. Returns the item as read and,
    /// when written, as written.
    private func rewriteMeta(
        _ name: ConfigName, _ change: (ConfigMeta) async throws -> ConfigMeta?
    ) async throws -> (old: ConfigMeta, new: ConfigMeta?) {
        var attempt = 0
        while true {
            guard let old = try await meta(name, consistent: true) else { throw DiscfgError.configNotFound(name) }
            guard var meta = try await change(old) else { return (old, nil) }
            meta.lock = old.lock + 1
            do {
                try await putMeta(meta, expectedLock: old.lock)
                return (old, meta)
            } catch let error as AWSError where error.code == .conditionalCheckFailed {
                attempt += 1
                try await raceBackoff(attempt, config: name)
            }
        }
    }

    public func listConfigs() async throws -> [ConfigInfo] {
        let registry = try await connection.queryAll(QueryInput(
            table: connection.table, key: .partition(DynamoDBLayout.registryPK), consistent: configuration.consistentReads
        ))
        let names = registry.compactMap { $0[.sk]?.string.flatMap { try? ConfigName($0) } }
        let metas = try await connection.batchGet(names.map(DynamoDBLayout.metaKey), consistent: configuration.consistentReads)
        return metas.compactMap(ConfigMeta.init).filter { !$0.deleting }.map(\.info).sorted { $0.name < $1.name }
    }

    public func configInfo(_ name: ConfigName) async throws -> ConfigInfo {
        guard let meta = try await meta(name, consistent: configuration.consistentReads) else { throw DiscfgError.configNotFound(name) }
        return meta.info
    }

    // MARK: - Shared plumbing

    /// The config's meta item; nil when it does not exist (or is being deleted, unless asked).
    func meta(_ name: ConfigName, consistent: Bool, includingDeleted: Bool = false) async throws -> ConfigMeta? {
        guard let attributes = try await connection.getItem(DynamoDBLayout.metaKey(name), consistent: consistent),
              let meta = ConfigMeta(attributes), includingDeleted || !meta.deleting
        else { return nil }
        remember(name, meta.info.revision)
        return meta
    }

    /// Writes the whole meta item if its lock is still `expectedLock`; throws the raw
    /// ``AWSError`` for a lost race so callers can retry.
    func putMeta(_ meta: ConfigMeta, expectedLock: UInt64) async throws {
        let input = PutItemInput(
            table: connection.table, item: meta.attributes,
            condition: Expression("\(.lock) = :lock", values: [":lock": .number(expectedLock)])
        )
        do {
            _ = try await connection.raw("PutItem", input, as: IgnoredOutput.self)
        } catch let error as AWSError where error.code == .conditionalCheckFailed {
            throw error
        } catch {
            throw connection.mapped(error, operation: "PutItem")
        }
    }

    /// One `TransactWriteItems` call with a client request token, fresh unless given (the
    /// same token is sent again when the client retries a throttled or failed attempt, so
    /// a retry of a transaction that did commit is not applied twice). Throws the raw
    /// ``AWSError``.
    func transactWrite(_ actions: [WriteAction], token: String = UUID().uuidString) async throws {
        let input = TransactWriteItemsInput(TransactItems: actions, ClientRequestToken: token)
        _ = try await connection.raw("TransactWriteItems", input, as: IgnoredOutput.self)
        estimatedCapacity.record("TransactWriteItems", write: actions.reduce(0) { $0 + CapacityEstimate.transactionalWriteUnits($1) })
    }

    /// Waits before retrying a change that lost a race, or gives up.
    func raceBackoff(_ attempt: Int, config: ConfigName) async throws {
        guard attempt < configuration.maxChangeAttempts else {
            throw DiscfgError(.unavailable, "config \"\(config)\" is being changed by others so often that this change lost the race \(attempt) times; try again")
        }
        let policy = client.configuration.retryPolicy
        let delay = policy.delay(forRetry: min(attempt - 1, 6))
        // Nothing was changed yet: past the request's deadline, say so rather than wait.
        if let deadline = Deadline.current, ContinuousClock.now + delay >= deadline.instant { throw Deadline.exceeded("this change") }
        try await policy.sleep(delay)
    }

    /// Records the newest revision this process has seen of a config, so `watch` can pin
    /// "now" without a round trip.
    func remember(_ name: ConfigName, _ revision: Revision) {
        watched.known.withLock { known in
            if let seen = known[name], seen >= revision { return }
            known[name] = revision
        }
    }
}
