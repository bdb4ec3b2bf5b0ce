import DiscfgCore
import Foundation

/// A read met a key item marked by a ``BulkChange`` that ended since: read it again.
struct MarkOutdated: Error {}

extension DynamoDBStore {
    /// Key items as a reader must see them. An item marked by a ``BulkChange`` is the key as
    /// that change leaves it when the meta item says it is committed (from its event), and
    /// the key as it was while it is staged or undone (a placeholder is no key). Only a
    /// read that meets a mark reads the meta item (and, once committed and until folded,
    /// the marked keys' events).
    /// - Parameter meta: the meta item, when the caller has read it after the items.
    /// - Throws: ``MarkOutdated`` when a mark's change has ended since the item was read.
    func resolvingMarks(_ items: [Attributes], in config: ConfigName, meta known: ConfigMeta? = nil) async throws -> [Attributes] {
        guard items.contains(where: { $0[.pending] != nil }) else { return items }
        let meta: ConfigMeta? = if let known { known } else { try await meta(config, consistent: true, includingDeleted: true) }
        guard let bulk = meta?.bulk else { throw MarkOutdated() }
        var events: [EventPlace: Event] = [:]
        if bulk.state == .committed {
            let places = items.compactMap(PendingMark.init).filter { $0.id == bulk.id }.map(\.place)
            for (sk, event) in try await eventsBySortKey(places.map(\.sortKey), in: config) {
                if let place = EventPlace(sortKey: sk) { events[place] = event }
            }
        }
        var resolved: [Attributes] = []
        for item in items {
            guard let mark = PendingMark(item) else {
                resolved.append(item)
                continue
            }
            guard mark.id == bulk.id else { throw MarkOutdated() }
            if bulk.state == .committed {
                guard let path = item[.sk]?.string, let event = events[mark.place] else { throw MarkOutdated() }
                if let folded = mark.write(config, Key(stored: path), event: event).folded.item { resolved.append(folded) }
            } else if ItemCodec.item(item) != nil {
                resolved.append(item)
            }
        }
        return resolved
    }

    /// Runs `read` again while it meets marks of changes that ended meanwhile; a mark
    /// still there after that is a leftover of an undone change and is ignored.
    func readingPastMarks<T>(_ read: (_ lastTry: Bool) async throws -> T) async throws -> T {
        for _ in 1..<Self.markRereads {
            do {
                return try await read(false)
            } catch is MarkOutdated {
                continue
            }
        }
        return try await read(true)
    }

    static let markRereads = 4

    /// `items` with any mark ignored: what a last try reads.
    static func ignoringMarks(_ items: [Attributes]) -> [Attributes] {
        items.compactMap { item in
            guard item[.pending] != nil else { return item }
            return ItemCodec.item(item) == nil ? nil : item
        }
    }

    /// The key item and tombstone of `key` as a reader sees them (see
    /// ``resolvingMarks(_:in:meta:)``), with the meta item when `meta`.
    func keyHeads(_ key: Key, in config: ConfigName, meta: Bool) async throws -> (meta: ConfigMeta?, item: Attributes?, tombstone: Attributes?) {
        try await readingPastMarks { lastTry in
            let heads = try await storedKeyHeads(key, in: config, meta: meta)
            guard let item = heads.item, let mark = PendingMark(item) else { return heads }
            guard !lastTry else { return (heads.meta, Self.ignoringMarks([item]).first, heads.tombstone) }
            let current = try await self.meta(config, consistent: true, includingDeleted: true)
            guard let bulk = current?.bulk, bulk.id == mark.id else { throw MarkOutdated() }
            guard bulk.state == .committed else { return (heads.meta, Self.ignoringMarks([item]).first, heads.tombstone) }
            guard let event = try await eventsBySortKey([mark.place.sortKey], in: config)[mark.place.sortKey] else { throw MarkOutdated() }
            let folded = mark.write(config, key, event: event).folded
            return (meta ? current : nil, folded.item, folded.tombstone ?? heads.tombstone)
        }
    }
}
