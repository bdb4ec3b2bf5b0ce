import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("ListingFolder")
struct ListingFolderTests {
    static func item(_ path: String) -> Item {
        Item(key: try! Key(path), value: Data(), version: 1, createRevision: 1, modRevision: 1, modifiedAt: Date(milliseconds: 0))
    }

    static func query(_ prefix: String = "/", recursive: Bool = true, limit: Int = 100, cursor: String? = nil) -> ListQuery {
        ListQuery(prefix: try! KeyPrefix(prefix), recursive: recursive, limit: limit, cursor: cursor)
    }

    /// Offers `paths` in order, as a scan that ignores jumps would, and returns the page.
    static func fold(_ query: ListQuery, _ paths: [String]) throws -> (page: ListPage, jumps: [String?]) {
        var folder = try ListingFolder(query)
        var jumps: [String?] = []
        for path in paths where !folder.isDone { jumps.append(folder.offer(item(path))) }
        return (folder.page(revision: 9), jumps)
    }

    @Test(arguments: [0, -1, 1001])
    func badLimitsAreInvalid(limit: Int) throws {
        try expectError(.invalidArgument, field: "limit") { try ListingFolder(Self.query(limit: limit)) }
    }

    @Test("a cursor before the prefix, or empty, starts over; one after it scans nothing", arguments: ["", "/a", "/0"])
    func cursorBeforeThePrefixStartsOver(cursor: String) throws {
        #expect(try ListingFolder(Self.query("/a", cursor: cursor)).scanStart == "/a/")
    }

    @Test(arguments: ["/b/x", "/ab", "zzz", "/a0"])
    func cursorAfterThePrefixScansNothing(cursor: String) throws {
        #expect(try ListingFolder(Self.query("/a", cursor: cursor)).scanStart >= "/a0")
    }

    @Test func scanStartHonoursTheCursor() throws {
        #expect(try ListingFolder(Self.query("/a")).scanStart == "/a/")
        #expect(try ListingFolder(Self.query("/a", cursor: "/a/b")).scanStart == "/a/b\u{0}", "just past a key")
        #expect(try ListingFolder(Self.query("/a", cursor: "/a/b/")).scanStart == "/a/b0", "past everything under a sub-prefix")
    }

    @Test func recursivePageStopsOnlyWhenOneMoreEntryExists() throws {
        let exact = try Self.fold(Self.query(limit: 2), ["/a", "/b"])
        #expect(exact.page.items.map(\.key.path) == ["/a", "/b"])
        #expect(exact.page.nextCursor == nil, "a full page with nothing after it is the last page")
        #expect(exact.page.revision == 9)

        let more = try Self.fold(Self.query(limit: 2), ["/a", "/b", "/c", "/d"])
        #expect(more.page.items.map(\.key.path) == ["/a", "/b"])
        #expect(more.page.nextCursor == "/b")
        #expect(more.jumps == [nil, nil, nil], "the folder is done after the entry that did not fit")
    }

    @Test func nonRecursiveFoldsDeeperKeysAndAsksToJump() throws {
        let (page, jumps) = try Self.fold(Self.query("/a", recursive: false), ["/a/b", "/a/b/c", "/a/b/d/e", "/a/c", "/a/d/x"])
        #expect(page.items.map(\.key.path) == ["/a/b", "/a/c"])
        #expect(page.prefixes.map(\.path) == ["/a/b/", "/a/d/"])
        #expect(jumps == [nil, "/a/b0", "/a/b0", nil, "/a/d0"])
        #expect(page.nextCursor == nil)
    }

    @Test func pageBoundaryOnASubPrefixResumesPastIt() throws {
        let first = try Self.fold(Self.query("/a", recursive: false, limit: 2), ["/a/a", "/a/b/c", "/a/b/d", "/a/c"])
        #expect(first.page.items.map(\.key.path) == ["/a/a"])
        #expect(first.page.prefixes.map(\.path) == ["/a/b/"])
        #expect(first.page.nextCursor == "/a/b/")

        let next = Self.query("/a", recursive: false, limit: 2, cursor: first.page.nextCursor)
        #expect(try ListingFolder(next).scanStart == "/a/b0")
        // A scan that starts too early is still safe: entries up to the cursor are skipped.
        let second = try Self.fold(next, ["/a/b/c", "/a/b/d", "/a/c"])
        #expect(second.page.items.map(\.key.path) == ["/a/c"])
        #expect(second.page.prefixes.isEmpty)
        #expect(second.page.nextCursor == nil)
    }

    @Test func entriesUpToTheCursorAreSkipped() throws {
        let (page, _) = try Self.fold(Self.query("/a", cursor: "/a/c"), ["/a/b", "/a/c", "/a/d"])
        #expect(page.items.map(\.key.path) == ["/a/d"])
    }

    @Test func fullPageEndingInASubPrefixWithOnlyDeeperKeysLeftIsTheLastPage() throws {
        let (page, _) = try Self.fold(Self.query("/", recursive: false, limit: 1), ["/a/b", "/a/c", "/a/d/e"])
        #expect(page.prefixes.map(\.path) == ["/a/"])
        #expect(page.nextCursor == nil)
    }

    @Test func nonRecursiveEntriesAreOrderedByBytesAcrossKeysAndPrefixes() throws {
        // "-" and "." sort before "/", so /a/b-x comes between the key /a/b and the sub-prefix /a/b/.
        let (page, _) = try Self.fold(Self.query("/a", recursive: false, limit: 3), ["/a/b", "/a/b-x", "/a/b/c", "/a/b0"])
        #expect(page.items.map(\.key.path) == ["/a/b", "/a/b-x"])
        #expect(page.prefixes.map(\.path) == ["/a/b/"])
        #expect(page.nextCursor == "/a/b/")
    }
}
