import Testing

@testable import DiscfgJSON

@Suite("DiscfgJSONTests.JSONPointer")
struct JSONPointerTests {
    /// The document of RFC 6901 §5.
    private let rfcDocument: JSONValue = try! JSONParser.parse(#"""
        {
          "foo": ["bar", "baz"],
          "": 0,
          "a/b": 1,
          "c%d": 2,
          "e^f": 3,
          "g|h": 4,
          "i\\j": 5,
          "k\"l": 6,
          " ": 7,
          "m~n": 8
        }
        """#)

    @Test(arguments: [
        (#""#, nil),
        (#"/foo"#, #"["bar", "baz"]"#),
        (#"/foo/0"#, #""bar""#),
        (#"/"#, "0"),
        (#"/a~1b"#, "1"),
        (#"/c%d"#, "2"),
        (#"/e^f"#, "3"),
        (#"/g|h"#, "4"),
        (#"/i\j"#, "5"),
        (#"/k"l"#, "6"),
        (#"/ "#, "7"),
        (#"/m~0n"#, "8"),
    ] as [(String, String?)])
    func rfc6901Section5Examples(pointer text: String, expected: String?) throws {
        let pointer = try JSONPointer(text)
        let found = try #require(pointer.resolve(in: rfcDocument))
        let wanted = try expected.map { try JSONParser.parse($0) } ?? rfcDocument
        #expect(found == wanted)
        // Escaping back gives the same text.
        #expect(pointer.description == text)
    }

    @Test func tokensAreUnescapedOnceTildeOneBeforeTildeZero() throws {
        #expect(try JSONPointer("/a~1b/m~0n/~01/~10").tokens == ["a/b", "m~n", "~1", "/0"])
        #expect(try JSONPointer("").tokens == [])
        #expect(try JSONPointer("/").tokens == [""])
        #expect(try JSONPointer("//").tokens == ["", ""])
        #expect(try JSONPointer("/é/日本").tokens == ["é", "日本"])
        #expect(JSONPointer(tokens: ["~1", "a/b", ""]).description == "/~01/a~1b/")
        #expect(JSONPointer(tokens: []).description == "")
        let built = JSONPointer.root.appending("servers").appending("0").appending("a/b")
        #expect(built.description == "/servers/0/a~1b")
        #expect(built == (try JSONPointer("/servers/0/a~1b")))
        #expect(built.parent == (try JSONPointer("/servers/0")))
        #expect(JSONPointer.root.parent == nil)
    }

    @Test func tokensCompareScalarByScalar() throws {
        let composed = try JSONPointer("/\u{E9}")
        let decomposed = try JSONPointer("/e\u{301}")
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)
        let document: JSONValue = ["\u{E9}": 1]
        #expect(composed.resolve(in: document) == 1)
        #expect(decomposed.resolve(in: document) == nil)
    }

    @Test func ancestry() throws {
        let a = try JSONPointer("/a")
        #expect(a.isAncestor(of: try JSONPointer("/a/b")))
        #expect(a.isAncestor(of: try JSONPointer("/a/b/c")))
        #expect(!a.isAncestor(of: a))
        #expect(!a.isAncestor(of: try JSONPointer("/ab")))
        #expect(!a.isAncestor(of: try JSONPointer("/b/a")))
        #expect(JSONPointer.root.isAncestor(of: a))
        #expect(!JSONPointer.root.isAncestor(of: .root))
    }

    @Test(arguments: [
        ("a/b", "must be empty or start with \"/\" (found \"a\" at position 1)"),
        ("#/a", "must be empty or start with \"/\" (found \"#\" at position 1)"),
        ("/~2", "\"~2\" at position 2 is not an escape; \"~\" must be followed by \"0\" (for \"~\") or \"1\" (for \"/\")"),
        ("/ab~", "\"~\" at position 4 ends the pointer; \"~\" must be followed by \"0\" (for \"~\") or \"1\" (for \"/\")"),
        ("~", "must be empty or start with \"/\" (found \"~\" at position 1)"),
        ("/~", "\"~\" at position 2 ends the pointer; \"~\" must be followed by \"0\" (for \"~\") or \"1\" (for \"/\")"),
        ("/日本/~a", "\"~a\" at position 5 is not an escape; \"~\" must be followed by \"0\" (for \"~\") or \"1\" (for \"/\")"),
        ("/a/~/b", "\"~/\" at position 4 is not an escape; \"~\" must be followed by \"0\" (for \"~\") or \"1\" (for \"/\")"),
        ("/~é", "\"~é\" at position 2 is not an escape; \"~\" must be followed by \"0\" (for \"~\") or \"1\" (for \"/\")"),
    ])
    func malformedPointersNameTheProblemAndPosition(text: String, message: String) {
        #expect(throws: JSONPointerError(pointer: text, message: message)) { try JSONPointer(text) }
    }

    @Test func errorDescriptionQuotesThePointer() {
        do {
            _ = try JSONPointer("/a~2")
            Issue.record("no error")
        } catch {
            #expect(error.description == #"JSON pointer "/a~2": "~2" at position 3 is not an escape; "~" must be followed by "0" (for "~") or "1" (for "/")"#)
        }
    }

    @Test(arguments: ["01", "00", "-1", "+1", "1e0", " 1", "1 ", "", "0x1", "-",
                      "9223372036854775807", "9223372036854775808", "18446744073709551616", "١"])
    func arrayTokensMustBeCanonicalIndicesInRange(token: String) {
        let document: JSONValue = ["a", "b", "c"]
        #expect(JSONPointer(tokens: [token]).resolve(in: document) == nil)
    }

    @Test func arrayIndicesResolve() {
        let document: JSONValue = ["list": ["a", "b", ["c": [true]]]]
        #expect(JSONPointer(tokens: ["list", "0"]).resolve(in: document) == "a")
        #expect(JSONPointer(tokens: ["list", "2", "c", "0"]).resolve(in: document) == true)
        #expect(JSONPointer(tokens: ["list", "3"]).resolve(in: document) == nil)
        #expect(JSONPointer(tokens: ["list", "0", "x"]).resolve(in: document) == nil)
        #expect(JSONPointer(tokens: ["list", "2", "c", "0", "deeper"]).resolve(in: document) == nil)
        #expect(JSONPointer.arrayToken("10") == .index(10))
        #expect(JSONPointer.arrayToken("0") == .index(0))
        #expect(JSONPointer.arrayToken("9223372036854775807") == .index(Int.max))
        #expect(JSONPointer.arrayToken("9223372036854775808") == .tooLarge)
        #expect(JSONPointer.arrayToken("18446744073709551616") == .tooLarge)
        #expect(JSONPointer.arrayToken("-") == .end)
        #expect(JSONPointer.arrayToken("01") == .invalid(#""01" is not an array index (leading zeros are not allowed)"#))
        #expect(JSONPointer.arrayToken("-1") == .invalid(#""-1" is not an array index (digits, or "-" for the end)"#))
    }

    @Test func tenThousandTokensParsePrintAndResolve() throws {
        let text = String(repeating: "/a~1~0", count: 10_000)
        let start = ContinuousClock.now
        let pointer = try JSONPointer(text)
        // Linear: a parser that counted positions from the start at each "~" took 40 s here.
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(pointer.tokens.count == 10_000)
        #expect(pointer.tokens.allSatisfy { $0 == "a/~" })
        #expect(pointer.description == text)
        #expect(pointer.resolve(in: ["a/~": ["a/~": 1]]) == nil)

        // A 400-deep document (within the parser's bound): the pointer runs past its end.
        let deep = try JSONParser.parse(String(repeating: #"{"a/~":"#, count: 400) + "1" + String(repeating: "}", count: 400))
        #expect(pointer.resolve(in: deep) == nil)
        #expect(JSONPointer(tokens: Array(pointer.tokens.prefix(400))).resolve(in: deep) == 1)
        #expect(JSONPointer(tokens: Array(pointer.tokens.prefix(399))).resolve(in: deep) == ["a/~": 1])

        // An error deep into a long pointer still names its position.
        #expect(throws: JSONPointerError.self) { try JSONPointer(text + "/~") }
        do {
            _ = try JSONPointer(text + "/~")
        } catch {
            #expect(error.message.contains("at position \(text.unicodeScalars.count + 2) ends the pointer"))
        }
    }
}
