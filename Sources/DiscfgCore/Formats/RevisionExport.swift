import Foundation

/// An export at one revision for a store that cannot hold a read snapshot open across
/// pages (DynamoDB, and the memory and SQLite stores, which share this one way): pages of
/// the current keys, each fixed up to the snapshot's revision from history.
///
/// The export pins revision R first. Each page is a listing of the current keys in key
/// order, read after R, then the config's events after R are read up to the present, so
/// every key changed since R is known by the time the page is fixed up:
/// - a listed key last changed at or before R has its value at R already;
/// - a listed key changed after R is as it was at R: the previous item of its first
///   event after R (what `get(atRevision:)` reads, here with no request per key), and
///   left out when it did not exist then (created after R);
/// - a key in the page's range that changed after R but is not listed (deleted since)
///   is read as it was at R, and put back when it existed then.
/// A store whose history after R is gone fails with `compacted` instead of mixing
/// revisions. Memory holds one page, one batch of events (at most
/// ``Limits/maxPageBytes``), and, for each key ahead of the export changed since R, its
/// item at R: at most the config as it was at R.
public actor RevisionExport {
    private let store: any ConfigStore
    private let header: SnapshotHeader
    private let maxBytes: Int
    /// The last key of the previous page; nil before the first.
    private var cursor: String?
    private var finished = false
    /// Events after R have been read through this revision.
    private var changesThrough: Revision
    /// Keys ahead of the export with an event after R, as far as read, each with its
    /// item at R (the previous item of its first event after R; nil: absent at R).
    private var changed: [Key: Item?] = [:]

    /// Lists one page of current keys.
    public typealias Lister = @Sendable (ConfigName, ListQuery) async throws -> ListPage

    /// The pages of `config` at its current revision, or at a past one, as a store's
    /// ``ConfigReading/exportPages(_:maxBytes:atRevision:)``.
    /// - Parameters:
    ///   - revision: a past revision to export at; nil for the current one.
    ///   - now: the store's time; at the current revision, items expired by then are
    ///     left out (at a past one, items are as they were, as past reads have them).
    ///   - list: how to list current keys, when not `store.list`. The listing must not be
    ///     stale (a key shown at an older version than it had at the export's revision
    ///     could not be told apart), so a store whose reads may lag passes a strongly
    ///     consistent one.
    public static func pages(
        of store: any ConfigStore, _ config: ConfigName, maxBytes: Int, atRevision past: Revision? = nil, now: Date, list: Lister? = nil
    ) async throws -> SnapshotPages {
        try Limits.validatePageBytes(maxBytes)
        let info = try await store.configInfo(config)
        if let past {
            guard past <= info.revision else {
                throw DiscfgError.futureRevision(past, current: info.revision)
            }
            guard past >= info.compactedRevision else {
                throw DiscfgError.compacted(past, through: info.compactedRevision)
            }
        }
        let header = SnapshotHeader(config: config, revision: past ?? info.revision, exportedAt: now)
        let pastOnly = past.map { $0 < info.revision } ?? false
        let export = RevisionExport(store: store, header: header, maxBytes: maxBytes, hidesExpired: !pastOnly, list: list ?? { try await store.list(in: $0, $1) })
        return SnapshotPages(header: header) { try await export.nextPage() }
    }

    private let list: Lister

    /// Whether items expired by the export's time are left out (at the current revision).
    private let hidesExpired: Bool

    private init(store: any ConfigStore, header: SnapshotHeader, maxBytes: Int, hidesExpired: Bool, list: @escaping Lister) {
        self.store = store
        self.header = header
        self.maxBytes = maxBytes
        self.hidesExpired = hidesExpired
        self.list = list
        changesThrough = header.revision
    }

    private var config: ConfigName { header.config }
    private var revision: Revision { header.revision }

    /// The next page at the snapshot's revision, or nil after the last.
    func nextPage() async throws -> [ConfigSnapshot.Entry]? {
        guard !finished else { return nil }
        let page = try await list(config, ListQuery(prefix: .root, recursive: true, limit: Limits.maxPageSize, cursor: cursor, maxBytes: maxBytes))
        // Read after the listing, so every change the listing may reflect is known.
        try await readChanges()
        let low = cursor
        let high = page.nextCursor
        var items: [Item] = []
        var listed = Set<Key>()
        for item in page.items {
            listed.insert(item.key)
            if item.modRevision <= revision {
                items.append(item)
            } else if let past = try await itemAtRevision(item.key) {
                items.append(past)
            }
        }
        let inRange = changed.keys.filter { key in
            !listed.contains(key) && low.map { $0.utf8.lexicographicallyPrecedes(key.path.utf8) } ?? true
                && high.map { !$0.utf8.lexicographicallyPrecedes(key.path.utf8) } ?? true
        }
        for key in inRange {
            if let past = try await itemAtRevision(key) { items.append(past) }
        }
        cursor = high
        finished = high == nil
        // Keys behind the export need no more fixing up.
        if let high { changed = changed.filter { high.utf8.lexicographicallyPrecedes($0.key.path.utf8) } }
        return items.filter { !hidesExpired || !$0.isExpired(at: header.exportedAt) }.sorted { $0.key < $1.key }.map(ConfigSnapshot.Entry.init)
    }

    /// Notes every key changed after R, up to the present.
    private func readChanges() async throws {
        while true {
            let batch = try await explained {
                // Only the keys are kept; a batch is one page of the usual size.
                try await store.events(in: config, scope: .prefix(.root), from: changesThrough.next, limit: Limits.maxPageSize)
            }
            for event in batch.events where changed.index(forKey: event.key) == nil {
                changed[event.key] = .some(event.prevItem)
            }
            changesThrough = max(changesThrough, batch.through)
            guard batch.hasMore else { return }
        }
    }

    /// `key` as it was at R, a key known changed since R (see ``PastRead``).
    private func itemAtRevision(_ key: Key) async throws -> Item? {
        if let known = changed[key] { return known }
        return try await explained { try await store.get(key, in: config, atRevision: revision) }
    }

    /// Says what a `compacted` error means for the export.
    private func explained<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as DiscfgError where error.code == .compacted {
            throw DiscfgError(
                .compacted,
                "config \(config) changed during the export, and the history needed to export it at revision \(revision) is gone (\(error.message)); export again, or keep more history",
                field: "revision"
            )
        }
    }
}
