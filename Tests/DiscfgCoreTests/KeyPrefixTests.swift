import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("KeyPrefix")
struct KeyPrefixTests {
    @Test(arguments: [("", "/"), ("/", "/"), ("/a", "/a/"), ("/a/", "/a/"), ("a", "/a/"), ("a/b", "/a/b/"), ("/a/b/", "/a/b/"), ("/cafe\u{301}", "/caf\u{E9}/")])
    func prefixesAreNormalizedToEndInASlash(raw: String, path: String) throws {
        #expect(try KeyPrefix(raw).path == path)
    }

    @Test func emptyAndSlashAreTheRoot() throws {
        #expect(try KeyPrefix("") == .root)
        #expect(try KeyPrefix("/") == .root)
        #expect(KeyPrefix.root.path == "/")
    }

    @Test(arguments: [("//", "empty segment"), ("/a//", "empty segment"), ("/a//b", "empty segment"), ("/./", "\".\" segment"), ("/a/..", "\"..\" segment"), ("/a\u{0}", "U+0000")])
    func invalidPrefixesAreRejected(raw: String, reason: String) throws {
        try expectError(.invalidArgument, field: "prefix", mentioning: [reason]) { try KeyPrefix(raw) }
    }

    @Test func prefixOfMoreThan1024BytesIsRejected() throws {
        #expect(try KeyPrefix("/" + String(repeating: "a", count: 1023)).path.utf8.count == 1025, "the slash it adds is not counted")
        try expectError(.invalidArgument, field: "prefix", mentioning: ["1025 bytes"]) { try KeyPrefix("/" + String(repeating: "a", count: 1024)) }
    }

    @Test(arguments: [
        ("/a", "/a/b", true), ("/a", "/a/b/c", true), ("/a/", "/a/b", true),
        ("/a", "/a", false), ("/a", "/ab", false), ("/a", "/a-b", false), ("/a", "/b/a", false), ("/a/b", "/a/bc/d", false),
        ("", "/a", true), ("/", "/z/y/x", true),
    ])
    func containsOnlyKeysBelowTheDirectory(prefix: String, key: String, expected: Bool) throws {
        #expect(try KeyPrefix(prefix).contains(Key(key)) == expected)
    }

    @Test func upperBoundIsJustPastEveryKeyBelow() throws {
        let prefix = try KeyPrefix("/a")
        #expect(prefix.upperBound == "/a0")
        #expect(KeyPrefix.root.upperBound == "0")
        for path in ["/a/b", "/a/\u{E9}", "/a/~~~~"] {
            #expect(try Key(path).path.utf8.lexicographicallyPrecedes(prefix.upperBound.utf8))
        }
        #expect(!"/ab".utf8.lexicographicallyPrecedes(prefix.upperBound.utf8))
    }

    @Test func watchScopeMatchesLikeContains() throws {
        #expect(try WatchScope.prefix(KeyPrefix("/a")).matches(Key("/a/b")))
        #expect(try !WatchScope.prefix(KeyPrefix("/a")).matches(Key("/ab")))
        #expect(try WatchScope.key(Key("/a")).matches(Key("a")))
        #expect(try !WatchScope.key(Key("/a")).matches(Key("/a/b")))
    }
}
