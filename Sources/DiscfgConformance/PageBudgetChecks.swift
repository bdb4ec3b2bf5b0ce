import DiscfgCore
import Foundation

/// Every store stops reading a page at its byte budget, and the cursors it returns go on
/// exactly after the last entry returned.
public struct PageBudgetChecks: Sendable {
    let conformance: StoreConformance

    /// A budget that holds a few of the values below, never all of them.
    static let budget = 1500

    /// Keys under folders and at the top, with values of 0 to ~2.6 KB, so pages end at
    /// different places, sometimes on an entry larger than the budget left.
    static let paths = [
        "/a/1", "/a/2", "/a/b/1", "/a/b/2", "/a/b/c/1", "/a/c", "/a/d/1", "/a/d/2", "/a/e",
        "/b", "/c/1", "/c/2", "/c/3", "/d", "/e/1", "/f",
    ]

    static func value(_ index: Int) -> String { String(repeating: "x", count: (index * 733) % 2600) }

    static func prepare(_ store: any ConfigStore) async throws -> ConfigName {
        let config = try await store.makeConfig()
        for (index, path) in paths.enumerated() { try await store.set(path, value(index), in: config) }
        return config
    }

    static func cost(_ page: ListPage) -> Int {
        page.items.map(PageBudget.size).reduce(0, +) + page.prefixes.map(PageBudget.size).reduce(0, +)
    }

    /// The arguments ``listPagesStayWithinTheBudgetAndVisitEveryEntryOnce(recursive:)`` is checked with.
    public static let listPagesStayWithinTheBudgetAndVisitEveryEntryOnceArguments: [Bool] = [true, false]

    public func listPagesStayWithinTheBudgetAndVisitEveryEntryOnce(recursive: Bool) async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            for prefix in [KeyPrefix.root, try KeyPrefix("/a/")] {
                let whole = try await store.list(in: config, ListQuery(prefix: prefix, recursive: recursive, limit: Limits.maxPageSize))
                let expected = (whole.items.map(\.key.path) + whole.prefixes.map(\.path)).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                var query = ListQuery(prefix: prefix, recursive: recursive, limit: Limits.maxPageSize, maxBytes: Self.budget)
                var seen: [String] = []
                var pages = 0
                while pages < 50 {
                    let page = try await store.list(in: config, query)
                    pages += 1
                    let entries = page.items.count + page.prefixes.count
                    expect(entries >= 1, "page \(pages) under \(prefix) is empty")
                    expect(Self.cost(page) <= Self.budget || entries == 1, "page \(pages) under \(prefix) costs \(Self.cost(page)) bytes")
                    let pageEntries = (page.items.map(\.key.path) + page.prefixes.map(\.path)).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                    seen += pageEntries
                    guard let cursor = page.nextCursor else { break }
                    expectEqual(cursor, pageEntries.last, "the cursor is the page's last entry")
                    query.cursor = cursor
                }
                expect(pages > 1, "\(pages) page(s): a budget of \(Self.budget) bytes splits the listing under \(prefix)")
                expectEqual(seen, expected, "every entry under \(prefix) exactly once, in order")
            }
        }
    }

    public func historyPagesStayWithinTheBudgetAndVisitEveryEventOnce() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            var written: [Revision] = []
            for index in 0..<12 {
                written.append(try await store.set("/k", Self.value(index), in: config).revision)
                try await store.set("/other", "o", in: config)
            }
            var query = HistoryQuery(limit: Limits.maxPageSize, maxBytes: Self.budget)
            var seen: [Revision] = []
            var pages = 0
            while pages < 50 {
                let page = try await store.history(of: Key("/k"), in: config, query)
                pages += 1
                let cost = page.events.map(PageBudget.size).reduce(0, +)
                expect(!page.events.isEmpty, "an empty page before the history ended")
                expect(cost <= Self.budget || page.events.count == 1, "page \(pages) costs \(cost) bytes")
                seen += page.events.map(\.revision)
                guard let before = page.nextBefore else { break }
                expectEqual(before, page.events.last?.revision)
                query.before = before
            }
            expect(pages > 2, "\(pages) page(s) for a budget of \(Self.budget) bytes")
            expectEqual(seen, written.reversed())
        }
    }

    public func eventBatchesStayWithinTheBudgetAndVisitEveryEventOnce() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            for index in 0..<6 { try await store.set(Self.paths[index * 2], Self.value(index + 3), in: config) }
            _ = try await store.delete(Key("/a/c"), in: config, conditions: [])
            let last = try await store.revision(of: config)
            let all = try await store.events(in: config, scope: .prefix(.root), from: 1, limit: Limits.maxPageSize).events
            for scope in [WatchScope.prefix(.root), .prefix(try KeyPrefix("/a/")), .key(try Key("/a/1"))] {
                var next = Revision(1)
                var seen: [Revision] = []
                var batches = 0
                while batches < 100 {
                    let batch = try await store.events(in: config, scope: scope, from: next, limit: Limits.maxPageSize, maxBytes: Self.budget)
                    batches += 1
                    let cost = batch.events.map(PageBudget.size).reduce(0, +)
                    expect(cost <= Self.budget || batch.events.count == 1, "batch \(batches) of \(scope) costs \(cost) bytes")
                    seen += batch.events.map(\.revision)
                    if let lastEvent = batch.events.last, batch.hasMore { expectEqual(batch.through, lastEvent.revision) }
                    next = batch.through.next
                    guard batch.hasMore else { break }
                }
                expectEqual(next, last.next, "the batches run through the config's revision")
                expectEqual(seen, all.filter { scope.matches($0.key) }.map(\.revision), "every event of \(scope) exactly once, in order")
                if case .prefix(.root) = scope { expect(batches > 2, "\(batches) batch(es) for a budget of \(Self.budget) bytes") }
            }
        }
    }

    /// Twenty values of 256 KiB are 5 MiB: a page asked for 1000 of them holds what fits
    /// in 4 MiB, so the store read no more than that (plus the one entry that ended it).
    public func aPageOfLargeValuesHoldsAtMostTheDefaultBudget() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let big = Data(repeating: 0x61, count: Limits.maxValueBytes)
            for index in 0..<20 { _ = try await store.set(Key("/big/\(index + 10)"), to: big, in: config) }
            let defaultBudget = 4 * 1024 * 1024
            let fits = defaultBudget / (big.count + "/big/10".utf8.count)

            let page = try await store.list(in: config, ListQuery(limit: 1000))
            expectEqual(page.items.count, fits)
            let cost = page.items.map { $0.key.path.utf8.count + $0.value.count }.reduce(0, +)
            expect(cost <= defaultBudget, "a page of \(cost) bytes, default budget \(defaultBudget)")
            expectEqual(page.nextCursor, page.items.last?.key.path)

            let history = try await store.history(of: Key("/big/10"), in: config, HistoryQuery(limit: 1000))
            expectEqual(history.events.count, 1)
            let events = try await store.events(in: config, scope: .prefix(.root), from: 1, limit: 1000)
            expectEqual(events.events.count, fits)
            expectEqual(events.through, Revision(UInt64(fits)))
        }
    }

    /// A transaction's reads share one budget, the 4 MiB of a page (the REST API gives
    /// every transaction this one): each read below fits, two do not, and neither do 128
    /// reads of a small prefix's 256 KiB (issue 33: 128 reads of `/` answered 1 GiB).
    /// Past the budget the whole transaction is refused with `tooLarge` naming it, and its
    /// writes are not made; within it, every read is whole.
    public func transactionReadsShareOnePageBudget() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let big = Data(repeating: 0x61, count: Limits.maxValueBytes)
            // 3 MiB under each prefix: one fits in 4 MiB, both do not.
            for index in 0..<12 {
                _ = try await store.set(Key("/a/\(index + 10)"), to: big, in: config)
                _ = try await store.set(Key("/b/\(index + 10)"), to: big, in: config)
            }
            _ = try await store.set(Key("/c/1"), to: big, in: config)
            let before = try await store.revision(of: config)
            func budgeted(compares: [Comparison] = [], _ success: [TransactionOperation], failure: [TransactionOperation] = []) -> Transaction {
                var transaction = Transaction(compares: compares, success: success, failure: failure)
                transaction.readBudget = ReadBudget(bytes: Limits.maxPageBytes, pastBudget: .refuse)
                return transaction
            }
            let a = try KeyPrefix("/a/"), b = try KeyPrefix("/b/"), c = try KeyPrefix("/c/")

            let one = try await store.transact(budgeted([.getPrefix(a), .get(Key("/b/10"))]), in: config)
            guard case .get(let items) = one.responses.first, case .get(let single) = one.responses.last else {
                fail("a budgeted read answers its items: \(one.responses.count) responses")
                return
            }
            expectEqual(items.map(\.key.path), (10..<22).map { "/a/\($0)" }, "a read within the budget is whole")
            expectEqual(single.count, 1)

            let refusals: [(String, Transaction)] = try [
                ("two reads of 3 MiB", budgeted([.getPrefix(a), .getPrefix(b)])),
                ("128 reads of 256 KiB", budgeted(Array(repeating: .getPrefix(c), count: Limits.maxTransactionOperations))),
                ("a range over everything", budgeted([.getRange(.all)])),
                ("the root prefix as a range", budgeted([.getRange(KeyPrefix.root.range)])),
                ("the failure branch's reads", budgeted(compares: [Comparison(.key(Key("/a/10")), .equal, .version(0))], [], failure: [.getPrefix(.root)])),
                ("a write then a read past the budget", budgeted([.put(Key("/new"), Data("x".utf8)), .getPrefix(.root)])),
                ("a read past the budget then a write", budgeted([.getPrefix(a), .getPrefix(b), .delete(Key("/c/1"))])),
            ]
            for (name, transaction) in refusals {
                try await expectError(.tooLarge, "\(name)", field: "transaction", mentioning: [String(Limits.maxPageBytes)]) {
                    try await store.transact(transaction, in: config)
                }
            }
            try await expectNil(store.get(Key("/new"), in: config), "a refused transaction writes nothing")
            try await expectNotNil(store.get(Key("/c/1"), in: config), "a refused transaction deletes nothing")
            try await expectEqual(store.revision(of: config), before)

            // The budget counts what the reads return, not what they pass over: a
            // transaction that deletes most of a prefix before reading it fits.
            let shrunk = try await store.transact(budgeted(try (10..<21).map { .delete(try Key("/a/\($0)")) } + [.getPrefix(.root)]), in: config)
            guard case .get(let left) = shrunk.responses.last else {
                fail("the read answers")
                return
            }
            expectEqual(left.map(\.key.path), ["/a/21"] + (10..<22).map { "/b/\($0)" } + ["/c/1"])
        }
    }

    public func aBudgetBelowOneByteIsRefused() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            for maxBytes in [0, -1] {
                try await expectError(.invalidArgument, "list maxBytes \(maxBytes)", field: "maxBytes") {
                    try await store.list(in: config, ListQuery(maxBytes: maxBytes))
                }
                try await expectError(.invalidArgument, "history maxBytes \(maxBytes)") {
                    try await store.history(of: Key("/b"), in: config, HistoryQuery(maxBytes: maxBytes))
                }
                try await expectError(.invalidArgument, "events maxBytes \(maxBytes)") {
                    try await store.events(in: config, scope: .prefix(.root), from: 1, limit: 10, maxBytes: maxBytes)
                }
            }
        }
    }
}

extension StoreConformance {
    /// The checks of pages capped by bytes in the store.
    public var pageBudget: PageBudgetChecks { PageBudgetChecks(conformance: self) }
}
