import DiscfgCore
import Foundation

public struct HistoryChecks: Sendable {
    let conformance: StoreConformance

    /// `/k`: v1 @1, v2 @2, (other @3), deleted @4, v3 @5; `/other` written @3.
    static func prepare(_ store: any ConfigStore, settings: ConfigSettings = ConfigSettings()) async throws -> (ConfigName, [Event]) {
        let config = try await store.makeConfig("app", settings: settings)
        var events: [Event] = []
        events.append(try await store.set("/k", "v1", in: config))
        events.append(try await store.set("/k", "v2", in: config))
        events.append(try await store.set("/other", "o", in: config))
        events.append(try await store.delete(Key("/k"), in: config, conditions: []))
        events.append(try await store.set("/k", "v3", in: config))
        return (config, events)
    }

    public func historyIsNewestFirstAndOnlyForTheKey() async throws {
        try await conformance.withStore { store, _ in
            let (config, events) = try await Self.prepare(store)
            let page = try await store.history(of: Key("/k"), in: config, HistoryQuery())
            expectEqual(page.events, [events[4], events[3], events[1], events[0]])
            expectEqual(page.events.map(\.kind), [.put, .delete, .put, .put])
            expectNil(page.nextBefore)
            expectEqual(page.compactedRevision, .zero)
            try await expectEmpty(store.fullHistory(of: Key("/never"), in: config))
        }
    }

    /// The arguments ``historyPaginatesWithNextBefore(limit:)`` is checked with.
    public static let historyPaginatesWithNextBeforeArguments: [Int] = [1, 2, 3]

    public func historyPaginatesWithNextBefore(limit: Int) async throws {
        try await conformance.withStore { store, _ in
            let (config, _) = try await Self.prepare(store)
            var revisions: [UInt64] = []
            var query = HistoryQuery(limit: limit)
            var pages = 0
            while true {
                let page = try await store.history(of: Key("/k"), in: config, query)
                expect(page.events.count <= limit, "a page of \(page.events.count) events, limit \(limit)")
                expect(!page.events.isEmpty, "an empty page before the history ended")
                revisions += page.events.map(\.revision.rawValue)
                pages += 1
                guard let before = page.nextBefore else { break }
                expectEqual(before, page.events.last?.revision)
                query.before = before
                if pages > 10 { fail("pagination does not end"); break }
            }
            expectEqual(revisions, [5, 4, 2, 1])
            expectEqual(pages, (4 + limit - 1) / limit)
        }
    }

    public func historyRejectsBadLimits() async throws {
        try await conformance.withStore { store, _ in
            let (config, _) = try await Self.prepare(store)
            for limit in [0, -1, Limits.maxPageSize + 1] {
                try await expectError(.invalidArgument, "limit \(limit)") { try await store.history(of: Key("/k"), in: config, HistoryQuery(limit: limit)) }
            }
        }
    }

    public func getAtEveryPastRevisionReturnsTheValueThen() async throws {
        try await conformance.withStore { store, _ in
            let (config, events) = try await Self.prepare(store)
            let key = try Key("/k")
            let expected: [Item?] = [nil, events[0].item, events[1].item, events[1].item, nil, events[4].item]
            for (revision, item) in expected.enumerated() {
                let read = try await store.get(key, in: config, atRevision: Revision(UInt64(revision)))
                expectEqual(read, item, "at revision \(revision)")
            }
            let other: [Item?] = [nil, nil, nil, events[2].item, events[2].item, events[2].item]
            for (revision, item) in other.enumerated() {
                try await expectEqual(store.get(Key("/other"), in: config, atRevision: Revision(UInt64(revision))), item, "/other at \(revision)")
            }
        }
    }

    public func getAtAFutureRevisionIsInvalid() async throws {
        try await conformance.withStore { store, _ in
            let (config, _) = try await Self.prepare(store)
            try await expectError(.invalidArgument) { try await store.get(Key("/k"), in: config, atRevision: 6) }
            try await expectError(.invalidArgument) { try await store.get(Key("/never"), in: config, atRevision: 100) }
        }
    }

    public func keepLastNCompactsOlderHistory() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig("app", settings: ConfigSettings(history: .last(3)))
            let old = try await require(store.set("/old", "o", in: config).item) // 1
            var puts: [Event] = []
            for value in 2...6 { puts.append(try await store.set("/k", "v\(value)", in: config)) } // 2...6

            try await expectEqual(store.configInfo(config).compactedRevision, 3)
            let history = try await store.history(of: Key("/k"), in: config, HistoryQuery())
            expectEqual(history.events.map(\.revision), [6, 5, 4])
            expectEqual(history.compactedRevision, 3)

            try await expectError(.compacted, "/k changed after revision 2") { try await store.get(Key("/k"), in: config, atRevision: 2) }
            try await expectError(.compacted) { try await store.get(Key("/k"), in: config, atRevision: 1) }
            try await expectEqual(store.get(Key("/k"), in: config, atRevision: 3), puts[1].item, "revision 3 is still answerable from the event at 4")
            try await expectEqual(store.get(Key("/k"), in: config, atRevision: 4), puts[2].item)
            try await expectEqual(store.get(Key("/old"), in: config, atRevision: 1), old, "an unchanged key is readable at any revision")
            try await expectEqual(store.get(Key("/old"), in: config, atRevision: 2), old)
        }
    }

    public func updatingRetentionCompactsAtOnce() async throws {
        try await conformance.withStore { store, _ in
            let (config, events) = try await Self.prepare(store, settings: ConfigSettings(history: .forever))
            try await expectEqual(store.configInfo(config).compactedRevision, .zero)
            let info = try await store.updateConfig(config, ConfigSettingsPatch(history: .last(2)))
            expectEqual(info.compactedRevision, 3)
            try await expectEqual(store.configInfo(config).compactedRevision, 3)
            try await expectEqual(store.fullHistory(of: Key("/k"), in: config), [events[4], events[3]])
            try await expectError(.compacted) { try await store.get(Key("/k"), in: config, atRevision: 2) }
            try await expectEqual(store.get(Key("/k"), in: config, atRevision: 3), events[1].item)
            try await expectEqual(store.get(Key("/other"), in: config, atRevision: 3), events[2].item)
            try await expectError(.compacted, "whether /other existed before its compacted creation is unknown") {
                try await store.get(Key("/other"), in: config, atRevision: 2)
            }
        }
    }

    public func keepDaysCompactsAsTheClockMoves() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig("app", settings: ConfigSettings(history: .days(1)))
            try await store.set("/k", "a", in: config) // 1
            try await store.set("/k", "b", in: config) // 2
            clock.advance(seconds: 3600)
            let third = try await store.set("/k", "c", in: config) // 3
            try await expectEqual(store.configInfo(config).compactedRevision, .zero, "nothing is a day old yet")

            clock.advance(seconds: 86_400 - 1800)
            try await store.set("/k", "d", in: config) // 4: revisions 1 and 2 are now older than a day
            try await expectEqual(store.configInfo(config).compactedRevision, 2)
            try await expectEqual(store.fullHistory(of: Key("/k"), in: config).map(\.revision), [4, 3])
            try await expectError(.compacted) { try await store.get(Key("/k"), in: config, atRevision: 1) }
            try await expectEqual(store.get(Key("/k"), in: config, atRevision: 2)?.value, Data(text: "b"))
            try await expectEqual(store.get(Key("/k"), in: config, atRevision: 3), third.item)
        }
    }

    /// Many changes to a few keys — puts, deletes, re-creations, transactions that change
    /// several keys in one revision, prefix deletes — then compaction and more changes:
    /// a read at every revision returns what the key held then, and each key's history,
    /// whole or in pages, is its events newest first. A store that finds a key's past
    /// through links between its events must follow them across all of this.
    public func pastReadsAndHistoryFollowManyChanges() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig(settings: ConfigSettings(history: .forever))
            let keys = try ["/a", "/b", "/c"].map { try Key($0) }
            // What each key held after each revision, and its events.
            var states: [[Key: Item]] = [[:]]
            var events: [Key: [Event]] = [:]
            var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
            func next(_ bound: Int) -> Int {
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return Int((seed >> 33) % UInt64(bound))
            }
            // A transaction's events share a revision; a prefix delete's each have one.
            func apply(_ made: [Event]) {
                for event in made {
                    while states.count <= Int(event.revision.rawValue) { states.append(states.last ?? [:]) }
                    states[states.count - 1][event.key] = event.item
                    events[event.key, default: []].append(event)
                }
            }
            func change(_ count: Int) async throws {
                for step in 0..<count {
                    let index = next(keys.count)
                    let key = keys[index]
                    switch next(10) {
                    case 0...4:
                        apply([try await store.set(key.path, "v\(states.count)-\(step)", in: config)])
                    case 5, 6:
                        if states.last?[key] != nil { apply([try await store.delete(key, in: config, conditions: [])]) }
                    case 7, 8:
                        let other = keys[(index + 1 + next(keys.count - 1)) % keys.count]
                        let result = try await store.transact(Transaction(success: [
                            .put(key, Data("t\(states.count)".utf8)), .put(other, Data("u\(states.count)".utf8)),
                        ]), in: config)
                        apply(result.events)
                    default:
                        apply(try await store.deletePrefix(.root, in: config))
                    }
                }
            }
            func verify(from oldest: Int) async throws {
                let latest = states.count - 1
                try await expectEqual(store.revision(of: config), Revision(UInt64(latest)))
                for revision in oldest...latest {
                    for key in keys {
                        let read = try await store.get(key, in: config, atRevision: Revision(UInt64(revision)))
                        expectEqual(read, states[revision][key], "\(key) at revision \(revision)")
                    }
                }
                for key in keys {
                    let expected = Array((events[key] ?? []).filter { $0.revision.rawValue > UInt64(oldest) }.reversed())
                    try await expectEqual(store.fullHistory(of: key, in: config), expected, "history of \(key)")
                    var paged: [Event] = []
                    var before: Revision?
                    for _ in 0..<100 {
                        let page = try await store.history(of: key, in: config, HistoryQuery(limit: 7, before: before))
                        paged += page.events
                        guard let next = page.nextBefore else { break }
                        before = next
                    }
                    expectEqual(paged, expected, "history of \(key) in pages of 7")
                }
            }
            try await change(60)
            try await verify(from: 0)
            let compacted = (states.count - 1) / 2
            _ = try await store.compact(config, through: Revision(UInt64(compacted)))
            try await change(40)
            try await verify(from: compacted)
        }
    }

    /// Compaction through a revision (etcd's `compact`): older reads and watches are
    /// refused, later ones still work, and nothing else changes.
    public func compactDropsHistoryThroughARevision() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig(settings: ConfigSettings(history: .forever))
            for value in 1...5 { try await store.set("/k", String(value), in: config) }
            try await store.set("/other", "x", in: config)
            let info = try await store.compact(config, through: 3)
            expectEqual(info.compactedRevision, 3)
            expectEqual(info.revision, 6)
            try await expectEqual(store.configInfo(config).compactedRevision, 3)
            try await expectError(.compacted) { try await store.events(in: config, scope: .prefix(.root), from: 3, limit: 10) }
            try await expectEqual(store.events(in: config, scope: .prefix(.root), from: 4, limit: 10).events.map(\.revision), [4, 5, 6])
            try await expectEqual(store.get(Key("/k"), in: config, atRevision: 4)?.text, "4")
            try await expectEqual(store.get(Key("/k"), in: config)?.text, "5")
            try await expectEqual(store.fullHistory(of: Key("/k"), in: config).map(\.revision), [5, 4])
            try await expectEqual(store.compact(config, through: 2).compactedRevision, 3, "an older revision changes nothing")
            try await expectEqual(store.compact(config, through: 3).compactedRevision, 3)
            try await expectError(.invalidArgument, field: "revision") { try await store.compact(config, through: 7) }
            try await expectError(.configNotFound) { try await store.compact(try ConfigName("missing"), through: 1) }
            try await expectEqual(store.compact(config, through: 6).compactedRevision, 6)
            try await expectEmpty(store.events(in: config, scope: .prefix(.root), from: 7, limit: 10).events)
            try await store.set("/k", "6", in: config)
            try await expectEqual(store.events(in: config, scope: .prefix(.root), from: 7, limit: 10).events.map(\.item?.text), ["6"])
        }
    }
}

extension StoreConformance {
    /// The checks of history and reads at a past revision.
    public var history: HistoryChecks { HistoryChecks(conformance: self) }
}
