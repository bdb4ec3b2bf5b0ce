import DiscfgAWS
import DiscfgConformance
import DiscfgCore
@testable import DiscfgDynamoDB
import Foundation
import Testing

@Suite("DynamoDB store behaviour")
struct DynamoDBStoreTests {
    @Test func getIsOneGetItemAndSetIsOneBatchGetPlusOneTransaction() async throws {
        let store = try await makeStore()
        let config = try await store.makeConfig()
        _ = try await store.set(Key("/k"), to: Data("v".utf8), in: config)
        await store.metrics.reset()
        store.estimatedCapacity.reset()

        _ = try await store.get(Key("/k"), in: config)
        var metrics = await store.metrics.snapshot()
        #expect(metrics.keys.sorted() == ["GetItem"])
        #expect(metrics["GetItem"]?.roundTrips == 1)
        #expect(store.estimatedCapacity.snapshot()["GetItem"]?.read == 0.5, "an eventually consistent read of ≤ 4 KB")

        await store.metrics.reset()
        _ = try await store.set(Key("/k"), to: Data("w".utf8), in: config)
        metrics = await store.metrics.snapshot()
        #expect(metrics.keys.sorted() == ["BatchGetItem", "TransactWriteItems"])
        #expect(metrics["BatchGetItem"]?.roundTrips == 1)
        #expect(metrics["TransactWriteItems"]?.roundTrips == 1)
    }

    @Test func noScanOnAnyRequestPath() async throws {
        let clock = ManualClock()
        let store = try await makeStore(clock: clock)
        let config = try await store.makeConfig()
        await store.metrics.reset()
        for index in 0..<5 { _ = try await store.set(Key("/a/k\(index)"), to: Data("v".utf8), in: config, options: SetOptions(ttlSeconds: index == 0 ? 1 : nil)) }
        _ = try await store.get(Key("/a/k1"), in: config)
        _ = try await store.get(Key("/a/k1"), in: config, atRevision: 1)
        _ = try await store.list(in: config, ListQuery(prefix: KeyPrefix("/a/"), recursive: false))
        _ = try await store.history(of: Key("/a/k1"), in: config, HistoryQuery())
        _ = try await store.events(in: config, scope: .prefix(.root), from: 1, limit: 10)
        _ = try await store.export(config)
        _ = try await store.listConfigs()
        clock.advance(seconds: 2)
        #expect(try await store.sweepExpired().count == 1)
        _ = try await store.deletePrefix(KeyPrefix("/a/"), in: config)
        let metrics = await store.metrics.snapshot()
        #expect(metrics["Scan"] == nil)
        #expect(Set(metrics.keys).isSubset(of: ["GetItem", "BatchGetItem", "Query", "TransactWriteItems"]), "\(metrics.keys.sorted())")
    }

    @Test func historyEventsFitTheItemLimitWithTwoFullSizeValues() async throws {
        let store = try await makeStore()
        let config = try await store.makeConfig("big", settings: ConfigSettings(history: .forever))
        let first = Data((0..<Limits.maxValueBytes).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let second = Data((0..<Limits.maxValueBytes).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let one = try await store.set(Key("/blob"), to: first, in: config)
        let two = try await store.set(Key("/blob"), to: second, in: config)
        #expect(two.prevItem == one.item)
        let history = try await store.history(of: Key("/blob"), in: config, HistoryQuery())
        #expect(history.events == [two, one])
        #expect(history.events.first?.prevItem?.value == first)
        let events = try await store.events(in: config, scope: .prefix(.root), from: 1, limit: 10).events
        #expect(events == [one, two])
        #expect(try await store.get(Key("/blob"), in: config, atRevision: 1)?.value == first)
        let deleted = try await store.delete(Key("/blob"), in: config, conditions: [])
        #expect(deleted.prevItem?.value == second)
        // Both history items exist: the event and its overflowed previous value.
        let raw = try await store.connection.queryAll(store.historyRange(config, from: 2, through: 2))
        #expect(raw.compactMap { $0["sk"]?.string } == ["00000000000000000002", "00000000000000000002#prev"])
    }

    @Test func aLostRaceOnTheMetaItemIsRetried() async throws {
        let store = try await makeStore()
        let config = try await store.makeConfig()
        let rival = DynamoDBStore(client: store.client, configuration: store.configuration, clock: ManualClock())
        store.beforeCommit.withLock { $0 = { _ = try await rival.set(Key("/rival"), to: Data("r".utf8), in: config) } }
        await store.metrics.reset()
        let event = try await store.set(Key("/mine"), to: Data("m".utf8), in: config)
        #expect(event.revision == 2, "the rival's change took revision 1; this one was retried")
        let metrics = await store.metrics.snapshot()
        #expect(metrics["TransactWriteItems"]?.failures == 1, "the first attempt lost the race")
        #expect(metrics["BatchGetItem"]?.calls == 3, "the rival's read, and this change's read twice")
        #expect(try await store.events(in: config, scope: .prefix(.root), from: 1, limit: 10).events.map(\.key.path) == ["/rival", "/mine"])
    }

    @Test func aDeletePrefixPastOneTransactionIsOneRevision() async throws {
        let store = try await makeStore()
        let config = try await store.makeConfig()
        for index in 0..<60 { _ = try await store.set(Key("/many/\(index < 30 ? "a" : "b")/k\(index)"), to: Data("v".utf8), in: config) }
        await store.metrics.reset()
        let removed = try await store.deletePrefix(KeyPrefix("/many/"), in: config)
        #expect(removed.count == 60)
        #expect(Set(removed.map(\.revision)) == [61])
        #expect(try await store.list(in: config, ListQuery(limit: 1000)).items.isEmpty)
        #expect(try await store.revision(of: config) == 61)
        #expect(try await store.get(Key("/many/a/k0"), in: config, atRevision: 60)?.text == "v")
        let metrics = await store.metrics.snapshot()
        #expect((metrics["TransactWriteItems"]?.calls ?? 0) >= 3, "staged, then folded, in several transactions")
        let tombstones = try await store.connection.queryAll(QueryInput(table: store.connection.table, key: .partition(DynamoDBLayout.tombstonePK(config)), consistent: true))
        #expect(tombstones.count == 60, "each deleted key's chain kept in its tombstone")
        try await expectSettled(store, config)
    }

    @Test func keepLastNDeletesDroppedHistoryItems() async throws {
        let store = try await makeStore()
        let config = try await store.makeConfig("app", settings: ConfigSettings(history: .last(2)))
        for value in 1...5 { _ = try await store.set(Key("/k"), to: Data("\(value)".utf8), in: config) }
        let raw = try await store.connection.queryAll(store.historyRange(config, from: 1, through: 5))
        #expect(raw.compactMap { $0["sk"]?.string } == ["00000000000000000004", "00000000000000000005"])
    }

    @Test func aTransactionPastOneDynamoDBTransactionIsOneRevision() async throws {
        let store = try await makeStore()
        let config = try await store.makeConfig()
        _ = try await store.set(Key("/k0"), to: Data("v".utf8), in: config)
        let puts = try (0..<60).map { TransactionOperation.put(try Key("/k\($0)"), Data("w".utf8)) }
        #expect(try await store.transact(Transaction(success: puts), in: config).revision == 2)
        #expect(try await store.revision(of: config) == 2)
        #expect(try await store.get(Key("/k0"), in: config)?.text == "w")
        #expect(try await store.get(Key("/k0"), in: config, atRevision: 1)?.text == "v")
        #expect(try await store.get(Key("/k59"), in: config)?.version == 1)
        #expect(try await store.history(of: Key("/k0"), in: config, HistoryQuery()).events.map(\.revision) == [2, 1])
        try await expectSettled(store, config)
    }

    @Test func aTransactionsEventsShareItsRevisionAndArePurgedTogether() async throws {
        let store = try await makeStore()
        let config = try await store.makeConfig("app", settings: ConfigSettings(history: .last(1)))
        _ = try await store.transact(Transaction(success: [.put(Key("/a"), Data("1".utf8)), .put(Key("/b"), Data("1".utf8)), .put(Key("/c"), Data("1".utf8))]), in: config)
        var raw = try await store.connection.queryAll(store.historyRange(config, from: 1, through: 5))
        #expect(raw.compactMap { $0["sk"]?.string } == ["00000000000000000001", "00000000000000000001.0001", "00000000000000000001.0002"])
        #expect(raw.map { $0["of"]?.uint64 } == [3, 3, 3])
        _ = try await store.set(Key("/a"), to: Data("2".utf8), in: config)
        _ = try await store.set(Key("/a"), to: Data("3".utf8), in: config)
        raw = try await store.connection.queryAll(store.historyRange(config, from: 1, through: 5))
        #expect(raw.compactMap { $0["sk"]?.string } == ["00000000000000000003"], "revision 1's three events and revision 2's are gone")
        let meta = try #require(try await store.meta(config, consistent: true))
        #expect(meta.sharedRevisions.isEmpty)
    }

    @Test func keepDaysSetsTheNativeTTL() async throws {
        let clock = ManualClock()
        let store = try await makeStore(clock: clock)
        let config = try await store.makeConfig("app", settings: ConfigSettings(history: .days(7)))
        _ = try await store.set(Key("/k"), to: Data("v".utf8), in: config)
        let raw = try await store.connection.queryAll(store.historyRange(config, from: 1, through: 1))
        let ttl = try #require(raw.first?["ttl"]?.int64)
        #expect(ttl > clock.now().milliseconds / 1000 + 7 * 86_400, "never before the retention and its grace")
        let forever = try await store.updateConfig(config, ConfigSettingsPatch(history: .forever))
        #expect(forever.settings.history == .forever)
        let retimed = try await store.connection.queryAll(store.historyRange(config, from: 1, through: 1))
        #expect(retimed.first?["ttl"] == nil, "history kept forever has no TTL")
    }

    @Test func keepDaysReportsCompactedOnceTTLRemovedTheHistoryOfAnIdleConfig() async throws {
        let clock = ManualClock()
        let store = try await makeStore(clock: clock)
        let config = try await store.makeConfig("idle", settings: ConfigSettings(history: .days(1)))
        for value in 1...3 { _ = try await store.set(Key("/k"), to: Data("\(value)".utf8), in: config) }
        clock.advance(seconds: 3 * 86_400)
        // moto runs no TTL deletion: remove what DynamoDB's TTL would have removed by now.
        let history = try await store.connection.queryAll(store.historyRange(config, from: 1, through: Revision(UInt64.max)))
        let expired = history.filter { ($0["ttl"]?.int64 ?? .max) < clock.now().milliseconds / 1000 }
        #expect(expired.count == 3)
        try await store.connection.batchDelete(expired.map { DynamoDBLayout.key($0["pk"]?.string ?? "", $0["sk"]?.string ?? "") })

        let isCompacted: @Sendable (any Error) -> Bool = { ($0 as? DiscfgError)?.code == .compacted }
        await #expect(performing: { _ = try await store.events(in: config, scope: .prefix(.root), from: 2, limit: 10) }, throws: isCompacted)
        #expect(try await store.history(of: Key("/k"), in: config, HistoryQuery()).compactedRevision == 3)
        await #expect(performing: { _ = try await store.get(Key("/k"), in: config, atRevision: 2) }, throws: isCompacted)
        #expect(try await store.get(Key("/k"), in: config, atRevision: 3)?.value == Data("3".utf8))

        // The next change after the idle spell compacts past the removed events too.
        let four = try await store.set(Key("/k"), to: Data("4".utf8), in: config)
        await #expect(performing: { _ = try await store.events(in: config, scope: .prefix(.root), from: 3, limit: 10) }, throws: isCompacted)
        #expect(try await store.events(in: config, scope: .prefix(.root), from: 4, limit: 10).events == [four])
        #expect(try await store.configInfo(config).compactedRevision == 3)
    }

    @Test func aConfigFromBeforeKeyCountsHasNoneAndNeverAWrongOne() async throws {
        let store = try await makeStore()
        let config = try await store.makeConfig()
        try await store.set("/a", "v", in: config)
        // The meta item as a discfg that did not count keys wrote it.
        var meta = try #require(try await store.connection.getItem(DynamoDBLayout.metaKey(config), consistent: true))
        meta[.keyCount] = nil
        try await store.transactWrite([.put(meta, condition: nil)])
        #expect(try await store.configInfo(config).keyCount == nil)
        try await store.set("/b", "v", in: config)
        _ = try await store.delete(Key("/a"), in: config, conditions: [])
        #expect(try await store.configInfo(config).keyCount == nil, "unknown stays unknown rather than counting from zero")
        #expect(try await store.configInfo(config).revision == 3)
        let counted = try await store.makeConfig("counted")
        try await store.set("/a", "v", in: counted)
        #expect(try await store.configInfo(counted).keyCount == 1)
    }

    @Test func aConfigFromBeforeByteCountsIsCountedOnceAQuotaIsSetAndNeverPassesItUnchecked() async throws {
        let store = try await makeStore()
        let config = try await store.makeConfig()
        try await store.set("/a", String(repeating: "a", count: 100), in: config)
        try await store.set("/b", "v", in: config)
        // The meta item as a discfg that counted neither keys nor bytes wrote it.
        var meta = try #require(try await store.connection.getItem(DynamoDBLayout.metaKey(config), consistent: true))
        meta[.keyCount] = nil
        meta[.byteCount] = nil
        try await store.transactWrite([.put(meta, condition: nil)])
        #expect(try await store.configInfo(config).byteCount == nil)
        try await store.set("/c", "v", in: config)
        #expect(try await store.configInfo(config).byteCount == nil, "without a quota, unknown stays unknown rather than counting from zero")

        let limited = try await store.updateConfig(config, ConfigSettingsPatch(quotaBytes: 110))
        #expect(limited.byteCount == 102 + 3 + 3, "counted when the quota was set")
        #expect(limited.keyCount == 3)
        try await expectError(.quotaExceeded, mentioning: ["110", "111"]) { try await store.set("/d", "v", in: config) }
        try await store.set("/d", "", in: config)
        #expect(try await store.configInfo(config).byteCount == 110)

        // Lost again (an older discfg rewrote the item) while the quota stays: the next
        // change counts before it is checked.
        meta = try #require(try await store.connection.getItem(DynamoDBLayout.metaKey(config), consistent: true))
        meta[.byteCount] = nil
        try await store.transactWrite([.put(meta, condition: nil)])
        try await expectError(.quotaExceeded, mentioning: ["110", "113"]) { try await store.set("/e", "v", in: config) }
        #expect(try await store.configInfo(config).byteCount == 110)
    }

    /// A transaction with a read budget that refuses (the REST API's, 4 MiB) reads only
    /// the branch that runs, and only as far as the budget needs: over 25 MiB of values,
    /// at most the budget, what one DynamoDB transaction can delete and a page.
    @Test func aBudgetedTransactionStopsReadingNearItsBudget() async throws {
        let store = try await makeStore()
        let config = try await store.makeConfig()
        let big = Data(repeating: 0x61, count: Limits.maxValueBytes)
        for index in 0..<100 { _ = try await store.set(Key("/big/\(index + 100)"), to: big, in: config) }
        try await store.set("/small", "s", in: config)
        func budgeted(compares: [Comparison] = [], _ success: [TransactionOperation], failure: [TransactionOperation] = []) -> Transaction {
            var transaction = Transaction(compares: compares, success: success, failure: failure)
            transaction.readBudget = ReadBudget(bytes: Limits.maxPageBytes, pastBudget: .refuse)
            return transaction
        }
        func queriedBytes() -> Double { (store.estimatedCapacity.snapshot()["Query"]?.read ?? 0) * 4096 }

        store.estimatedCapacity.reset()
        try await expectError(.tooLarge, field: "transaction") {
            try await store.transact(budgeted([.getPrefix(.root), .getPrefix(try KeyPrefix("/big/"))]), in: config)
        }
        let read = queriedBytes()
        print("a budgeted transaction refused over 25 MiB of values queried \(Int(read) / 1_048_576) MiB")
        #expect(read > Double(Limits.maxPageBytes) && read < 19 * 1_048_576, "read \(read) bytes of 25 MiB")

        // The branch that does not run is not read at all.
        store.estimatedCapacity.reset()
        let other = try await store.transact(
            budgeted(compares: [Comparison(.key(Key("/absent")), .equal, .exists(true))], [.getPrefix(.root)], failure: [.get(Key("/small"))]), in: config
        )
        let small = try #require(try await store.get(Key("/small"), in: config))
        #expect(!other.succeeded)
        #expect(other.responses == [.get([small])])
        #expect(queriedBytes() == 0, "no range of the success branch was read")
    }

    @Test func tokensLiveInTheTable() async throws {
        let store = try await makeStore()
        let token = AccessToken(id: "abc", hash: Data([1, 2, 3]), role: .write, configs: [try ConfigName("app")], description: "ci", createdAt: Date(milliseconds: 1000))
        try await store.saveToken(token)
        #expect(try await store.token(id: "abc") == token)
        #expect(try await store.listTokens() == [token])
        await #expect(throws: DiscfgError.self) { try await store.saveToken(token) }
        try await store.revokeToken(id: "abc")
        #expect(try await store.token(id: "abc") == nil)
        await #expect(throws: DiscfgError.self) { try await store.revokeToken(id: "abc") }
    }
}

extension DynamoDBStore {
    func makeConfig(_ name: String = "app", settings: ConfigSettings = ConfigSettings()) async throws -> ConfigName {
        let config = try ConfigName(name)
        _ = try await createConfig(config, settings: settings)
        return config
    }

    func revision(of config: ConfigName) async throws -> Revision { try await configInfo(config).revision }
}
