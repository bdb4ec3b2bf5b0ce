import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Key")
struct KeyTests {
    @Test(arguments: [
        ("/a", "/a"), ("a", "/a"), ("a/b/c", "/a/b/c"), ("/db/host", "/db/host"), ("/a/.b", "/a/.b"), ("/a/..b", "/a/..b"),
        ("/a b/c", "/a b/c"), ("/a-b_c.d", "/a-b_c.d"), ("/\u{E9}/\u{FC}", "/\u{E9}/\u{FC}"), ("/...", "/..."),
    ])
    func validKeysAreNormalized(raw: String, path: String) throws {
        #expect(try Key(raw).path == path)
    }

    @Test func composedAndDecomposedAccentsAreTheSameKey() throws {
        let composed = try Key("/caf\u{E9}")
        let decomposed = try Key("/cafe\u{301}")
        #expect(composed == decomposed)
        #expect(composed.hashValue == decomposed.hashValue)
        #expect(Array(decomposed.path.utf8) == Array("/caf\u{E9}".utf8), "stored in NFC")
        #expect(Set([composed, decomposed]).count == 1)
    }

    @Test func keyOf1024BytesIsAcceptedAnd1025Rejected() throws {
        let longest = "/" + String(repeating: "a", count: 1023)
        #expect(try Key(longest).path.utf8.count == Key.maxBytes)
        try expectError(.invalidArgument, field: "key", mentioning: ["1025 bytes", "1024"]) { try Key(longest + "a") }
        // Without its slash a raw key of 1024 bytes becomes 1025 once the slash is added.
        try expectError(.invalidArgument, field: "key", mentioning: ["1025 bytes"]) { try Key(String(repeating: "a", count: 1024)) }
    }

    @Test func lengthIsCountedInUTF8BytesAfterNormalization() throws {
        let twoByte = "/" + String(repeating: "\u{E9}", count: 511) + "a" // 1 + 1022 + 1
        #expect(try Key(twoByte).path.utf8.count == 1024)
        try expectError(.invalidArgument, field: "key", mentioning: ["1025 bytes"]) { try Key(twoByte + "a") }
        // Decomposed, the raw text is 1535 bytes; in NFC it is 1024.
        let decomposed = "/" + String(repeating: "e\u{301}", count: 511) + "a"
        #expect(try Key(decomposed).path == twoByte)
    }

    @Test(arguments: [
        ("", "not a key"), ("/", "not a key"),
        ("/a/", "ends with '/'"), ("a/", "ends with '/'"), ("/a/b/", "ends with '/'"),
        ("//", "empty segment"), ("/a//b", "empty segment"), ("//a", "empty segment"), ("/a//", "empty segment"),
        ("/.", "\".\" segment"), ("/a/./b", "\".\" segment"), ("/..", "\"..\" segment"), ("/a/../b", "\"..\" segment"), ("..", "\"..\" segment"),
        ("/a\u{0}b", "U+0000"), ("/a\nb", "U+000A"), ("/a\tb", "U+0009"), ("/a\rb", "U+000D"), ("/\u{1B}[31m", "U+001B"), ("/a\u{7F}", "U+007F"), ("/a\u{85}", "U+0085"),
    ])
    func invalidKeysAreRejectedWithTheReason(raw: String, reason: String) throws {
        try expectError(.invalidArgument, field: "key", mentioning: [reason]) { try Key(raw) }
    }

    @Test func controlCharactersAreEscapedInTheMessage() throws {
        let error = try expectError(.invalidArgument, field: "key", mentioning: ["\\u{a}"]) { try Key("/a\nb") }
        #expect(!error.message.contains("\n"), "the message stays on one line")
    }

    @Test func keysSortByUTF8Bytes() throws {
        let sorted = try ["/b", "/a/b", "/a-b", "/\u{E9}", "/Z", "/a", "/a0", "/a.b"].map { try Key($0) }.sorted()
        #expect(sorted.map(\.path) == ["/Z", "/a", "/a-b", "/a.b", "/a/b", "/a0", "/b", "/\u{E9}"])
    }

    @Test func segmentsSplitThePath() throws {
        #expect(try Key("/db/host").segments == ["db", "host"])
        #expect(try Key("x").segments == ["x"])
    }

    @Test func codableNormalizesAndValidates() throws {
        let decoded = try JSONDecoder().decode([Key].self, from: Data(#"["a/b"]"#.utf8))
        #expect(decoded.map(\.path) == ["/a/b"])
        #expect(try JSONDecoder().decode([Key].self, from: JSONEncoder().encode(decoded)) == decoded)
        #expect(throws: DiscfgError.self) { try JSONDecoder().decode([Key].self, from: Data(#"["/a/"]"#.utf8)) }
    }
}
