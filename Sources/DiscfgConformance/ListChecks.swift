import DiscfgCore
import Foundation

public struct ListChecks: Sendable {
    let conformance: StoreConformance

    /// Keys chosen to catch byte-order and prefix mistakes: `-` and `.` sort before `/`,
    /// `0` just after it, upper case before lower case, and `é` after all of ASCII.
    static let paths = [
        "/a/b", "/a/b/c", "/a/b/d/e", "/a/b-x", "/a/b.y", "/a/b0", "/a/Z", "/a/c", "/a/d/e", "/a/d/f",
        "/a/\u{E9}", "/a/\u{E9}/deep", "/ab", "/a-b", "/b", "/b/c", "/z",
    ]

    static func prepare(_ store: any ConfigStore) async throws -> ConfigName {
        let config = try await store.makeConfig()
        for path in paths.shuffled() { try await store.set(path, path, in: config) }
        return config
    }

    /// What a full non-recursive listing of `/a/` holds, in order, sub-prefixes marked by their trailing `/`.
    static let directEntriesOfA = ["/a/Z", "/a/b", "/a/b-x", "/a/b.y", "/a/b/", "/a/b0", "/a/c", "/a/d/", "/a/\u{E9}", "/a/\u{E9}/"]

    public func recursiveListReturnsEveryKeyUnderThePrefixInByteOrder() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            let page = try await store.list(in: config, ListQuery(prefix: KeyPrefix("/a")))
            let expected = Self.paths.filter { $0.hasPrefix("/a/") }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            expectEqual(page.items.map(\.key.path), expected)
            expectEqual(page.items.map(\.key.path).first, "/a/Z")
            expect(page.items.allSatisfy { $0.value == Data($0.key.path.utf8) }, "values differ from their keys: \(page.items.map { ($0.key.path, $0.text) })")
            expectEmpty(page.prefixes)
            expectNil(page.nextCursor)
            expectEqual(page.revision, Revision(UInt64(Self.paths.count)))

            let all = try await store.list(in: config, ListQuery(prefix: .root))
            expectEqual(all.items.map(\.key.path), Self.paths.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        }
    }

    public func nonRecursiveListFoldsDeeperKeysIntoPrefixes() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            let page = try await store.list(in: config, ListQuery(prefix: KeyPrefix("/a/"), recursive: false))
            expectEqual(page.items.map(\.key.path), ["/a/Z", "/a/b", "/a/b-x", "/a/b.y", "/a/b0", "/a/c", "/a/\u{E9}"])
            expectEqual(page.prefixes.map(\.path), ["/a/b/", "/a/d/", "/a/\u{E9}/"])
            expectNil(page.nextCursor)

            let root = try await store.list(in: config, ListQuery(prefix: .root, recursive: false))
            expectEqual(root.items.map(\.key.path), ["/a-b", "/ab", "/b", "/z"])
            expectEqual(root.prefixes.map(\.path), ["/a/", "/b/"])
        }
    }

    public func emptyAndUnmatchedPrefixesListNothing() async throws {
        try await conformance.withStore { store, _ in
            let empty = try await store.makeConfig("empty")
            let page = try await store.list(in: empty, ListQuery())
            expect(page.items.isEmpty && page.prefixes.isEmpty && page.nextCursor == nil, "expected an empty page, got \(page)")
            expectEqual(page.revision, .zero)
            let config = try await Self.prepare(store)
            try await expectEmpty(store.list(in: config, ListQuery(prefix: KeyPrefix("/a/b/c"))).items, "a key is not a directory")
            try await expectEmpty(store.list(in: config, ListQuery(prefix: KeyPrefix("/nope"), recursive: false)).items)
        }
    }

    /// The arguments ``recursivePagesReturnEveryKeyExactlyOnce(limit:)`` is checked with.
    public static let recursivePagesReturnEveryKeyExactlyOnceArguments: [Int] = [1, 2, 3, 4, 7]

    public func recursivePagesReturnEveryKeyExactlyOnce(limit: Int) async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            let entries = try await Self.walk(store, config, ListQuery(prefix: .root, recursive: true, limit: limit))
            expectEqual(entries, Self.paths.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        }
    }

    /// The arguments ``nonRecursivePagesReturnEveryEntryExactlyOnce(limit:)`` is checked with.
    public static let nonRecursivePagesReturnEveryEntryExactlyOnceArguments: [Int] = [1, 2, 3, 4, 5, 9, 10]

    public func nonRecursivePagesReturnEveryEntryExactlyOnce(limit: Int) async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            let entries = try await Self.walk(store, config, ListQuery(prefix: KeyPrefix("/a/"), recursive: false, limit: limit))
            expectEqual(entries, Self.directEntriesOfA)
        }
    }

    public func pagesSkipKeysThatExpireBetweenPages() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            for path in ["/a", "/b", "/c", "/d"] {
                try await store.set(path, "x", in: config, options: SetOptions(ttlSeconds: path == "/c" ? 5 : nil))
            }
            let first = try await store.list(in: config, ListQuery(limit: 2))
            expectEqual(first.items.map(\.key.path), ["/a", "/b"])
            clock.advance(seconds: 5)
            let second = try await store.list(in: config, ListQuery(limit: 2, cursor: first.nextCursor))
            expectEqual(second.items.map(\.key.path), ["/d"])
            expectNil(second.nextCursor)
        }
    }

    public func badLimitsAreInvalidAndAnyCursorIsAPosition() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            let prefix = try KeyPrefix("/a/")
            for limit in [0, -5, Limits.maxPageSize + 1] {
                try await expectError(.invalidArgument, "limit \(limit)", field: "limit") { try await store.list(in: config, ListQuery(limit: limit)) }
            }
            let underA = Self.paths.filter { $0.hasPrefix("/a/") }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            // Before the prefix, or empty: from the start. After it: an empty last page.
            for cursor in ["", "/", "/0", "/a"] {
                let page = try await store.list(in: config, ListQuery(prefix: prefix, cursor: cursor))
                expectEqual(page.items.map(\.key.path), underA, "cursor \(cursor)")
            }
            for cursor in ["/b", "zzz", "/ab", "/a0", "\u{FFFF}"] {
                let page = try await store.list(in: config, ListQuery(prefix: prefix, cursor: cursor))
                expect(page.items.isEmpty && page.prefixes.isEmpty && page.nextCursor == nil, "cursor \(cursor): expected an empty page, got \(page)")
            }
            let fromMiddle = try await store.list(in: config, ListQuery(prefix: prefix, cursor: "/a/b0x"))
            expectEqual(fromMiddle.items.map(\.key.path), underA.filter { !$0.utf8.lexicographicallyPrecedes("/a/b0x".utf8) })
            try await expectEqual(store.list(in: config, ListQuery(limit: Limits.maxPageSize)).items.count, Self.paths.count)
        }
    }

    public func deletePrefixDeletesOnlyKeysUnderItInKeyOrder() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            let start = try await store.revision(of: config)
            let before = try await store.list(in: config, ListQuery(prefix: KeyPrefix("/a/"))).items

            let events = try await store.deletePrefix(KeyPrefix("/a"), in: config)
            expectEqual(events.map(\.key.path), before.map(\.key.path))
            // One change: every removal carries the one new revision.
            expectEqual(events.map(\.revision.rawValue), Array(repeating: start.rawValue + 1, count: before.count))
            expect(events.allSatisfy { $0.kind == .delete && $0.item == nil }, "not all deletes: \(events.map { ($0.kind, $0.item) })")
            expectEqual(events.map(\.prevItem), before.map(Optional.some))
            try await expectEqual(store.revision(of: config).rawValue, start.rawValue + 1)

            let left = try await store.list(in: config, ListQuery()).items.map(\.key.path)
            expectEqual(left, ["/a-b", "/ab", "/b", "/b/c", "/z"])
            try await expectEmpty(store.deletePrefix(KeyPrefix("/a/"), in: config), "nothing left to delete")
            try await expectEqual(store.revision(of: config).rawValue, start.rawValue + 1)
        }
    }

    public func deletePrefixOfTheRootEmptiesTheConfig() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            let events = try await store.deletePrefix(.root, in: config)
            expectEqual(events.count, Self.paths.count)
            try await expectEmpty(store.list(in: config, ListQuery()).items)
        }
    }

    /// Follows `nextCursor` to the end and returns every entry in page order, sub-prefixes
    /// as their paths; checks that no page is over the limit and the walk ends.
    static func walk(_ store: any ConfigStore, _ config: ConfigName, _ first: ListQuery) async throws -> [String] {
        var query = first
        var entries: [String] = []
        for _ in 0...100 {
            let page = try await store.list(in: config, query)
            let pageEntries = (page.items.map(\.key.path) + page.prefixes.map(\.path)).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            expect(pageEntries.count <= query.limit, "a page of \(pageEntries.count) entries, limit \(query.limit)")
            expect(!pageEntries.isEmpty, "an empty page before the listing ended")
            entries += pageEntries
            guard let cursor = page.nextCursor else { return entries }
            expectEqual(pageEntries.count, query.limit, "only a full page has a next page")
            expectEqual(cursor, pageEntries.last, "the cursor is the page's last entry")
            query.cursor = cursor
        }
        fail("listing did not end after 100 pages")
        return entries
    }
}

extension StoreConformance {
    /// The checks of prefix listing, pagination and deletePrefix.
    public var list: ListChecks { ListChecks(conformance: self) }
}
