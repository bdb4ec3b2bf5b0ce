import Testing

import DiscfgJSON
@testable import JSONSchema

/// The compiled form's shortcuts answer as the general paths do.
@Suite("JSONSchemaTests.CompiledSchema")
struct CompiledSchemaTests {
    private func validator(_ schema: String, options: JSONSchemaValidator.Options = .init()) throws -> JSONSchemaValidator {
        try JSONSchemaValidator(schema: JSONParser.parse(schema), options: options)
    }

    private static let sequencePatterns = [
        "^[a-z][a-z0-9-]*$", "^[A-Z_]+$", #"^v[0-9]+\.[0-9]+$"#, "^[a-z]{2,4}$", "^[a-z]+", "^a*b$", #"^\d{3}-\d{4}$"#, "^$", "^[0-9]+?x$", #"^\w+$"#,
    ]
    private static let otherPatterns = ["^[a-z]*[a-z0-9]$", "^[a-z]+?x$", "[a-z]+$", "^(ab)+$", "^[^a]+$", "^.+$", "^a|b$", #"^\s+$"#, "^[a-zé]+$"]
    private static let inputs = [
        "", "a", "abc", "a-b", "A", "AB_C", "ab-", "-ab", "v1.2", "v12.34", "v1.", "abcd", "abcde", "é", "aé", "éa", "aaab", "b", "123-4567",
        "12-4567", "abcx", "x", "abab", " ", "a\n", "ab_9",
    ]

    @Test func classSequencesAgreeWithTheBacktrackingMatcher() throws {
        for pattern in Self.sequencePatterns + Self.otherPatterns {
            var parser = RegexParser(pattern)
            let isSequence = ClassSequencePattern(try parser.parse()) != nil
            #expect(isSequence == Self.sequencePatterns.contains(pattern), "\(pattern)")
            let compiled = CompiledPattern(pattern, compiled: nil)
            let regex = try ECMARegex(pattern)
            for input in Self.inputs {
                var budget = RegexBudget()
                var other = RegexBudget()
                #expect(compiled.matches(input, budget: &budget) == (try regex.firstMatch(in: input, budget: &other)), "\(pattern) \(input)")
            }
        }
    }

    @Test func classSequencesSpendTheRegexBudget() throws {
        let v = try validator(##"{"pattern": "^[a-z]+$"}"##, options: .init(regexSteps: 50))
        #expect(v.validate(.string(String(repeating: "a", count: 20))).isValid)
        let result = v.validate(.string(String(repeating: "a", count: 100)))
        #expect(result.errors.map(\.message) == ["pattern too expensive: '^[a-z]+$' ran past the matching step budget"])
    }

    @Test func propertyErrorsFollowTheSchemaOrder() throws {
        let v = try validator(##"{"properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"}}, "required": ["a", "b", "c", "d"]}"##)
        let result = v.validate(try JSONParser.parse(##"{"c": "x", "b": 1, "a": "z"}"##))
        #expect(result.errors.map(\.description) == ["/a: must be integer, not string", "/c: must be integer, not string", "(root): \"d\" is required"])
        // The error cap keeps the first errors in that order too.
        let capped = try validator(##"{"properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}"##, options: .init(maxErrors: 1))
        #expect(capped.validate(try JSONParser.parse(##"{"b": "x", "a": "z"}"##)).errors.map(\.instanceLocation) == ["/a"])
        // Where nothing is reported, the verdict is the same.
        #expect(!(try validator(##"{"not": {"not": {"properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}}}"##)).validate(try JSONParser.parse(##"{"b": "x", "a": "z"}"##)).isValid)
    }

    @Test func propertyNamesCompareScalarByScalar() throws {
        let v = try validator(##"{"properties": {"é": {"type": "integer"}}, "required": ["é"], "additionalProperties": false}"##)
        #expect(v.validate(["é": 1]).isValid)
        #expect(v.validate(["é": "x"]).errors.map(\.description) == ["/é: must be integer, not string"])
        #expect(v.validate(["e\u{301}": 1]).errors.map(\.message) == [#"property "é" is not allowed"#, #""é" is required"#])
        // Swift's String == calls KELVIN SIGN and K equal; member names are not.
        let ascii = try validator(##"{"properties": {"K": {"type": "integer"}, "L": true}, "additionalProperties": false}"##)
        #expect(ascii.validate(["K": 1, "L": 2]).isValid)
        #expect(ascii.validate(["\u{212A}": "x", "L": 2]).errors.map(\.message) == [#"property "\#u{212A}" is not allowed"#])
        #expect(ascii.validate(["L": 2, "K": "x"]).errors.map(\.description) == ["/K: must be integer, not string"])
    }

    @Test func requiredNamesAreCheckedAsWritten() throws {
        let v = try validator(##"{"properties": {"a": true}, "required": ["a", "a", "b"]}"##)
        #expect(v.validate(["a": 1, "b": 2]).isValid)
        #expect(v.validate(["a": 1]).errors.map(\.message) == [#""b" is required"#])
        #expect(v.validate([:]).errors.map(\.message) == [#""a" is required"#, #""a" is required"#, #""b" is required"#])
    }

    @Test func smallIntegerBoundsCompareAsTheirValues() throws {
        let v = try validator(##"{"minimum": -5, "maximum": 65535, "exclusiveMaximum": 1e5}"##)
        for (instance, valid) in [("-5", true), ("-6", false), ("-5.0", true), ("65535", true), ("65536", false), ("6.5535e4", true), ("1e18", false),
                                  ("-1e18", false), ("-4.5", true), ("123456789012345678901234567890", false), ("0", true), ("-0", true)] {
            #expect(v.validate(try JSONParser.parse(instance)).isValid == valid, "\(instance)")
        }
    }

    @Test func stringLengthsCountScalarsWhateverTheirBytes() throws {
        let v = try validator(##"{"minLength": 2, "maxLength": 3}"##)
        for (instance, valid) in [("a", false), ("ab", true), ("abcd", false), ("éé", true), ("éééé", false), ("😀", false), ("😀😀😀", true), ("é", false)] {
            #expect(v.validate(.string(instance)).isValid == valid, "\(instance)")
        }
    }
}
