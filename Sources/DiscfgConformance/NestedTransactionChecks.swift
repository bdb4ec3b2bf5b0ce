import DiscfgCore
import Foundation

/// Transactions nested in transactions (``TransactionOperation/nested(_:)``, etcd's
/// `request_txn`): every comparison of the path taken is decided against the config as
/// the transaction began, the path's operations then run in order, in one revision, and a
/// tree that breaks a rule anywhere changes nothing.
public struct NestedTransactionChecks: Sendable {
    let conformance: StoreConformance

    private func key(_ path: String) throws -> Key { try Key(path) }

    /// An outer put changes `/a`; the nested comparisons still see `/a` as it was, so the
    /// first nested transaction succeeds and the second fails; reads inside see the
    /// writes made before them; every change carries the one new revision.
    public func comparisonsSeeTheConfigAsItBeganAndChangesShareOneRevision() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/a", "1", in: config)
            try await store.set("/b", "b", in: config)
            let a = try key("/a"), b = try key("/b"), c = try key("/c")
            let transaction = Transaction(
                compares: [Comparison(.key(a), .equal, .version(1))],
                success: [
                    .put(a, Data(text: "2")),
                    .nested(Transaction(
                        compares: [Comparison(.key(a), .equal, .value(Data(text: "1")))],
                        success: [.get(a), .put(c, Data(text: "c"))],
                        failure: [.put(try key("/never/1"), Data(text: "x"))]
                    )),
                    .nested(Transaction(
                        compares: [Comparison(.key(a), .equal, .version(2))],
                        success: [.put(try key("/never/2"), Data(text: "y"))],
                        failure: [.get(b), .delete(b), .nested(Transaction(compares: [Comparison(.key(c), .equal, .version(0))], success: [.get(c)]))]
                    )),
                    .get(c),
                ],
                failure: [.put(try key("/never/1"), Data(text: "z"))]
            )
            let result = try await store.transact(transaction, in: config)
            expect(result.succeeded, "the outer comparison held")
            expectEqual(result.revision, 3)
            try await expectEqual(store.revision(of: config), 3)
            expectEqual(result.events.map(\.key.path), ["/a", "/c", "/b"])
            expect(result.events.allSatisfy { $0.revision == 3 }, "revisions \(result.events.map(\.revision))")
            guard result.responses.count == 4,
                  case .put(let putA) = result.responses[0],
                  case .nested(true, let first) = result.responses[1], first.count == 2,
                  case .get(let readA) = first[0], case .put(let putC) = first[1],
                  case .nested(false, let second) = result.responses[2], second.count == 3,
                  case .get(let readB) = second[0], case .delete(let deleted) = second[1],
                  case .nested(true, let third) = second[2], case .get(let readCInside)? = third.first,
                  case .get(let readC) = result.responses[3]
            else {
                fail("responses do not follow the path taken: \(result.responses)")
                return
            }
            expectEqual(putA.item?.version, 2)
            expectEqual(readA.map(\.text), ["2"], "a read inside a nested transaction sees the outer put before it")
            expectEqual(putC.revision, 3)
            expectEqual(readB.map(\.text), ["b"])
            expectEqual(deleted.map(\.key.path), ["/b"])
            expectEqual(readCInside.map(\.text), ["c"], "decided on /c absent, as it began, and then reads the put made before it")
            expectEqual(readC.map(\.text), ["c"])
            try await expectNil(store.get(key("/never/1"), in: config))
            try await expectNil(store.get(key("/never/2"), in: config))
            try await expectNil(store.get(b, in: config))
            let events = try await store.events(in: config, scope: .prefix(.root), from: 3, limit: 10).events
            expectEqual(events.map(\.key.path), ["/a", "/c", "/b"], "one revision's events, in the order the path made them")
        }
    }

    /// A tree whose path only reads keeps the revision and answers each nested
    /// transaction; its failure branches run when their comparisons fail; a tree with no
    /// write anywhere answers the same.
    public func aTreeThatOnlyReadsKeepsTheRevision() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/a", "1", in: config)
            let a = try key("/a")
            let transaction = Transaction(
                compares: [Comparison(.key(a), .equal, .version(5))],
                success: [.put(a, Data(text: "never"))],
                failure: [.nested(Transaction(compares: [Comparison(.key(a), .equal, .exists(true))], success: [.get(a)], failure: [.delete(a)]))]
            )
            let result = try await store.transact(transaction, in: config)
            expect(!result.succeeded, "the outer comparison failed")
            expectEqual(result.revision, 1)
            expectEqual(result.events.count, 0)
            guard case .nested(true, let inner)? = result.responses.first, case .get(let read)? = inner.first else {
                fail("responses: \(result.responses)")
                return
            }
            expectEqual(read.map(\.text), ["1"])
            try await expectEqual(store.revision(of: config), 1)
            // A tree with no write in any branch (a store may answer it from a read
            // snapshot): the same decisions and answers.
            let reads = Transaction(
                compares: [Comparison(.key(a), .equal, .version(1))],
                success: [.nested(Transaction(compares: [Comparison(.key(a), .equal, .version(2))], success: [.get(a)], failure: [.getPrefix(.root)])), .get(a)]
            )
            expect(!reads.writes, "a tree of reads writes nothing")
            let answered = try await store.transact(reads, in: config)
            guard answered.succeeded, answered.responses.count == 2, case .nested(false, let inner) = answered.responses[0],
                  case .get(let all)? = inner.first, case .get(let one) = answered.responses[1]
            else {
                fail("responses: \(answered.responses)")
                return
            }
            expectEqual(all.map(\.key.path), ["/a"])
            expectEqual(one.map(\.text), ["1"])
            expectEqual(answered.revision, 1)
        }
    }

    /// Refused whole, nothing written: a key put twice across the tree (a nested
    /// transaction's success and failure may put the same key), a key put and then
    /// deleted by a nested transaction, nesting past ``Limits/maxTransactionDepth``, more
    /// than ``Limits/maxTransactionEntries`` entries in all, more than
    /// ``Limits/maxTransactionOperations`` in a nested list, and a nested operation
    /// that fails as it runs (a patch of an absent key).
    public func aTreeThatBreaksARuleAnywhereChangesNothing() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/a", "1", in: config)
            let before = try await store.observableState(of: config)
            let a = try key("/a"), b = try key("/b")
            func nested(_ success: [TransactionOperation], _ failure: [TransactionOperation] = []) -> TransactionOperation {
                .nested(Transaction(success: success, failure: failure))
            }
            var deep = Transaction(success: [.put(b, Data(text: "deep"))])
            for _ in 1..<Limits.maxTransactionDepth + 1 { deep = Transaction(success: [.nested(deep)]) }
            let wide = Transaction(success: (0..<Limits.maxTransactionOperations).map { _ in
                nested([], (0..<Limits.maxTransactionOperations).map { _ in .get(a) })
            })
            let refused: [Transaction] = [
                Transaction(success: [.put(a, Data(text: "2")), nested([.put(a, Data(text: "3"))])]),
                Transaction(success: [nested([.put(a, Data(text: "2"))]), nested([], [.put(a, Data(text: "3"))])]),
                Transaction(success: [nested([.put(a, Data(text: "2"))]), nested([.delete(a)])]),
                Transaction(success: [nested([.deletePrefix(.root)]), .put(b, Data(text: "2"))]),
                deep,
                wide,
                Transaction(success: [nested((0...Limits.maxTransactionOperations).map { _ in .get(a) })]),
                Transaction(success: [.put(b, Data(text: "2")), nested([.patch(try key("/absent"), .merge(.null))])]),
            ]
            for (index, transaction) in refused.enumerated() {
                do {
                    _ = try await store.transact(transaction, in: config)
                    fail("transaction \(index) was not refused")
                } catch let error as DiscfgError {
                    expect(error.code == .invalidArgument || error.code == .keyNotFound, "transaction \(index): \(error)")
                }
            }
            try await expectEqual(store.observableState(of: config), before)
            // The two branches of one nested transaction may put the same key: one runs.
            let either = Transaction(success: [nested([.put(b, Data(text: "then"))], [.put(b, Data(text: "else"))])])
            var shallow = Transaction(success: [.put(b, Data(text: "deepest"))])
            for _ in 1..<Limits.maxTransactionDepth { shallow = Transaction(success: [.nested(shallow)]) }
            let result = try await store.transact(either, in: config)
            expectEqual(result.events.map(\.item?.text), ["then"])
            let deepest = try await store.transact(shallow, in: config)
            expectEqual(deepest.events.map(\.item?.text), ["deepest"], "a tree exactly \(Limits.maxTransactionDepth) deep runs")
        }
    }
}

extension StoreConformance {
    /// The checks of nested transactions.
    public var nestedTransaction: NestedTransactionChecks { NestedTransactionChecks(conformance: self) }
}
