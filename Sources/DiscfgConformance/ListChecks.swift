import DiscfgCore
import Foundation
import Testing

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
            #expect(page.items.map(\.key.path) == expected)
            #expect(page.items.map(\.key.path).first == "/a/Z")
            #expect(page.items.allSatisfy { $0.value == Data($0.key.path.utf8) })
            #expect(page.prefixes.isEmpty)
            #expect(page.nextCursor == nil)
            #expect(page.revision == Revision(UInt64(Self.paths.count)))

            let all = try await store.list(in: config, ListQuery(prefix: .root))
            #expect(all.items.map(\.key.path) == Self.paths.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        }
    }

    public func nonRecursiveListFoldsDeeperKeysIntoPrefixes() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            let page = try await store.list(in: config, ListQuery(prefix: KeyPrefix("/a/"), recursive: false))
            #expect(page.items.map(\.key.path) == ["/a/Z", "/a/b", "/a/b-x", "/a/b.y", "/a/b0", "/a/c", "/a/\u{E9}"])
            #expect(page.prefixes.map(\.path) == ["/a/b/", "/a/d/", "/a/\u{E9}/"])
            #expect(page.nextCursor == nil)

            let root = try await store.list(in: config, ListQuery(prefix: .root, recursive: false))
            #expect(root.items.map(\.key.path) == ["/a-b", "/ab", "/b", "/z"])
            #expect(root.prefixes.map(\.path) == ["/a/", "/b/"])
        }
    }

    public func emptyAndUnmatchedPrefixesListNothing() async throws {
        try await conformance.withStore { store, _ in
            let empty = try await store.makeConfig("empty")
            let page = try await store.list(in: empty, ListQuery())
            #expect(page.items.isEmpty && page.prefixes.isEmpty && page.nextCursor == nil && page.revision == .zero)
            let config = try await Self.prepare(store)
            #expect(try await store.list(in: config, ListQuery(prefix: KeyPrefix("/a/b/c"))).items.isEmpty, "a key is not a directory")
            #expect(try await store.list(in: config, ListQuery(prefix: KeyPrefix("/nope"), recursive: false)).items.isEmpty)
        }
    }

    /// The arguments ``recursivePagesReturnEveryKeyExactlyOnce(limit:)`` is checked with.
    public static let recursivePagesReturnEveryKeyExactlyOnceArguments: [Int] = [1, 2, 3, 4, 7]

    public func recursivePagesReturnEveryKeyExactlyOnce(limit: Int) async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            let entries = try await Self.walk(store, config, ListQuery(prefix: .root, recursive: true, limit: limit))
            #expect(entries == Self.paths.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        }
    }

    /// The arguments ``nonRecursivePagesReturnEveryEntryExactlyOnce(limit:)`` is checked with.
    public static let nonRecursivePagesReturnEveryEntryExactlyOnceArguments: [Int] = [1, 2, 3, 4, 5, 9, 10]

    public func nonRecursivePagesReturnEveryEntryExactlyOnce(limit: Int) async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            let entries = try await Self.walk(store, config, ListQuery(prefix: KeyPrefix("/a/"), recursive: false, limit: limit))
            #expect(entries == Self.directEntriesOfA)
        }
    }

    public func pagesSkipKeysThatExpireBetweenPages() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            for path in ["/a", "/b", "/c", "/d"] {
                try await store.set(path, "x", in: config, options: SetOptions(ttlSeconds: path == "/c" ? 5 : nil))
            }
            let first = try await store.list(in: config, ListQuery(limit: 2))
            #expect(first.items.map(\.key.path) == ["/a", "/b"])
            clock.advance(seconds: 5)
            let second = try await store.list(in: config, ListQuery(limit: 2, cursor: first.nextCursor))
            #expect(second.items.map(\.key.path) == ["/d"])
            #expect(second.nextCursor == nil)
        }
    }

    public func badLimitsAreInvalidAndAnyCursorIsAPosition() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            let prefix = try KeyPrefix("/a/")
            for limit in [0, -5, Limits.maxPageSize + 1] {
                let error = await expectError(.invalidArgument, "limit \(limit)") { try await store.list(in: config, ListQuery(limit: limit)) }
                #expect(error?.field == "limit")
            }
            let underA = Self.paths.filter { $0.hasPrefix("/a/") }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            // Before the prefix, or empty: from the start. After it: an empty last page.
            for cursor in ["", "/", "/0", "/a"] {
                let page = try await store.list(in: config, ListQuery(prefix: prefix, cursor: cursor))
                #expect(page.items.map(\.key.path) == underA, "cursor \(cursor)")
            }
            for cursor in ["/b", "zzz", "/ab", "/a0", "\u{FFFF}"] {
                let page = try await store.list(in: config, ListQuery(prefix: prefix, cursor: cursor))
                #expect(page.items.isEmpty && page.prefixes.isEmpty && page.nextCursor == nil, "cursor \(cursor)")
            }
            let fromMiddle = try await store.list(in: config, ListQuery(prefix: prefix, cursor: "/a/b0x"))
            #expect(fromMiddle.items.map(\.key.path) == underA.filter { !$0.utf8.lexicographicallyPrecedes("/a/b0x".utf8) })
            #expect(try await store.list(in: config, ListQuery(limit: Limits.maxPageSize)).items.count == Self.paths.count)
        }
    }

    public func deletePrefixDeletesOnlyKeysUnderItInKeyOrder() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            let start = try await store.revision(of: config)
            let before = try await store.list(in: config, ListQuery(prefix: KeyPrefix("/a/"))).items

            let events = try await store.deletePrefix(KeyPrefix("/a"), in: config)
            #expect(events.map(\.key.path) == before.map(\.key.path))
            #expect(events.map(\.revision.rawValue) == Array(start.rawValue + 1...start.rawValue + UInt64(before.count)))
            #expect(events.allSatisfy { $0.kind == .delete && $0.item == nil })
            #expect(events.map(\.prevItem) == before.map(Optional.some))
            #expect(try await store.revision(of: config).rawValue == start.rawValue + UInt64(before.count))

            let left = try await store.list(in: config, ListQuery()).items.map(\.key.path)
            #expect(left == ["/a-b", "/ab", "/b", "/b/c", "/z"])
            #expect(try await store.deletePrefix(KeyPrefix("/a/"), in: config).isEmpty, "nothing left to delete")
            #expect(try await store.revision(of: config).rawValue == start.rawValue + UInt64(before.count))
        }
    }

    public func deletePrefixOfTheRootEmptiesTheConfig() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            let events = try await store.deletePrefix(.root, in: config)
            #expect(events.count == Self.paths.count)
            #expect(try await store.list(in: config, ListQuery()).items.isEmpty)
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
            #expect(pageEntries.count <= query.limit)
            #expect(!pageEntries.isEmpty)
            entries += pageEntries
            guard let cursor = page.nextCursor else { return entries }
            #expect(pageEntries.count == query.limit, "only a full page has a next page")
            #expect(cursor == pageEntries.last, "the cursor is the page's last entry")
            query.cursor = cursor
        }
        Issue.record("listing did not end after 100 pages")
        return entries
    }
}

extension StoreConformance {
    /// The checks of prefix listing, pagination and deletePrefix.
    public var list: ListChecks { ListChecks(conformance: self) }
}
