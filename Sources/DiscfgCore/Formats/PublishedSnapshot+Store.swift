import Foundation

extension PublishedSnapshot {
    /// Reads a config's current state from a store as one snapshot at one revision.
    ///
    /// Lists every key, then replays the changes made while the pages were read, so the
    /// items are exactly the config's at the returned revision.
    ///
    /// - Throws: the store's errors: `configNotFound`, `compacted` when the history the
    ///   replay needs was dropped meanwhile (read again), `unavailable`.
    public static func read(from store: any ConfigStore, config: ConfigName) async throws -> PublishedSnapshot {
        let info = try await store.configInfo(config)
        let listed = try await store.items(in: config)
        var snapshot = try PublishedSnapshot(
            config: config, revision: listed.revision, compactedRevision: info.compactedRevision, items: listed.items)
        try await snapshot.catchUp(from: store)
        return snapshot
    }

    /// Applies the store's changes after ``revision`` until there are none, page by page.
    ///
    /// - Returns: the events applied, oldest first.
    /// - Throws: `compacted` when the store no longer holds them (reload with ``read(from:config:)``).
    @discardableResult
    public mutating func catchUp(from store: any ConfigStore, maxEvents: Int = Limits.maxPageSize) async throws -> [Event] {
        var applied: [Event] = []
        while true {
            let batch = try await store.events(
                in: config, scope: .prefix(.root), from: revision.next, limit: maxEvents, maxBytes: Limits.maxPageBytes)
            let before = revision
            for event in batch.events { apply(event) }
            applied += batch.events
            if batch.through > revision { revision = batch.through }
            // A batch that moved nothing ends the catch-up even if it says there is more.
            guard batch.hasMore, revision > before else { break }
        }
        return applied
    }

    /// Applies one change: a put sets its item, a delete or expiry removes the key. The
    /// revision moves to the event's when that is later.
    public mutating func apply(_ event: Event) {
        let index = position(of: event.key)
        let found = index < items.count && items[index].key == event.key
        switch (event.kind, event.item) {
        case (.put, let item?):
            var item = item
            item.modifiedAt = Date(milliseconds: item.modifiedAt.milliseconds)
            item.expiresAt = item.expiresAt.map { Date(milliseconds: $0.milliseconds) }
            if found { items[index] = item } else { items.insert(item, at: index) }
        default:
            if found { items.remove(at: index) }
        }
        if event.revision > revision { revision = event.revision }
    }

    /// The item at `key`, or nil.
    public func item(at key: Key) -> Item? {
        let index = position(of: key)
        return index < items.count && items[index].key == key ? items[index] : nil
    }

    /// The index of the first item whose key is not before `key`.
    public func position(of key: Key) -> Int {
        var low = 0
        var high = items.count
        while low < high {
            let middle = (low + high) / 2
            if items[middle].key < key { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
