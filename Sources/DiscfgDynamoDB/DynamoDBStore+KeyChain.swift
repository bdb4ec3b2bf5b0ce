import DiscfgCore
import Foundation

extension DynamoDBStore {
    /// Reads the chains a change's events join that were not read with its keys: the
    /// tombstones of keys without an item (one `BatchGetItem`), and for an item written
    /// before chains (or read without its chain) its newest event, found in its
    /// revision's events (one `Query` each, once per key: the change then records the chain).
    func linkChains(_ config: ConfigName, _ change: inout DynamoDBChange) async throws {
        let unlinked = change.unlinkedKeys
        guard !unlinked.isEmpty else { return }
        let absent = unlinked.filter { change.original($0) == nil }
        for attributes in try await connection.batchGet(absent.map { DynamoDBLayout.tombstoneKey(config, $0) }, consistent: true) {
            guard let path = attributes[.sk]?.string, let chain = DynamoDBKeyChain(head: attributes) else { continue }
            change.chains[Key(stored: path)] = chain
        }
        for key in unlinked {
            guard let item = change.original(key), let (place, attributes) = try await event(on: key, at: item.modRevision, in: config) else { continue }
            let links = EventLinks(attributes)
            change.chains[key] = DynamoDBKeyChain(place: place, seq: links?.seq ?? 1, back: links?.back ?? [], spine: links?.jump.map { [$0] } ?? [])
        }
    }

    /// The event on `key` at `revision` and its place, from a `Query` of the revision's events.
    func event(on key: Key, at revision: Revision, in config: ConfigName) async throws -> (EventPlace, Attributes)? {
        let query = QueryInput(
            table: connection.table,
            key: .partition(DynamoDBLayout.historyPK(config), .sk, from: DynamoDBLayout.revisionSK(revision), through: DynamoDBLayout.historyEndSK(revision)),
            consistent: true
        )
        for attributes in try await connection.queryAll(query) where attributes[.key]?.string == key.path {
            if let place = attributes[.sk]?.string.flatMap(EventPlace.init(sortKey:)) { return (place, attributes) }
        }
        return nil
    }

    /// The key's chain as its key item, or its tombstone, records it: nil when the key has
    /// neither, or only an item written before chains (`legacy` is then its revision).
    func chainHead(_ key: Key, in config: ConfigName, item: Attributes?, tombstone: Attributes?) -> (chain: DynamoDBKeyChain?, legacy: Revision?) {
        if let item {
            if let chain = DynamoDBKeyChain(head: item) { return (chain, nil) }
            return (nil, item[.modRevision]?.uint64.map { Revision($0) })
        }
        return (tombstone.flatMap(DynamoDBKeyChain.init(head:)), nil)
    }
}

extension EventPlace {
    /// The place of the event stored under `sortKey`; nil for an overflow item.
    init?(sortKey: String) {
        guard let revision = DynamoDBLayout.revision(ofHistorySK: sortKey) else { return nil }
        let position = sortKey.utf8.count > 20 ? Int(sortKey.dropFirst(21)) ?? 0 : 0
        self.init(revision: revision, position: position)
    }
}
