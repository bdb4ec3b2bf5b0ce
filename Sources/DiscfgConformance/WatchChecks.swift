import DiscfgCore
import Foundation

public struct WatchChecks: Sendable {
    let conformance: StoreConformance

    /// Writes r1…r6: put /a/x, put /ab, put /a/y, put /b, delete /a/x, put /a/x/deep.
    static func prepare(_ store: any ConfigStore, settings: ConfigSettings = ConfigSettings()) async throws -> ConfigName {
        let config = try await store.makeConfig("app", settings: settings)
        try await store.set("/a/x", "1", in: config)
        try await store.set("/ab", "2", in: config)
        try await store.set("/a/y", "3", in: config)
        try await store.set("/b", "4", in: config)
        _ = try await store.delete(Key("/a/x"), in: config, conditions: [])
        try await store.set("/a/x/deep", "6", in: config)
        return config
    }

    public func prefixWatchReplaysThenFollowsWithoutGapOrRepeat() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            let watch = try WatchRecorder(await store.watch(config, scope: .prefix(KeyPrefix("/a")), from: 2))
            let replayed = try await watch.waitForEvents(3)
            expectEqual(replayed.map(\.revision), [3, 5, 6])

            try await store.set("/ab", "excluded", in: config) // 7
            try await store.set("/a/z", "8", in: config) // 8
            try await store.set("/a", "excluded: the directory's own name", in: config) // 9
            _ = try await store.delete(Key("/a/y"), in: config, conditions: []) // 10
            try await store.set("/a/end", "11", in: config) // 11
            let events = try await watch.waitForEvents(6)
            expectEqual(events.map(\.revision), [3, 5, 6, 8, 10, 11])
            expectEqual(events.map(\.kind), [.put, .delete, .put, .put, .delete, .put])
            expectEqual(events.map(\.key.path), ["/a/y", "/a/x", "/a/x/deep", "/a/z", "/a/y", "/a/end"])
            expectEqual(events[3].item?.value, Data(text: "8"))
            expectEqual(events[4].prevItem?.value, Data(text: "3"))
            expectNil(watch.ending)
        }
    }

    public func keyWatchSeesOnlyThatKey() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            let watch = try WatchRecorder(await store.watch(config, scope: .key(Key("/a/x")), from: 1))
            try await expectEqual(watch.waitForEvents(2).map(\.revision), [1, 5])

            try await store.set("/a/xy", "sibling", in: config) // 7
            try await store.set("/a/x-", "sibling", in: config) // 8
            try await store.set("/a/x", "back", in: config) // 9
            try await store.set("/a/x/deeper", "child", in: config) // 10
            try await store.set("/a/x", "again", in: config) // 11
            let events = try await watch.waitForEvents(4)
            expectEqual(events.map(\.revision), [1, 5, 9, 11])
            expectEqual(events.map(\.kind), [.put, .delete, .put, .put])
            expect(events.allSatisfy { $0.key.path == "/a/x" }, "keys \(events.map(\.key.path))")
            expectEqual(events[2].item?.version, 1)
            expectEqual(events[3].item?.version, 2)
        }
    }

    public func rootWatchFromRevisionOneSeesEverything() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            let watch = WatchRecorder(await store.watch(config, scope: .prefix(.root), from: 1))
            try await store.set("/c", "7", in: config)
            try await expectEqual(watch.waitForEvents(7).map(\.revision), [1, 2, 3, 4, 5, 6, 7])
        }
    }

    public func watchFromNowDeliversOnlyLaterChanges() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            let watch = WatchRecorder(await store.watch(config, scope: .prefix(.root), from: nil))
            try await store.set("/c", "7", in: config)
            try await store.set("/a/x", "8", in: config)
            let events = try await watch.waitForEvents(2)
            expectEqual(events.map(\.revision), [7, 8])
        }
    }

    public func manyWritesWhileWatchingArriveInOrderExactlyOnce() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let watch = WatchRecorder(await store.watch(config, scope: .prefix(.root), from: 1))
            for index in 1...120 {
                try await store.set("/k\(index % 7)", "\(index)", in: config)
            }
            let events = try await watch.waitForEvents(120)
            expectEqual(events.map(\.revision.rawValue), Array(1...120))
        }
    }

    public func watchFromACompactedRevisionEndsWithCompacted() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store, settings: ConfigSettings(history: .last(2)))
            try await expectEqual(store.configInfo(config).compactedRevision, 4)

            let stale = WatchRecorder(await store.watch(config, scope: .prefix(.root), from: 4))
            try await expectEqual(stale.waitForEnding().code, .compacted)
            expectEmpty(stale.events)

            let fresh = WatchRecorder(await store.watch(config, scope: .prefix(.root), from: 5))
            try await expectEqual(fresh.waitForEvents(2).map(\.revision), [5, 6])
        }
    }

    public func cancellingTheConsumerEndsTheWatch() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let watch = WatchRecorder(await store.watch(config, scope: .prefix(.root), from: nil))
            try await store.set("/k", "1", in: config)
            _ = try await watch.waitForEvents(1)
            watch.cancel()
            let ending = try await watch.waitForEnding()
            guard case .finished = ending else {
                fail("cancelling should end the sequence normally, got \(ending)")
                return
            }
            try await store.set("/k", "2", in: config)
            expectEqual(watch.events.count, 1)
        }
    }

    public func deletingTheConfigEndsTheWatchWithConfigNotFound() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let watch = WatchRecorder(await store.watch(config, scope: .prefix(.root), from: 1))
            try await store.set("/k", "1", in: config)
            _ = try await watch.waitForEvents(1)
            try await store.deleteConfig(config)
            try await expectEqual(watch.waitForEnding().code, .configNotFound)
            expectEqual(watch.events.count, 1)
        }
    }

    /// A config deleted and at once created again is a new config, whose revisions start
    /// afresh: a watch of the old one ends rather than read the new one's changes as its own.
    public func aConfigDeletedAndCreatedAgainEndsTheWatch() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/k", "1", in: config)
            let watch = WatchRecorder(await store.watch(config, scope: .prefix(.root), from: 1))
            _ = try await watch.waitForEvents(1)
            try await store.deleteConfig(config)
            _ = try await store.makeConfig()
            try await store.set("/k", "new 1", in: config)
            try await store.set("/k", "new 2", in: config)
            try await expectEqual(watch.waitForEnding().code, .configNotFound)
            expectEqual(watch.events.map(\.item?.text), ["1"], "no change of the new config reaches the old one's watch")
        }
    }

    public func expiryReachesAWatcherWithoutAnyOtherWrite() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            let item = try await require(store.set("/lease", "mine", in: config, options: SetOptions(ttlSeconds: 10)).item)
            let watch = WatchRecorder(await store.watch(config, scope: .key(item.key), from: 2))
            clock.advance(seconds: 10)
            let events = try await watch.waitForEvents(1)
            expectEqual(events.count, 1)
            let expire = try require(events.first)
            expectEqual(expire.kind, .expire)
            expectEqual(expire.revision, 2)
            expectEqual(expire.prevItem, item)
            try await expectEqual(store.revision(of: config), 2)
        }
    }

    public func eventBatchesReportHowFarTheyRead() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            let root = WatchScope.prefix(.root)

            let first = try await store.events(in: config, scope: root, from: 1, limit: 2)
            expectEqual(first.events.map(\.revision), [1, 2])
            expectEqual(first.through, 2)
            expect(first.hasMore, "a batch short of the end says nothing more follows")

            let rest = try await store.events(in: config, scope: root, from: 3, limit: 10)
            expectEqual(rest.events.map(\.revision), [3, 4, 5, 6])
            expectEqual(rest.through, 6)
            expect(!rest.hasMore, "the last batch says more follows")

            // Trailing events outside the scope still count as read.
            let scoped = try await store.events(in: config, scope: .prefix(KeyPrefix("/a/")), from: 4, limit: 10)
            expectEqual(scoped.events.map(\.revision), [5, 6])
            let onlyB = try await store.events(in: config, scope: .key(Key("/b")), from: 1, limit: 10)
            expectEqual(onlyB.events.map(\.revision), [4])
            expectEqual(onlyB.through, 6)
            expect(!onlyB.hasMore, "the last batch says more follows")

            let caughtUp = try await store.events(in: config, scope: root, from: 7, limit: 10)
            expectEmpty(caughtUp.events)
            expectEqual(caughtUp.through, 6)
            expect(!caughtUp.hasMore, "the last batch says more follows")

            let fromZero = try await store.events(in: config, scope: root, from: 0, limit: 1)
            expectEqual(fromZero.events.map(\.revision), [1])
        }
    }

    /// The arguments ``walkingEventBatchesYieldsEveryEventOnce(limit:)`` is checked with.
    public static let walkingEventBatchesYieldsEveryEventOnceArguments: [Int] = [1, 2, 3, 4]

    public func walkingEventBatchesYieldsEveryEventOnce(limit: Int) async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            for (scope, expected) in try [(WatchScope.prefix(KeyPrefix("/a/")), [1, 3, 5, 6]), (.prefix(.root), [1, 2, 3, 4, 5, 6]), (.key(Key("/a/x")), [1, 5])] {
                var from = Revision(1)
                var seen: [UInt64] = []
                for _ in 0..<20 {
                    let batch = try await store.events(in: config, scope: scope, from: from, limit: limit)
                    expect(batch.events.count <= limit, "a batch of \(batch.events.count) events, limit \(limit)")
                    expect(batch.events.allSatisfy { $0.revision >= from && $0.revision <= batch.through }, "revisions \(batch.events.map(\.revision)) from \(from) through \(batch.through)")
                    if batch.hasMore { expectEqual(batch.through, batch.events.last?.revision) }
                    seen += batch.events.map(\.revision.rawValue)
                    from = batch.through.next
                    if !batch.hasMore { break }
                }
                expectEqual(seen, expected.map(UInt64.init), "scope \(scope)")
                expectEqual(from, 7, "scope \(scope)")
            }
        }
    }

    public func eventsFromACompactedRevisionThrowCompacted() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store, settings: ConfigSettings(history: .last(2)))
            try await expectError(.compacted) { try await store.events(in: config, scope: .prefix(.root), from: 4, limit: 10) }
            try await expectError(.compacted) { try await store.events(in: config, scope: .prefix(.root), from: 1, limit: 10) }
            try await expectEqual(store.events(in: config, scope: .prefix(.root), from: 5, limit: 10).events.map(\.revision), [5, 6])
        }
    }

    public func eventsRejectBadLimits() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            for limit in [0, -1, Limits.maxPageSize + 1] {
                try await expectError(.invalidArgument, "limit \(limit)") {
                    try await store.events(in: config, scope: .prefix(.root), from: 1, limit: limit)
                }
            }
        }
    }
}

extension StoreConformance {
    /// The checks of watch and event batches.
    public var watch: WatchChecks { WatchChecks(conformance: self) }
}
