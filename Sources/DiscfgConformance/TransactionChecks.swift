import DiscfgCore
import Foundation

/// Multi-key transactions: comparisons, branches, one revision per transaction, and
/// atomicity under concurrency.
public struct TransactionChecks: Sendable {
    let conformance: StoreConformance

    private func key(_ path: String) throws -> Key { try Key(path) }
    private func prefix(_ path: String) throws -> KeyPrefix { try KeyPrefix(path) }

    public func successRunsWhenEveryComparisonHoldsAndMakesOneRevision() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/old", "gone soon", in: config)
            try await store.set("/b", "1", in: config)
            let transaction = Transaction(
                compares: [
                    Comparison(.key(try key("/lock")), .equal, .version(0)),
                    Comparison(.key(try key("/b")), .equal, .value(Data(text: "1"))),
                ],
                success: [
                    .put(try key("/lock"), Data(text: "me"), contentType: "text/plain"),
                    .put(try key("/b"), Data(text: "2")),
                    .delete(try key("/old")),
                    .get(try key("/b")),
                ],
                failure: [.get(try key("/lock"))]
            )
            let result = try await store.transact(transaction, in: config)
            expect(result.succeeded, "the transaction ran its failure branch")
            expectEqual(result.revision, 3)
            try await expectEqual(store.revision(of: config), 3)
            expectEqual(result.events.map(\.key.path), ["/lock", "/b", "/old"])
            expect(result.events.allSatisfy { $0.revision == 3 }, "revisions \(result.events.map(\.revision))")
            expectEqual(result.events.map(\.kind), [.put, .put, .delete])
            guard result.responses.count == 4,
                  case .put(let lock) = result.responses[0], case .put(let b) = result.responses[1],
                  case .delete(let deleted) = result.responses[2], case .get(let read) = result.responses[3]
            else {
                fail("responses do not match the operations: \(result.responses)")
                return
            }
            expectEqual(lock.item?.version, 1)
            expectEqual(lock.item?.createRevision, 3)
            expectEqual(lock.item?.modRevision, 3)
            expectNil(lock.prevItem)
            expectEqual(lock.item?.contentType, "text/plain")
            expectEqual(b.item?.version, 2)
            expectEqual(b.item?.createRevision, 2)
            expectEqual(b.prevItem?.text, "1")
            expectEqual(deleted.map(\.prevItem?.text), ["gone soon"])
            expectEqual(read.map(\.text), ["2"], "a get sees the branch's earlier put")
            try await expectEqual(store.get(key("/lock"), in: config)?.text, "me")
            try await expectNil(store.get(key("/old"), in: config))
            let events = try await store.events(in: config, scope: .prefix(.root), from: 3, limit: 10).events
            expectEqual(events.map(\.key.path), ["/lock", "/b", "/old"], "events of one transaction come in the order it made them")
            expect(events.allSatisfy { $0.revision == 3 }, "revisions \(events.map(\.revision))")
            try await expectEqual(store.fullHistory(of: key("/b"), in: config).map(\.revision), [3, 2])
        }
    }

    public func failureRunsWhenAComparisonFailsAndReadsChangeNothing() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/lock", "them", in: config)
            let before = try await store.observableState(of: config)
            let result = try await store.transact(Transaction(
                compares: [Comparison(.key(try key("/lock")), .equal, .version(0))],
                success: [.put(try key("/lock"), Data(text: "me"))],
                failure: [.get(try key("/lock")), .get(try key("/absent"))]
            ), in: config)
            expect(!result.succeeded, "the transaction ran its success branch")
            expectEqual(result.revision, 1)
            expectEmpty(result.events)
            expectEqual(result.responses.count, 2)
            if case .get(let items) = result.responses.first { expectEqual(items.map(\.text), ["them"]) } else { fail("first response is not a get") }
            if case .get(let items) = result.responses.last { expectEmpty(items) } else { fail("second response is not a get") }
            try await expectEqual(store.observableState(of: config), before)
        }
    }

    /// etcd's rules: an absent key has version, createRevision and modRevision 0 and no
    /// value; a prefix holds when every key under it does; `exists` asks for any key.
    public func comparisonsFollowEtcdsRules() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            try await store.set("/a", "m", in: config)                 // rev 1, version 1
            try await store.set("/a", "n", in: config)                 // rev 2, version 2
            try await store.set("/dir/x", "1", in: config)             // rev 3
            try await store.set("/dir/y", "2", in: config)             // rev 4
            try await store.set("/ttl", "t", in: config, options: SetOptions(ttlSeconds: 5))  // rev 5
            clock.advance(seconds: 10)
            let a = try key("/a"), absent = try key("/nope"), dir = try prefix("/dir/"), empty = try prefix("/empty/")
            let cases: [(Comparison, Bool)] = [
                (Comparison(.key(a), .equal, .value(Data(text: "n"))), true),
                (Comparison(.key(a), .notEqual, .value(Data(text: "n"))), false),
                (Comparison(.key(a), .less, .value(Data(text: "o"))), true),
                (Comparison(.key(a), .greater, .value(Data(text: "m"))), true),
                (Comparison(.key(a), .equal, .version(2)), true),
                (Comparison(.key(a), .greater, .version(1)), true),
                (Comparison(.key(a), .less, .version(2)), false),
                (Comparison(.key(a), .equal, .createRevision(1)), true),
                (Comparison(.key(a), .equal, .modRevision(2)), true),
                (Comparison(.key(a), .notEqual, .modRevision(2)), false),
                (Comparison(.key(a), .equal, .exists(true)), true),
                (Comparison(.key(absent), .equal, .version(0)), true),
                (Comparison(.key(absent), .equal, .createRevision(0)), true),
                (Comparison(.key(absent), .less, .modRevision(1)), true),
                (Comparison(.key(absent), .equal, .value(Data())), false),
                (Comparison(.key(absent), .notEqual, .value(Data(text: "x"))), false),
                (Comparison(.key(absent), .equal, .exists(false)), true),
                (Comparison(.key(absent), .notEqual, .exists(false)), false),
                (Comparison(.key(try key("/ttl")), .equal, .exists(false)), true),
                (Comparison(.key(try key("/ttl")), .equal, .version(0)), true),
                (Comparison(.prefix(dir), .greater, .modRevision(2)), true),
                (Comparison(.prefix(dir), .greater, .modRevision(3)), false),
                (Comparison(.prefix(dir), .equal, .version(1)), true),
                (Comparison(.prefix(dir), .equal, .exists(true)), true),
                (Comparison(.prefix(empty), .equal, .exists(true)), false),
                (Comparison(.prefix(empty), .equal, .version(0)), true),
                (Comparison(.prefix(.root), .greater, .createRevision(0)), true),
            ]
            for (comparison, expected) in cases {
                let result = try await store.transact(Transaction(compares: [comparison]), in: config)
                expectEqual(result.succeeded, expected, "\(comparison)")
            }
            let all = try await store.transact(Transaction(compares: cases.filter(\.1).map(\.0)), in: config)
            expect(all.succeeded, "every holding comparison together")
            let mixed = try await store.transact(Transaction(compares: cases.map(\.0)), in: config)
            expect(!mixed.succeeded, "one failing comparison fails the transaction")
        }
    }

    public func deletesAndReadsOfPrefixesSeeTheBranchInOrder() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            for path in ["/tmp/a", "/tmp/b", "/tmp/c/d", "/tmpx", "/keep"] { try await store.set(path, path, in: config) }
            let result = try await store.transact(Transaction(success: [
                .getPrefix(try prefix("/tmp/")),
                .deletePrefix(try prefix("/tmp/")),
                .put(try key("/fresh"), Data(text: "fresh")),
                .getPrefix(try prefix("/tmp/")),
                .delete(try key("/never")),
                .delete(try key("/keep")),
            ]), in: config)
            expect(result.succeeded, "the transaction ran its failure branch")
            expectEqual(result.revision, 6)
            expectEqual(result.events.map(\.key.path), ["/tmp/a", "/tmp/b", "/tmp/c/d", "/fresh", "/keep"])
            expect(result.events.allSatisfy { $0.revision == 6 }, "revisions \(result.events.map(\.revision))")
            guard result.responses.count == 6,
                  case .get(let before) = result.responses[0], case .delete(let deleted) = result.responses[1],
                  case .get(let after) = result.responses[3], case .delete(let never) = result.responses[4]
            else {
                fail("responses do not match the operations: \(result.responses)")
                return
            }
            expectEqual(before.map(\.key.path), ["/tmp/a", "/tmp/b", "/tmp/c/d"])
            expectEqual(deleted.map(\.key.path), ["/tmp/a", "/tmp/b", "/tmp/c/d"])
            expectEmpty(after, "a get sees the branch's earlier delete")
            expectEmpty(never, "deleting an absent key in a transaction is no error")
            let live = try await store.list(in: config, ListQuery()).items.map(\.key.path)
            expectEqual(live, ["/fresh", "/tmpx"])
            try await expectError(.invalidArgument, mentioning: ["/tmp/new"]) {
                try await store.transact(Transaction(success: [.deletePrefix(try prefix("/tmp/")), .put(try key("/tmp/new"), Data(text: "x"))]), in: config)
            }
        }
    }

    /// Ranges of paths (etcd's intervals): `[lower, upper)` in byte order, or open-ended.
    public func rangesCompareReadAndDeleteExactlyTheirKeys() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            for path in ["/a", "/b", "/b/c", "/ba", "/c", "/d"] { try await store.set(path, path, in: config) }
            let middle = KeyRange(lower: "/b", upper: "/c")
            let result = try await store.transact(Transaction(
                compares: [Comparison(.range(middle), .less, .modRevision(5)), Comparison(.range(KeyRange(lower: "/x", upper: nil)), .equal, .exists(false))],
                success: [.getRange(middle), .deleteRange(middle), .getRange(KeyRange(lower: "/", upper: nil)), .deleteRange(KeyRange(lower: "/d", upper: nil))]
            ), in: config)
            expect(result.succeeded, "the transaction ran its failure branch")
            guard result.responses.count == 4,
                  case .get(let before) = result.responses[0], case .delete(let deleted) = result.responses[1],
                  case .get(let rest) = result.responses[2], case .delete(let tail) = result.responses[3]
            else {
                fail("responses do not match the operations: \(result.responses)")
                return
            }
            expectEqual(before.map(\.key.path), ["/b", "/b/c", "/ba"])
            expectEqual(deleted.map(\.key.path), ["/b", "/b/c", "/ba"])
            expectEqual(rest.map(\.key.path), ["/a", "/c", "/d"])
            expectEqual(tail.map(\.key.path), ["/d"])
            expect(result.events.allSatisfy { $0.revision == 7 }, "revisions \(result.events.map(\.revision))")
            try await expectEqual(store.list(in: config, ListQuery()).items.map(\.key.path), ["/a", "/c"])
            let failed = try await store.transact(Transaction(compares: [Comparison(.range(KeyRange(lower: "/a", upper: nil)), .less, .modRevision(2))]), in: config)
            expect(!failed.succeeded, "/c was written at revision 5")
            try await expectError(.invalidArgument) {
                try await store.transact(Transaction(success: [.deleteRange(KeyRange(lower: "/a", upper: "/b")), .put(try key("/a1"), Data(text: "x"))]), in: config)
            }
        }
    }

    public func aTransactionThatChangesNothingKeepsTheRevision() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/a", "1", in: config)
            let before = try await store.observableState(of: config)
            let result = try await store.transact(Transaction(success: [.get(try key("/a")), .delete(try key("/absent")), .deletePrefix(try prefix("/none/"))]), in: config)
            expect(result.succeeded, "the transaction ran its failure branch")
            expectEqual(result.revision, 1)
            expectEmpty(result.events)
            let empty = try await store.transact(Transaction(), in: config)
            expect(empty.succeeded, "the empty transaction failed")
            expectEqual(empty.revision, 1)
            expectEmpty(empty.responses)
            try await expectEqual(store.observableState(of: config), before)
        }
    }

    public func watchersAndEventPagesGetATransactionWhole() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/first", "0", in: config)
            let recorder = WatchRecorder(await store.watch(config, scope: .prefix(.root), from: nil))
            let paths = (0..<6).map { "/k\($0)" }
            let result = try await store.transact(Transaction(success: try paths.map { .put(try key($0), Data(text: $0)) }), in: config)
            try await store.set("/after", "x", in: config)
            let seen = try await recorder.waitForEvents(7)
            expectEqual(seen.map(\.key.path), paths + ["/after"])
            expect(seen.prefix(6).allSatisfy { $0.revision == result.revision }, "revisions \(seen.map(\.revision)), the transaction's \(result.revision)")
            recorder.cancel()
            // A page never splits a revision, whatever its limit or byte budget.
            let page = try await store.events(in: config, scope: .prefix(.root), from: 2, limit: 2, maxBytes: 1)
            expectEqual(page.events.map(\.key.path), paths)
            expectEqual(page.through, 2)
            expect(page.hasMore, "a page short of the end says nothing more follows")
            let next = try await store.events(in: config, scope: .prefix(.root), from: page.through.next, limit: 2)
            expectEqual(next.events.map(\.key.path), ["/after"])
            let scoped = try await store.events(in: config, scope: .key(try key("/k3")), from: 1, limit: 10)
            expectEqual(scoped.events.map(\.key.path), ["/k3"])
        }
    }

    public func pastReadsSeeATransactionAsOneStep() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/from", "token", in: config)
            let moved = try await store.transact(Transaction(
                compares: [Comparison(.key(try key("/to")), .equal, .exists(false))],
                success: [.delete(try key("/from")), .put(try key("/to"), Data(text: "token"))]
            ), in: config)
            expect(moved.succeeded, "the move failed")
            expectEqual(moved.revision, 2)
            try await expectEqual(store.get(key("/from"), in: config, atRevision: 1)?.text, "token")
            try await expectNil(store.get(key("/to"), in: config, atRevision: 1))
            try await expectNil(store.get(key("/from"), in: config, atRevision: 2))
            try await expectEqual(store.get(key("/to"), in: config, atRevision: 2)?.text, "token")
        }
    }

    public func keepLastNDropsWholeTransactions() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig(settings: ConfigSettings(history: .last(2)))
            for round in 1...6 {
                _ = try await store.transact(Transaction(success: try (0..<3).map { .put(try key("/k\($0)"), Data(text: "\(round)")) }), in: config)
            }
            let info = try await store.configInfo(config)
            expectEqual(info.revision, 6)
            expectEqual(info.compactedRevision, 4)
            let events = try await store.events(in: config, scope: .prefix(.root), from: info.compactedRevision.next, limit: 100).events
            expectEqual(events.map(\.revision), [5, 5, 5, 6, 6, 6])
            try await expectEqual(store.fullHistory(of: key("/k1"), in: config).map(\.revision), [6, 5])
            try await expectError(.compacted) { try await store.events(in: config, scope: .prefix(.root), from: 4, limit: 100) }
        }
    }

    /// Malformed transactions are refused before anything is written.
    public func invalidTransactionsChangeNothing() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/a", "1", in: config)
            let before = try await store.observableState(of: config)
            let a = try key("/a")
            let invalid: [(Transaction, DiscfgError.Code)] = [
                (Transaction(success: [.put(a, Data(text: "1")), .put(a, Data(text: "2"))]), .invalidArgument),
                (Transaction(success: [.put(a, Data(text: "1")), .delete(a)]), .invalidArgument),
                (Transaction(success: [.deletePrefix(.root), .put(a, Data(text: "1"))]), .invalidArgument),
                (Transaction(failure: [.delete(a), .put(a, Data(text: "1"))]), .invalidArgument),
                (Transaction(success: [.put(a, Data(count: Limits.maxValueBytes + 1))]), .tooLarge),
                (Transaction(success: [.put(a, Data(text: "1"), ttlSeconds: 0)]), .invalidArgument),
                (Transaction(success: [.put(a, Data(text: "1"), ttlSeconds: -1)]), .invalidArgument),
                (Transaction(success: [.put(a, Data(text: "1"), ttlSeconds: .max)]), .invalidArgument),
                (Transaction(success: [.put(a, Data(text: "1"), contentType: "not a type")]), .invalidArgument),
                (Transaction(compares: [Comparison(.key(a), .less, .exists(true))]), .invalidArgument),
                (Transaction(compares: [Comparison(.key(a), .equal, .value(Data(count: Limits.maxValueBytes + 1)))]), .tooLarge),
                (Transaction(compares: Array(repeating: Comparison(.key(a), .equal, .version(1)), count: Limits.maxTransactionOperations + 1)), .invalidArgument),
                (Transaction(success: Array(repeating: .get(a), count: Limits.maxTransactionOperations + 1)), .invalidArgument),
            ]
            for (transaction, code) in invalid {
                try await expectError(code) { try await store.transact(transaction, in: config) }
            }
            try await expectEqual(store.observableState(of: config), before)
            try await expectError(.configNotFound) { try await store.transact(Transaction(success: [.put(a, Data(text: "1"))]), in: try ConfigName("missing")) }
        }
    }

    static let writers = 4
    static let roundsPerWriter = 20

    /// Writers move a counter and a mirror of it together, each guarded by the counter's
    /// modRevision: every increment lands once and the two keys never disagree.
    public func concurrentTransactionsLoseNothing() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let counter = try key("/counter"), mirror = try key("/mirror")
            _ = try await store.transact(Transaction(success: [.put(counter, Data(text: "0")), .put(mirror, Data(text: "0"))]), in: config)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<Self.writers {
                    group.addTask {
                        var done = 0
                        while done < Self.roundsPerWriter {
                            let current = try await require(store.get(counter, in: config))
                            let next = Data(text: String((Int(current.text ?? "") ?? -1) + 1))
                            let result = try await store.transact(Transaction(
                                compares: [Comparison(.key(counter), .equal, .modRevision(current.modRevision))],
                                success: [.put(counter, next), .put(mirror, next), .put(try Key("/by/\(writer)"), Data(text: String(done)))],
                                failure: [.get(counter)]
                            ), in: config)
                            if result.succeeded { done += 1 }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let total = Self.writers * Self.roundsPerWriter
            let final = try await require(store.get(counter, in: config))
            expectEqual(final.text, String(total))
            expectEqual(final.version, UInt64(total + 1))
            try await expectEqual(store.get(mirror, in: config)?.text, String(total))
            try await expectEqual(store.revision(of: config), Revision(UInt64(total + 1)))
            let events = try await store.events(in: config, scope: .prefix(.root), from: 2, limit: Limits.maxPageSize).events
            expectEqual(events.count, total * 3)
            // Each revision holds exactly one increment: counter, mirror and writer key.
            for (offset, chunk) in stride(from: 0, to: events.count, by: 3).map({ ($0, events[$0..<$0 + 3]) }) {
                let revision = Revision(UInt64(offset / 3 + 2))
                expect(chunk.allSatisfy { $0.revision == revision }, "revisions \(chunk.map(\.revision)), expected \(revision)")
                expectEqual(chunk.prefix(2).map(\.item?.text), [String(offset / 3 + 1), String(offset / 3 + 1)])
            }
        }
    }
}

extension StoreConformance {
    /// The checks of multi-key transactions.
    public var transaction: TransactionChecks { TransactionChecks(conformance: self) }
}
