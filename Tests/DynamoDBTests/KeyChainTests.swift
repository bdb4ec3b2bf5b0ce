import DiscfgCore
@testable import DiscfgDynamoDB
import Foundation
import Testing

/// A key's history is a chain of events on DynamoDB: no index of history by key, a small
/// change written for 6 WCU, and tables made before chains (with the `byKey` index and
/// events that carry `lsk` and no links) still read whole.
@Suite("DynamoDB: key chains")
struct KeyChainTests {
    @Test("a small set costs 6 computed WCU and a delete 8; a new table has no byKey index")
    func costs() async throws {
        let store = try await makeStore()
        let status = try #require(try await store.table.describe())
        #expect(status.indexes == ["byExpiry"])
        let config = try ConfigName("costs")
        _ = try await store.createConfig(config, settings: ConfigSettings())
        let small = Data(repeating: 0x76, count: 100)
        for (label, change) in [
            ("create", { _ = try await store.set(Key("/k"), to: small, in: config) }),
            ("update", { _ = try await store.set(Key("/k"), to: small, in: config) }),
        ] as [(String, () async throws -> Void)] {
            store.estimatedCapacity.reset()
            try await change()
            #expect(store.estimatedCapacity.snapshot()["TransactWriteItems"]?.write == 6, "\(label)")
        }
        store.estimatedCapacity.reset()
        _ = try await store.delete(Key("/k"), in: config, conditions: [])
        #expect(store.estimatedCapacity.snapshot()["TransactWriteItems"]?.write == 8)
    }

    @Test("past reads and history pages walk long chains, across deletes and re-creations")
    func longChains() async throws {
        let store = try await makeStore()
        let config = try ConfigName("long")
        _ = try await store.createConfig(config, settings: ConfigSettings())
        var written: [Event] = []
        for index in 0..<70 {
            if index % 23 == 22 {
                written.append(try await store.delete(Key("/k"), in: config, conditions: []))
            } else {
                written.append(try await store.set(Key("/k"), to: Data("v\(index)".utf8), in: config))
            }
            if index % 5 == 0 { _ = try await store.set(Key("/other"), to: Data("o".utf8), in: config) }
        }
        var seen: [Event] = []
        var query = HistoryQuery(limit: 9)
        while true {
            let page = try await store.history(of: Key("/k"), in: config, query)
            seen += page.events
            guard let before = page.nextBefore else { break }
            query.before = before
        }
        #expect(seen == written.reversed())
        for event in written.filter({ $0.revision.rawValue % 3 == 0 }) {
            let value = try await store.get(Key("/k"), in: config, atRevision: event.revision)
            #expect(value == event.item, "at \(event.revision)")
        }
    }

    @Test("a table made before chains keeps its history: walks go on in its byKey index")
    func tableMadeBeforeChains() async throws {
        let store = try await makeStore(create: false)
        var input = CreateTableInput(name: store.table.name, capacity: .onDemand)
        input.AttributeDefinitions.append(.init(AttributeName: Attribute.lsk.rawValue, AttributeType: "S"))
        input.LocalSecondaryIndexes.append(.init(
            IndexName: DynamoDBIndex.byKey.rawValue, KeySchema: CreateTableInput.keys(sortedBy: .lsk), Projection: .init(ProjectionType: "KEYS_ONLY")
        ))
        _ = try await store.connection.raw("CreateTable", input, as: IgnoredOutput.self)
        try await store.table.ensure()
        let config = try ConfigName("old")
        _ = try await store.createConfig(config, settings: ConfigSettings())
        var old: [Event] = []
        for index in 0..<5 { old.append(try await store.set(Key("/a"), to: Data("a\(index)".utf8), in: config)) }
        let deletedPut = try await store.set(Key("/d"), to: Data("d".utf8), in: config)
        let deleted = try await store.delete(Key("/d"), in: config, conditions: [])
        try await Self.rewriteInOldLayout(store, config)

        #expect(try await store.history(of: Key("/a"), in: config, HistoryQuery()).events == old.reversed())
        #expect(try await store.get(Key("/a"), in: config, atRevision: old[1].revision) == old[1].item)
        var newer: [Event] = []
        for index in 0..<4 { newer.append(try await store.set(Key("/a"), to: Data("b\(index)".utf8), in: config)) }
        let recreated = try await store.set(Key("/d"), to: Data("d2".utf8), in: config)

        // Pages of 2 cross from the chain into the index; a page must never start over
        // (bounded, so a regression fails rather than pages forever).
        var seen: [Event] = []
        var query = HistoryQuery(limit: 2)
        for _ in 0..<20 {
            let page = try await store.history(of: Key("/a"), in: config, query)
            seen += page.events
            guard let before = page.nextBefore else { break }
            query.before = before
        }
        #expect(seen == (old + newer).reversed())
        var below = HistoryQuery(limit: 2)
        below.before = old[3].revision
        #expect(try await store.history(of: Key("/a"), in: config, below).events == [old[2], old[1]])
        #expect(try await store.history(of: Key("/d"), in: config, HistoryQuery()).events == [recreated, deleted, deletedPut])
        for event in old + newer {
            #expect(try await store.get(Key("/a"), in: config, atRevision: event.revision) == event.item, "at \(event.revision)")
        }
        #expect(try await store.get(Key("/d"), in: config, atRevision: deletedPut.revision) == deletedPut.item)
        #expect(try await store.get(Key("/d"), in: config, atRevision: deleted.revision) == nil)
    }

    /// Rewrites the config's items as a version before chains wrote them: events with
    /// `lsk` and no links, key items without their chain, no tombstones.
    static func rewriteInOldLayout(_ store: DynamoDBStore, _ config: ConfigName) async throws {
        let chain: [Attribute] = [.chainSeq, .chainBack, .chainJump, .chainSpine, .headPosition]
        var actions: [WriteAction] = []
        for var item in try await store.connection.queryAll(QueryInput(table: store.table.name, key: .partition(DynamoDBLayout.historyPK(config)), consistent: true)) {
            guard let event = EventCodec.event(item) else { continue }
            for attribute in chain { item[attribute] = nil }
            item[.lsk] = .s(DynamoDBLayout.historyKeySK(event.key, event.revision))
            actions.append(.put(item, condition: nil))
        }
        for var item in try await store.connection.queryAll(QueryInput(table: store.table.name, key: .partition(config.rawValue), consistent: true)) where ItemCodec.item(item) != nil {
            for attribute in chain { item[attribute] = nil }
            actions.append(.put(item, condition: nil))
        }
        for item in try await store.connection.queryAll(QueryInput(table: store.table.name, key: .partition(DynamoDBLayout.tombstonePK(config)), consistent: true)) {
            actions.append(.delete(key: DynamoDBLayout.key(DynamoDBLayout.tombstonePK(config), item[.sk]?.string ?? ""), condition: nil))
        }
        try await store.transactWrite(actions)
    }
}
