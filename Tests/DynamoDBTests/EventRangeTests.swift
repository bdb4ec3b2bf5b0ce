import DiscfgCore
@testable import DiscfgDynamoDB
import Foundation
import Testing

/// ``EventRangeReading`` on DynamoDB: the changes after a revision a check has just read,
/// in one `Query`, the same events as ``DynamoDBStore/events(in:scope:from:limit:maxBytes:)``,
/// never past the info given, and `compacted` whenever history is not whole.
@Suite("DynamoDB: events up to a known revision")
struct EventRangeTests {
    @Test("after a check, a change is one Query: the events events() gives, bounded by the info read")
    func oneQuery() async throws {
        let store = try await makeStore()
        let config = try await store.makeConfig("ranged", settings: ConfigSettings(history: .forever))
        _ = try await store.set(Key("/a"), to: Data("1".utf8), in: config)
        let held = try await store.configInfo(config).revision
        _ = try await store.set(Key("/a"), to: Data("2".utf8), in: config)
        _ = try await store.transact(
            Transaction(success: [.put(Key("/b"), Data("3".utf8)), .put(Key("/c"), Data("4".utf8))]), in: config
        )
        _ = try await store.delete(Key("/a"), in: config, conditions: [])
        let info = try await store.configInfo(config)
        _ = try await store.set(Key("/after"), to: Data("5".utf8), in: config)

        await store.metrics.reset()
        let batch = try await store.events(in: config, from: held.next, upTo: info, limit: 1000, maxBytes: Limits.maxPageBytes)
        let metrics = await store.metrics.snapshot()
        #expect(metrics.keys.sorted() == ["Query"], "\(metrics.keys.sorted())")
        #expect(metrics["Query"]?.roundTrips == 1)

        let full = try await store.events(in: config, scope: .prefix(.root), from: held.next, limit: 1000)
        #expect(batch.events == full.events.filter { $0.revision <= info.revision })
        #expect(try batch.events.map(\.key) == [Key("/a"), Key("/b"), Key("/c"), Key("/a")])
        #expect(batch.through == info.revision)
        #expect(!batch.hasMore)

        // Paged: each page starts at its revision, a transaction never split.
        let first = try await store.events(in: config, from: held.next, upTo: info, limit: 2, maxBytes: Limits.maxPageBytes)
        #expect(try first.events.map(\.key) == [Key("/a"), Key("/b"), Key("/c")])
        #expect(first.hasMore)
        let second = try await store.events(in: config, from: first.through.next, upTo: info, limit: 2, maxBytes: Limits.maxPageBytes)
        #expect(try second.events.map(\.key) == [Key("/a")])
        #expect(second.through == info.revision)
    }

    @Test("history dropped since the info was read, or at its compacted revision, is compacted; another config's info is refused")
    func compacted() async throws {
        let store = try await makeStore()
        let config = try await store.makeConfig("gone", settings: ConfigSettings(history: .forever))
        for value in 1...4 { _ = try await store.set(Key("/k"), to: Data("\(value)".utf8), in: config) }
        let stale = try await store.configInfo(config)
        _ = try await store.compact(config, through: stale.revision.previous)
        let error = await #expect(throws: DiscfgError.self) {
            try await store.events(in: config, from: Revision(2), upTo: stale, limit: 100, maxBytes: Limits.maxPageBytes)
        }
        #expect(error?.code == .compacted)

        let fresh = try await store.configInfo(config)
        let refused = await #expect(throws: DiscfgError.self) {
            try await store.events(in: config, from: fresh.compactedRevision, upTo: fresh, limit: 100, maxBytes: Limits.maxPageBytes)
        }
        #expect(refused?.code == .compacted)
        let last = try await store.events(in: config, from: fresh.revision, upTo: fresh, limit: 100, maxBytes: Limits.maxPageBytes)
        #expect(last.events.map(\.revision) == [fresh.revision])

        let other = try await store.makeConfig("other")
        let wrong = await #expect(throws: DiscfgError.self) {
            try await store.events(in: other, from: Revision(1), upTo: fresh, limit: 100, maxBytes: Limits.maxPageBytes)
        }
        #expect(wrong?.code == .invalidArgument)
    }

    @Test("history kept for days (the default) is one Query too: each commit trims it")
    func daysRetention() async throws {
        let store = try await makeStore()
        let config = try await store.makeConfig("days", settings: ConfigSettings(history: .days(7)))
        _ = try await store.set(Key("/k"), to: Data("1".utf8), in: config)
        let info = try await store.configInfo(config)
        await store.metrics.reset()
        let batch = try await store.events(in: config, from: Revision(1), upTo: info, limit: 100, maxBytes: Limits.maxPageBytes)
        #expect(try batch.events.map(\.key) == [Key("/k")])
        #expect(await store.metrics.snapshot().keys.sorted() == ["Query"])
    }
}
