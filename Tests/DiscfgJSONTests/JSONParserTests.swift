import Testing

@testable import DiscfgJSON

@Suite("DiscfgJSONTests.JSONParser")
struct JSONParserTests {
    private func parse(_ text: String, _ options: JSONParser.Options = .init()) throws -> JSONValue {
        try JSONParser.parse(text, options: options)
    }

    private func failure(_ text: String, _ options: JSONParser.Options = .init()) -> String? {
        do {
            _ = try JSONParser.parse(text, options: options)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func errorsCarryLineAndColumn() {
        #expect(failure("{\n  \"a\": 1,\n  \"b\": 2 \"c\"\n}") == "line 3, column 10: expected ',' or '}', found '\"'")
        #expect(failure("[1, 2") == "line 1, column 6: expected ',' or ']', found the end of the document")
        #expect(failure("{\"é\": x}") == "line 1, column 7: expected a JSON value, found 'x'")
        #expect(failure("") == "line 1, column 1: expected a JSON value, found the end of the document")
    }

    @Test func escapesAndSurrogates() throws {
        #expect(try parse(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{8}\u{C}\n\r\t"))
        #expect(try parse(#""\u00e9\u20AC""#) == .string("é€"))
        #expect(try parse(#""\uD83D\uDE00""#) == .string("😀"))
        #expect(try parse(#""\u0000""#) == .string("\u{0}"))
        #expect(failure(#""\uD800""#)?.contains("lone high surrogate") == true)
        #expect(failure(#""\uD800x""#)?.contains("lone high surrogate") == true)
        #expect(failure(#""\uDC00""#)?.contains("lone low surrogate") == true)
        #expect(failure(#""\uD800\u0041""#)?.contains("not a low surrogate") == true)
        #expect(failure(#""\x""#) == #"line 1, column 2: invalid escape '\x'"#)
        #expect(failure(#""\u12G4""#)?.contains("4 hex digits") == true)
        #expect(failure("\"a\u{0}b\"")?.contains("NUL byte in a string") == true)
        #expect(failure("\"a\nb\"")?.contains("control character") == true)
        #expect(failure("\"abc")?.contains("unterminated string") == true)
        #expect(throws: JSONParseError.self) { try JSONParser.parse([0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: JSONParseError.self) { try JSONParser.parse([0x22, 0xED, 0xA0, 0x80, 0x22]) }  // UTF-8 encoded surrogate
    }

    @Test func numbers() throws {
        #expect(failure("01")?.contains("leading zeros") == true)
        #expect(failure("-01")?.contains("leading zeros") == true)
        #expect(failure("-") != nil)
        #expect(failure("1.") != nil)
        #expect(failure(".5") != nil)
        #expect(failure("+1") != nil)
        #expect(failure("1e") != nil)
        #expect(failure("1e+") != nil)
        #expect(failure("NaN") != nil)
        #expect(failure("Infinity") != nil)
        #expect(failure("0x10") != nil)
        #expect(try parse("-0") == parse("0"))
        #expect(try parse("1.0") == parse("1"))
        #expect(try parse("10e-1") == parse("1"))
        #expect(try parse("1E2") == parse("100"))
        guard case .number(let big) = try parse("1e400") else { Issue.record("not a number"); return }
        #expect(big.doubleValue == .infinity)
        #expect(big > JSONNumber("1e399")!)
        #expect(big.isInteger)
        guard case .number(let p63) = try parse("9223372036854775808"), case .number(let p64) = try parse("18446744073709551616") else { return }
        #expect(p63.intValue == nil)
        #expect(JSONNumber("9223372036854775807")!.intValue == Int.max)
        #expect(p64 > p63)
        #expect(p64.text == "18446744073709551616")
        #expect(try parse("18446744073709551616") != parse("18446744073709551617"))
        // Exponents far past any Int parse and still order correctly.
        let huge = try #require(JSONNumber("1e99999999999999999999999999"))
        let tiny = try #require(JSONNumber("1e-99999999999999999999999999"))
        #expect(huge > big)
        #expect(tiny > JSONNumber(0))
        #expect(tiny < JSONNumber("1e-400")!)
        #expect(JSONNumber("0.1")!.isInteger == false)
        #expect(JSONNumber("-1.5")! < JSONNumber("-1.25")!)
    }

    @Test func structureErrors() {
        #expect(failure("[1,]") == "line 1, column 4: trailing comma before ']'")
        #expect(failure("{\"a\":1,}") == "line 1, column 8: trailing comma before '}'")
        #expect(failure("{\"a\" 1}")?.contains("expected ':'") == true)
        #expect(failure("{1:2}")?.contains("expected a string key") == true)
        #expect(failure("[1] [2]")?.contains("after the JSON value") == true)
        #expect(failure("tru") != nil)
        #expect(failure("nul") != nil)
        #expect(failure("// comment\n1") != nil)
        #expect(failure("[1]\u{0}") == "line 1, column 4: unexpected NUL byte after the JSON value")
        #expect(failure("\u{0}") == "line 1, column 1: expected a JSON value, found NUL byte")
        #expect(failure("[1,\n\u{7F}]") == "line 2, column 1: expected a JSON value, found byte 0x7F")
    }

    @Test func byteOrderMarkIsSkippedOnlyAtTheStart() throws {
        #expect(try JSONParser.parse([0xEF, 0xBB, 0xBF] + Array("[1]".utf8)) == [1])
        #expect(throws: JSONParseError.self) { try JSONParser.parse(Array(" ".utf8) + [0xEF, 0xBB, 0xBF] + Array("1".utf8)) }
    }

    @Test func duplicateKeys() throws {
        #expect(failure(#"{"a": 1, "a": 2}"#) == #"line 1, column 10: duplicate key "a""#)
        let value = try parse(#"{"a": 1, "b": 2, "a": 3}"#, .init(duplicateKeys: .lastWins))
        guard case .object(let object) = value else { Issue.record("not an object"); return }
        #expect(object.keys == ["a", "b"])
        #expect(object["a"] == 3)
    }

    @Test func depthBombIsAnErrorNotACrash() {
        let bomb = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(failure(bomb) == "line 1, column 513: nesting deeper than the limit of 512")
        let objects = String(repeating: "{\"a\":", count: 100_000) + "1" + String(repeating: "}", count: 100_000)
        #expect(failure(objects)?.contains("nesting deeper") == true)
        let deepOK = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(failure(deepOK) == nil)
        #expect(failure("[[[1]]]", .init(maxDepth: 2))?.contains("limit of 2") == true)
    }

    @Test func sizeLimit() {
        #expect(failure("[1,2,3]", .init(maxBytes: 6)) == "line 1, column 1: document is 7 bytes, more than the limit of 6")
    }

    @Test func tenMegabyteStringsAndNumbersParseInLinearTime() throws {
        let clock = ContinuousClock()
        let long = String(repeating: "a", count: 10_000_000)
        let escaped = String(repeating: "\\n", count: 5_000_000)
        let digits = String(repeating: "7", count: 10_000_000)
        let elapsed = try clock.measure { () throws in
            #expect(try parse("\"\(long)\"") == .string(long))
            guard case .string(let s) = try parse("\"\(escaped)\"") else { Issue.record("not a string"); return }
            #expect(s.utf8.count == 5_000_000)
            guard case .number(let n) = try parse(digits + ".5e-3") else { Issue.record("not a number"); return }
            #expect(n.digits.count == 10_000_001)
        }
        #expect(elapsed < .seconds(20))
    }

    @Test func serializerIsCanonical() throws {
        let value = try parse(#"{"b": [1.0, -0, 1E2, 12.5e-10, 0.00001, 1e20, 1e22, 123.456, 2e-7], "a": "x\"\\\n\u0001é😀", "c": {"z": null, "y": true}}"#)
        #expect(try JSONSerializer.string(value) == #"{"b":[1,0,100,1.25e-9,0.00001,100000000000000000000,1e+22,123.456,2e-7],"a":"x\"\\\n\u0001é😀","c":{"z":null,"y":true}}"#)
        #expect(try JSONSerializer.string(value, options: .init(sortKeys: true)).hasPrefix(#"{"a":"#))
        // Round trip: writing then parsing gives an equal value.
        #expect(try parse(JSONSerializer.string(value)) == value)
        var deep: JSONValue = 1
        for _ in 0..<600 { deep = [deep] }
        #expect(throws: JSONSerializer.DepthError.self) { try JSONSerializer.serialize(deep) }
    }

    @Test func equalityIgnoresMemberOrderAndNumberSpelling() throws {
        #expect(try parse(#"{"a": 1, "b": [1.0, {"c": 2}]}"#) == parse(#"{"b": [1, {"c": 2.00}], "a": 10e-1}"#))
        #expect(try parse(#"{"a": 1}"#) != parse(#"{"a": 1, "b": 1}"#))
        #expect(try Set([parse("1.0"), parse("1"), parse("1e0")]).count == 1)
        #expect(try parse("[1]") != parse("[true]"))
        #expect(try parse("0") != parse("false"))
    }
}
