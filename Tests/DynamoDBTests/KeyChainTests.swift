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
}
