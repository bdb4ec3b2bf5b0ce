import Foundation
import DiscfgJSON

/// The one interface every store implements: the embedded SQLite file, DynamoDB, a
/// remote discfg server, and memory. Every face (CLI, HTTP server, Lambda) talks to a
/// `ConfigStore`, so every feature works on every store; `StoreConformanceTests` holds
/// each store to the same behaviour.
///
/// Reads never return an expired item. Every change advances the config's revision by
/// one and is recorded as an ``Event``; a ``Transaction``'s changes share one revision.
///
/// ```swift
/// let store = try SQLiteStore(path: "/tmp/discfg.db")
/// let app = try ConfigName("myapp")
/// _ = try await store.createConfig(app, settings: ConfigSettings())
/// let change = try await store.set(Key("/db/host"), to: Data("db1".utf8), in: app)
/// print(change.revision) // 1
/// ```
public protocol ConfigStore: Sendable {
    /// Creates a config. Throws `configExists` if the name is taken.
    func createConfig(_ name: ConfigName, settings: ConfigSettings) async throws -> ConfigInfo
    /// Deletes a config with all its keys and history. Throws `configNotFound`.
    func deleteConfig(_ name: ConfigName) async throws
    /// Changes some settings of a config and returns the result.
    func updateConfig(_ name: ConfigName, _ patch: ConfigSettingsPatch) async throws -> ConfigInfo
    /// All configs, sorted by name.
    func listConfigs() async throws -> [ConfigInfo]
    /// One config's revision, times and settings. Throws `configNotFound`.
    func configInfo(_ name: ConfigName) async throws -> ConfigInfo

    /// The item at `key`, or nil when it does not exist or has expired.
    /// - Parameter revision: read the key as it was at this past revision; throws
    ///   `compacted` when that history is gone, `invalidArgument` for a future revision.
    func get(_ key: Key, in config: ConfigName, atRevision revision: Revision?) async throws -> Item?
    /// One page of the keys under a prefix, in key order.
    func list(in config: ConfigName, _ query: ListQuery) async throws -> ListPage

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
    /// Deletes a key if every condition holds. Throws `keyNotFound` when it is absent.
    func delete(_ key: Key, in config: ConfigName, conditions: [Condition]) async throws -> Event
    /// Deletes every key under a prefix atomically, one revision per key, in key order.
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

    /// A key's past changes, newest first.
    func history(of key: Key, in config: ConfigName, _ query: HistoryQuery) async throws -> HistoryPage
    /// The config's events from a revision on, oldest first, for watchers and long polls.
    /// At most `limit` events, and no more than `maxBytes` of keys, values and previous
    /// values (see ``PageBudget``; at least one event), except that a batch never splits a
    /// revision: the events of one transaction always arrive together (``EventPage``). Throws `compacted` when `from` is
    /// at or below the compacted revision.
    func events(in config: ConfigName, scope: WatchScope, from: Revision, limit: Int, maxBytes: Int) async throws -> EventBatch
    /// Follows a config's changes as they happen.
    /// - Parameter from: the first revision to deliver; nil means changes after now, where
    ///   "now" is pinned before this returns, so a change made right after is delivered.
    /// The sequence ends when the consuming task is cancelled, or with an error when the
    /// config does not exist or is deleted, or the start revision was compacted.
    func watch(_ config: ConfigName, scope: WatchScope, from: Revision?) async -> AsyncThrowingStream<Event, any Error>

    /// Every live item of a config at one revision, read page by page so an export of
    /// any size holds about one page in memory.
    ///
    /// The config is read (and `configNotFound` thrown) before this returns; the pages
    /// are read as they are asked for. They hold the items in key order, each page about
    /// `maxBytes` of keys and values (see ``PageBudget``), and together exactly the
    /// config's live items at ``SnapshotPages/header``'s revision, even while it changes.
    /// A store without read snapshots rebuilds keys changed meanwhile from history, and
    /// its pages throw `compacted` when that history is gone rather than mix revisions.
    ///
    /// With `revision`, the items as they were at that past revision (at most the
    /// config's; `compacted` below its retained history), expired or not then.
    func exportPages(_ config: ConfigName, maxBytes: Int, atRevision revision: Revision?) async throws -> SnapshotPages
    /// Writes a snapshot's items into a config in one transaction, one revision per
    /// changed key; unchanged keys are skipped. With `replace`, keys not in the snapshot
    /// are deleted.
    func importSnapshot(_ snapshot: ConfigSnapshot, into config: ConfigName, replace: Bool) async throws -> ImportResult

    /// Removes keys whose TTL ran out, each as one `expire` event at a new revision.
    /// Returns the events it made; a key is expired exactly once, however many sweepers run.
    func sweepExpired() async throws -> [Event]
}

extension ConfigStore {
    /// The error for compacting past the config's revision.
    public static func futureCompaction(_ revision: Revision, config: ConfigName, current: Revision) -> DiscfgError {
        DiscfgError.invalid("revision", "config \"\(config)\" is at revision \(current); it cannot be compacted through revision \(revision)")
    }

    /// The current item at `key`, or nil.
    public func get(_ key: Key, in config: ConfigName) async throws -> Item? {
        try await get(key, in: config, atRevision: nil)
    }

    /// The config's live items now, page by page (``exportPages(_:maxBytes:atRevision:)``).
    public func exportPages(_ config: ConfigName, maxBytes: Int) async throws -> SnapshotPages {
        try await exportPages(config, maxBytes: maxBytes, atRevision: nil)
    }

    /// The config's events from a revision on, at most ``Limits/maxPageBytes`` of them.
    public func events(in config: ConfigName, scope: WatchScope, from: Revision, limit: Int) async throws -> EventBatch {
        try await events(in: config, scope: scope, from: from, limit: limit, maxBytes: Limits.maxPageBytes)
    }

    /// Every live item of a config at one revision, gathered whole from
    /// ``exportPages(_:maxBytes:)``: for small configs and callers that need all of it
    /// at once (env files); prefer the pages.
    public func export(_ config: ConfigName) async throws -> ConfigSnapshot {
        let pages = try await exportPages(config, maxBytes: Limits.maxPageBytes)
        var items: [ConfigSnapshot.Entry] = []
        for try await page in pages { items += page }
        return ConfigSnapshot(config: pages.header.config, revision: pages.header.revision, exportedAt: pages.header.exportedAt, items: items)
    }

    /// Every item under `prefix`, following the list's cursor to the end, and the revision
    /// of the first page. Pages may come from successive revisions, so a reader that
    /// keeps the items current watches from the revision after the one returned: the
    /// changes it then replays bring every page to the same, latest, revision.
    public func items(in config: ConfigName, under prefix: KeyPrefix = .root) async throws -> (items: [Item], revision: Revision) {
        var items: [Item] = []
        var cursor: String?
        var revision: Revision?
        repeat {
            let page = try await list(in: config, ListQuery(prefix: prefix, recursive: true, limit: Limits.maxPageSize, cursor: cursor))
            items += page.items
            revision = revision ?? page.revision
            cursor = page.nextCursor
        } while cursor != nil
        return (items, revision ?? .zero)
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

    /// The config's schemas, by target.
    public func schemas(in config: ConfigName) async throws -> [(target: SchemaTarget, item: Item)] {
        try await items(in: config, under: SchemaTarget.namespace).items.compactMap { item in
            SchemaTarget(storageKey: item.key).map { ($0, item) }
        }
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

/// Which keys a list returns.
public struct ListQuery: Hashable, Sendable {
    /// The directory to list.
    public var prefix: KeyPrefix
    /// All keys below the prefix, or only its direct children (deeper keys are then
    /// summarized as sub-prefixes, like `ls`).
    public var recursive: Bool
    /// The most entries (keys plus sub-prefixes) in one page.
    public var limit: Int
    /// Continue after this entry: the `nextCursor` of the previous page.
    public var cursor: String?
    /// The most bytes of keys and values the store reads for one page (see
    /// ``PageBudget``); a page holds at least one entry, however large.
    public var maxBytes: Int

    /// Creates a query.
    public init(
        prefix: KeyPrefix = .root, recursive: Bool = true, limit: Int = Limits.defaultPageSize, cursor: String? = nil,
        maxBytes: Int = Limits.maxPageBytes
    ) {
        self.prefix = prefix
        self.recursive = recursive
        self.limit = limit
        self.cursor = cursor
        self.maxBytes = maxBytes
    }
}

/// One page of a listing.
public struct ListPage: Hashable, Sendable {
    /// The keys, in key order.
    public var items: [Item]
    /// For a non-recursive list: the sub-directories that hold deeper keys.
    public var prefixes: [KeyPrefix]
    /// The config's revision when the page was read.
    public var revision: Revision
    /// Pass as ``ListQuery/cursor`` to get the next page; nil on the last page.
    public var nextCursor: String?

    /// Creates a page.
    public init(items: [Item], prefixes: [KeyPrefix] = [], revision: Revision, nextCursor: String?) {
        self.items = items
        self.prefixes = prefixes
        self.revision = revision
        self.nextCursor = nextCursor
    }
}

/// Which past versions of a key to return.
public struct HistoryQuery: Hashable, Sendable {
    /// The most events in one page.
    public var limit: Int
    /// Only events before this revision (the `nextBefore` of the previous page).
    public var before: Revision?
    /// The most bytes of keys, values and previous values the store reads for one page
    /// (see ``PageBudget``); a page holds at least one event, however large.
    public var maxBytes: Int

    /// Creates a query.
    public init(limit: Int = Limits.defaultPageSize, before: Revision? = nil, maxBytes: Int = Limits.maxPageBytes) {
        self.limit = limit
        self.before = before
        self.maxBytes = maxBytes
    }
}

/// One page of a key's history.
public struct HistoryPage: Hashable, Sendable {
    /// The events, newest first.
    public var events: [Event]
    /// Pass as ``HistoryQuery/before`` for older events; nil when there are none.
    public var nextBefore: Revision?
    /// History at or below this revision has been dropped.
    public var compactedRevision: Revision

    /// Creates a page.
    public init(events: [Event], nextBefore: Revision?, compactedRevision: Revision) {
        self.events = events
        self.nextBefore = nextBefore
        self.compactedRevision = compactedRevision
    }
}

/// Which keys a watch follows.
public enum WatchScope: Hashable, Sendable, CustomStringConvertible {
    /// One key.
    case key(Key)
    /// Every key under a prefix (`.prefix(.root)` for the whole config).
    case prefix(KeyPrefix)

    /// Whether an event on `key` is in scope.
    public func matches(_ key: Key) -> Bool {
        switch self {
        case .key(let watched): watched == key
        case .prefix(let prefix): prefix.contains(key)
        }
    }

    public var description: String {
        switch self {
        case .key(let key): key.path
        case .prefix(let prefix): prefix.path
        }
    }
}

/// Events read from a config's history for a watcher.
public struct EventBatch: Hashable, Sendable {
    /// The matching events, oldest first.
    public var events: [Event]
    /// The last revision this batch accounted for, matching or not; the next batch
    /// starts after it. Equal to `from - 1` when nothing new has happened.
    public var through: Revision
    /// Whether more events may be read right away.
    public var hasMore: Bool

    /// Creates a batch.
    public init(events: [Event], through: Revision, hasMore: Bool) {
        self.events = events
        self.through = through
        self.hasMore = hasMore
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
