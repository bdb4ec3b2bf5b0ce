import DiscfgCore
@testable import DiscfgEtcd
import DiscfgSQLite
import Foundation
import GRPCCore
import Testing

/// A watch from a past revision catches up as etcd's does: the history up to the
/// revision it began at comes packed, as many whole revisions per response as fit one
/// answer, and each revision made later in a response of its own.
@Suite("etcd API: a watch from a past revision gets its history packed")
struct WatchCatchUpTests {
    @Test("five past revisions come in one response at the watch's revision; a later put in a response of its own")
    func packed() async throws {
        try await WatchBacklogTests().withBackend { backend, config in
            for index in 1...5 {
                _ = try await backend.transact(Transaction(success: [.put(try EtcdKeys.key(Array("w/\(index)".utf8)), Data("v\(index)".utf8))]))
            }
            let now = try await backend.currentRevision()
            let writer = StallingWriter(passing: .max)
            try await WatchBacklogTests.watching(backend, config, from: 1, writer) {
                let history = try await writer.waitFor { responses in responses.first { !$0.events.isEmpty } }
                #expect(history.events.map { String(decoding: $0.kv.key, as: UTF8.self) } == (1...5).map { "w/\($0)" })
                #expect(history.header.revision == now.storageValue)
                _ = try await backend.transact(Transaction(success: [.put(try EtcdKeys.key(Array("w/6".utf8)), Data("v6".utf8))]))
                let later = try await writer.waitFor { responses in
                    let withEvents = responses.filter { !$0.events.isEmpty }
                    return withEvents.count == 2 ? withEvents[1] : nil
                }
                #expect(later.events.map { String(decoding: $0.kv.key, as: UTF8.self) } == ["w/6"])
                #expect(later.header.revision == now.storageValue + 1)
            }
        }
    }

    @Test("history larger than one answer comes in several responses, each within the budget, every revision whole and once, in order")
    func overBudget() async throws {
        try await WatchBacklogTests().withBackend { backend, config in
            let value = Data(repeating: 7, count: 200_000)
            let count = EtcdAnswer.maxBytes / value.count * 3
            for index in 0..<count {
                _ = try await backend.transact(Transaction(success: [
                    .put(try EtcdKeys.key(Array("w/\(index)/a".utf8)), value), .put(try EtcdKeys.key(Array("w/\(index)/b".utf8)), Data("b".utf8)),
                ]))
            }
            let writer = StallingWriter(passing: .max)
            try await WatchBacklogTests.watching(backend, config, from: 1, writer) {
                let responses = try await writer.waitFor { responses in
                    responses.flatMap(\.events).count >= 2 * count ? responses.filter { !$0.events.isEmpty } : nil
                }
                #expect(responses.count >= 3 && responses.count < count, "packed, but within the budget")
                for response in responses {
                    #expect(response.events.reduce(0) { $0 + $1.kv.value.count } <= EtcdAnswer.maxBytes)
                    // A revision's two keys never part.
                    #expect(Set(response.events.map(\.kv.modRevision)).count * 2 == response.events.count)
                }
                let keys = responses.flatMap(\.events).map { String(decoding: $0.kv.key, as: UTF8.self) }
                #expect(keys == (0..<count).flatMap { ["w/\($0)/a", "w/\($0)/b"] })
            }
        }
    }
}
