import Foundation
import DiscfgJSON

/// What every store reads: the configs, their keys now and at past revisions, a key's
/// history, the events watchers follow, and exports. ``ConfigStore`` adds the changes;
/// a read-only copy (the agent's replica) is a `ConfigReading` alone, and the server
/// that serves one refuses changes itself (``ReadOnlyCopy``).
///
/// Reads never return an expired item.
public protocol ConfigReading: Sendable {
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
}

/// A read-only copy of another store, such as the agent's replica: a server serving it
/// refuses every change, naming ``source``, the store to write to instead.
public protocol ReadOnlyCopy: ConfigReading {
    /// Where the copy comes from, as the user named it.
    var source: String { get }
}

extension ConfigReading {
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

    /// The config's schemas, by target.
    public func schemas(in config: ConfigName) async throws -> [(target: SchemaTarget, item: Item)] {
        try await items(in: config, under: SchemaTarget.namespace).items.compactMap { item in
            SchemaTarget(storageKey: item.key).map { ($0, item) }
        }
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
