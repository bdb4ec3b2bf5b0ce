import DiscfgAWS
import DiscfgConformance
import DiscfgCore
@testable import DiscfgDynamoDB
import Foundation
import Synchronization
import Testing

/// A change past one DynamoDB transaction, caught between its steps: readers see it whole
/// or not at all, and the next writer finishes what a stopped writer left.
@Suite("DynamoDB: a change past one transaction, between its steps")
struct DynamoDBBulkChangeTests {
    struct Stopped: Error {}

    /// A config with `/app/old0`…`/app/old9`, and a replacing import of `/app/` that keeps
    /// old0…old4 with new values, drops old5…old9 and adds 120 keys.
    static func prepared(_ store: DynamoDBStore) async throws -> (ConfigName, ConfigSnapshot) {
        let config = try await store.makeConfig()
        for index in 0..<10 { _ = try await store.set(Key("/app/old\(index)"), to: Data("before".utf8), in: config) }
        _ = try await store.set(Key("/other"), to: Data("o".utf8), in: config)
        var entries = try (0..<5).map { ConfigSnapshot.Entry(key: try Key("/app/old\($0)"), value: Data("after".utf8)) }
        entries += try (0..<120).map { ConfigSnapshot.Entry(key: try Key(String(format: "/app/new%03d", $0)), value: Data("new".utf8)) }
        return (config, ConfigSnapshot(items: entries))
    }

    /// What every reader sees of the config before the import (revision 11).
    static func expectBefore(_ store: DynamoDBStore, _ config: ConfigName) async throws {
        #expect(try await store.revision(of: config) == 11)
        #expect(try await store.get(Key("/app/old0"), in: config)?.text == "before")
        #expect(try await store.get(Key("/app/old9"), in: config)?.text == "before")
        #expect(try await store.get(Key("/app/new000"), in: config) == nil)
        #expect(try await store.get(Key("/app/new000"), in: config, atRevision: 11) == nil)
        #expect(try await store.list(in: config, ListQuery(limit: 1000)).items.count == 11)
        #expect(try await store.events(in: config, scope: .prefix(.root), from: 12, limit: 1000).events.isEmpty)
    }

    /// What every reader sees of the config once the import committed (revision 12).
    static func expectAfter(_ store: DynamoDBStore, _ config: ConfigName) async throws {
        #expect(try await store.revision(of: config) == 12)
        #expect(try await store.get(Key("/app/old0"), in: config)?.text == "after")
        #expect(try await store.get(Key("/app/old0"), in: config)?.version == 2)
        #expect(try await store.get(Key("/app/old9"), in: config) == nil)
        #expect(try await store.get(Key("/app/new119"), in: config)?.modRevision == 12)
        #expect(try await store.get(Key("/app/old9"), in: config, atRevision: 11)?.text == "before")
        #expect(try await store.get(Key("/app/old0"), in: config, atRevision: 11)?.text == "before")
        #expect(try await store.get(Key("/app/new000"), in: config, atRevision: 12)?.text == "new")
        let listed = try await store.list(in: config, ListQuery(limit: 1000)).items
        #expect(listed.count == 126, "old0…4, 120 new keys and /other")
        #expect(listed.filter { $0.modRevision == 12 }.count == 125)
        let events = try await store.events(in: config, scope: .prefix(.root), from: 12, limit: 1000).events
        #expect(events.count == 130 && Set(events.map(\.revision)) == [12])
        #expect(try await store.history(of: Key("/app/old0"), in: config, HistoryQuery()).events.map(\.revision) == [12, 1])
        #expect(try await store.history(of: Key("/app/old9"), in: config, HistoryQuery()).events.map(\.revision) == [12, 10])
        #expect(try await store.changeLog(in: config, ChangeLogQuery(revision: 12)).first?.events.count == 130)
        var exported = 0
        for try await page in try await store.exportPages(config, maxBytes: Limits.maxPageBytes, atRevision: 11) { exported += page.count }
        #expect(exported == 11, "the config as it was before, exported")
    }

    @Test func readersSeeNothingOfAStagedChange() async throws {
        let store = try await makeStore()
        let (config, snapshot) = try await Self.prepared(store)
        let checked = Mutex(false)
        store.afterBulkStep.withLock {
            $0 = { step in
                guard step == .staging else { return }
                try await Self.expectBefore(store, config)
                checked.withLock { $0 = true }
            }
        }
        _ = try await store.importSnapshot(snapshot, into: config, options: ImportOptions(replace: true, prefix: KeyPrefix("/app/")))
        #expect(checked.withLock { $0 })
        try await Self.expectAfter(store, config)
        try await expectSettled(store, config)
    }

    @Test func aChangeWhoseWriterStoppedWhileStagingIsUndoneOnceItsHoldRunsOut() async throws {
        let clock = ManualClock()
        let store = try await makeStore(clock: clock)
        let (config, snapshot) = try await Self.prepared(store)
        store.afterBulkStep.withLock { $0 = { _ in throw Stopped() } }
        await #expect(throws: Stopped.self) { try await store.importSnapshot(snapshot, into: config, options: ImportOptions(replace: true, prefix: KeyPrefix("/app/"))) }
        store.afterBulkStep.withLock { $0 = nil }
        let marked = try await store.connection.queryAll(store.keyRange(config, from: "/", to: "/\u{10FFFF}", consistent: true)).filter { $0[.pending] != nil }
        #expect(marked.count == 130, "staged: every key the import changes is marked")
        try await Self.expectBefore(store, config)

        // The next change waits for the hold, then undoes the change and is made.
        clock.advance(seconds: BulkChange.lease + 1)
        #expect(try await store.set(Key("/next"), to: Data("n".utf8), in: config).revision == 12)
        #expect(try await store.get(Key("/app/old0"), in: config)?.text == "before")
        #expect(try await store.get(Key("/app/new000"), in: config) == nil)
        #expect(try await store.list(in: config, ListQuery(limit: 1000)).items.count == 12)
        #expect(try await store.events(in: config, scope: .prefix(.root), from: 12, limit: 1000).events.map(\.key.path) == ["/next"])
        try await expectSettled(store, config)
    }

    @Test func aChangeWhoseWriterStoppedAfterCommittingIsWholeForReadersAndFoldedByTheNextWriter() async throws {
        let store = try await makeStore()
        let (config, snapshot) = try await Self.prepared(store)
        store.afterBulkStep.withLock { $0 = { step in if step == .committed { throw Stopped() } } }
        await #expect(throws: Stopped.self) { try await store.importSnapshot(snapshot, into: config, options: ImportOptions(replace: true, prefix: KeyPrefix("/app/"))) }
        store.afterBulkStep.withLock { $0 = nil }
        let marked = try await store.connection.queryAll(store.keyRange(config, from: "/", to: "/\u{10FFFF}", consistent: true)).filter { $0[.pending] != nil }
        #expect(marked.count == 130, "committed but not folded")
        try await Self.expectAfter(store, config)

        #expect(try await store.set(Key("/next"), to: Data("n".utf8), in: config).revision == 13)
        #expect(try await store.get(Key("/app/old0"), in: config)?.text == "after")
        #expect(try await store.get(Key("/app/old9"), in: config) == nil)
        #expect(try await store.get(Key("/app/old9"), in: config, atRevision: 11)?.text == "before")
        #expect(try await store.get(Key("/app/new119"), in: config)?.modRevision == 12)
        #expect(try await store.list(in: config, ListQuery(limit: 1000)).items.count == 127)
        #expect(try await store.history(of: Key("/app/old9"), in: config, HistoryQuery()).events.map(\.revision) == [12, 10])
        try await expectSettled(store, config)
    }

    @Test func aWriterHeldUpWhileMarkingIsUndoneByTheNextWriterAndLeavesNothing() async throws {
        let clock = ManualClock()
        let store = try await makeStore(clock: clock)
        let (config, snapshot) = try await Self.prepared(store)
        // 130 events, then 130 marks, 98 writes a transaction: the second one ends with
        // the first marks.
        let (reached, reaching) = AsyncStream<Void>.makeStream()
        let (released, release) = AsyncStream<Void>.makeStream()
        store.afterStagingTransaction.withLock {
            $0 = { index in
                guard index == 1 else { return }
                reaching.yield()
                for await _ in released { break }
            }
        }
        let importing = Task { try await store.importSnapshot(snapshot, into: config, options: ImportOptions(replace: true, prefix: KeyPrefix("/app/"))) }
        for await _ in reached { break }
        let marked = try await store.connection.queryAll(store.keyRange(config, from: "/", to: "/\u{10FFFF}", consistent: true)).filter { $0[.pending] != nil }
        #expect(marked.count > 0 && marked.count < 130, "some keys marked: \(marked.count)")
        try await Self.expectBefore(store, config)

        // Its hold runs out: the next writer undoes it, then the writer goes on and is refused.
        clock.advance(seconds: BulkChange.lease + 1)
        #expect(try await store.set(Key("/next"), to: Data("n".utf8), in: config).revision == 12)
        release.yield()
        do {
            _ = try await importing.value
            Issue.record("the held-up import was taken")
        } catch let error as DiscfgError {
            #expect(error.code == .unavailable && error.message.contains("nothing was changed"), "\(error.message)")
        }
        try await expectSettled(store, config)
        #expect(try await store.list(in: config, ListQuery(limit: 1000)).items.count == 12)
        #expect(try await store.set(Key("/app/new000"), to: Data("x".utf8), in: config).revision == 13)
    }

    @Test func marksLeftByAChangeThatEndedAreWrittenOver() async throws {
        let store = try await makeStore()
        let config = try await store.makeConfig()
        _ = try await store.set(Key("/kept"), to: Data("before".utf8), in: config)
        // What an ended change could leave: a placeholder for a new key, a mark on a key.
        let mark = PendingMark(id: "ended", place: EventPlace(revision: 99, position: 0), head: [:])
        try await store.transactWrite([
            .put(DynamoDBLayout.itemKey(config, Key("/fresh")).merging(mark.attributes) { $1 }, condition: nil),
            .update(key: DynamoDBLayout.itemKey(config, Key("/kept")), update: {
                var update = Expression("SET \(.pending) = :pend, \(.pendingPlace) = :pat, \(.pendingHead) = :phd")
                update.values = [":pend": .s(mark.id), ":pat": mark.place.attribute, ":phd": .m([:])]
                return update
            }(), condition: nil),
        ])
        #expect(try await store.get(Key("/fresh"), in: config) == nil)
        #expect(try await store.get(Key("/kept"), in: config)?.text == "before")

        // A change in one transaction over the placeholder, one past it over the marked key.
        #expect(try await store.set(Key("/fresh"), to: Data("x".utf8), in: config).revision == 2)
        var entries = try (0..<60).map { ConfigSnapshot.Entry(key: try Key("/k\($0)"), value: Data("v".utf8)) }
        entries.append(ConfigSnapshot.Entry(key: try Key("/kept"), value: Data("after".utf8)))
        #expect(try await store.importSnapshot(ConfigSnapshot(items: entries), into: config, replace: false).revision == 3)
        #expect(try await store.get(Key("/kept"), in: config)?.text == "after")
        #expect(try await store.get(Key("/fresh"), in: config)?.text == "x")
        try await expectSettled(store, config)
    }

    @Test func aChangePastTheLimitIsRefusedWholeAndWritesNothing() async throws {
        let store = try await makeStore()
        let config = try await store.makeConfig()
        let count = BulkChange.maxEvents + 1
        let snapshot = try ConfigSnapshot(items: (0..<count).map { ConfigSnapshot.Entry(key: try Key("/k\($0)"), value: Data("v".utf8)) })
        do {
            _ = try await store.importSnapshot(snapshot, into: config, replace: false)
            Issue.record("a \(count)-key import was taken")
        } catch let error as DiscfgError {
            #expect(error.code == .tooLarge)
            #expect(error.message.contains("\(count) changes") && error.message.contains("in parts"), "\(error.message)")
        }
        #expect(try await store.revision(of: config) == 0)
        try await expectSettled(store, config)
    }

    @Test func keepingTheLastNChangesDeletesADroppedChangeOfManyKeys() async throws {
        let store = try await makeStore()
        let config = try await store.makeConfig("app", settings: ConfigSettings(history: .last(2)))
        let snapshot = try ConfigSnapshot(items: (0..<60).map { ConfigSnapshot.Entry(key: try Key("/k\($0)"), value: Data("v".utf8)) })
        #expect(try await store.importSnapshot(snapshot, into: config, replace: false).revision == 1)
        for value in 0..<3 { _ = try await store.set(Key("/k0"), to: Data("\(value)".utf8), in: config) }
        let raw = try await store.connection.queryAll(store.historyRange(config, from: 1, through: 4))
        #expect(raw.compactMap { $0["sk"]?.string.flatMap(DynamoDBLayout.revision(ofHistorySK:)) } == [3, 4], "the import's 60 events are gone")
        let meta = try await store.meta(config, consistent: true)
        #expect(meta?.purgedRevision == 2)
        #expect(meta?.sharedRevisions.isEmpty == true)
    }
}

/// Expects no change in progress on `config`: no record on its meta item, no marked key
/// item, and no history past its revision.
func expectSettled(_ store: DynamoDBStore, _ config: ConfigName, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let meta = try await store.meta(config, consistent: true)
    #expect(meta?.bulk == nil, "the change's record is gone", sourceLocation: sourceLocation)
    let items = try await store.connection.queryAll(store.keyRange(config, from: "/", to: "/\u{10FFFF}", consistent: true))
    #expect(items.filter { $0[.pending] != nil }.isEmpty, "no key item is marked", sourceLocation: sourceLocation)
    let placeholders = items.filter { $0[.modRevision] == nil && $0[.sk]?.string != DynamoDBLayout.metaSK }
    #expect(placeholders.isEmpty, "no placeholder of a new key: \(placeholders.compactMap { $0[.sk]?.string })", sourceLocation: sourceLocation)
    let revision = meta?.info.revision ?? .zero
    let beyond = try await store.connection.queryAll(store.historyRange(config, from: revision.next, through: Revision(UInt64.max)))
    #expect(beyond.isEmpty, "no history past the config's revision", sourceLocation: sourceLocation)
}
