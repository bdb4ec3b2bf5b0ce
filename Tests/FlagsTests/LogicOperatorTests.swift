import DiscfgJSON
import Testing

@testable import DiscfgFlags

@Suite("FlagsTests.Operators")
struct LogicOperatorTests {
    static let data = #"{"plan": "pro", "age": 42, "score": "2.5", "tags": ["a", "b"], "user": {"tier": "gold"}, "targetingKey": "user-123", "version": "v1.2.3", "$flagd": {"flagKey": "my-flag"}}"#

    /// The rule's value, as JSON text written as the reference writes it (floats with `.0`).
    func run(_ rule: String, _ generation: FractionalGeneration = .canonicalCBOR) throws -> String {
        var run = LogicRun(fractional: generation)
        let value = try run.evaluate(try JSONParser.parse(rule), LogicValue(try JSONParser.parse(Self.data)))
        return value.isNull ? "null" : try JSONSerializer.string(value.json, options: .init(numbersAsWritten: true))
    }

    @Test("var: dotted paths, indexes, length, defaults")
    func variable() throws {
        #expect(try run(#"{"var": "user.tier"}"#) == #""gold""#)
        #expect(try run(#"{"var": "tags.1"}"#) == #""b""#)
        #expect(try run(#"{"var": "tags.length"}"#) == "2")
        #expect(try run(#"{"var": ["nope", 7]}"#) == "7")
        #expect(try run(#"{"var": "$flagd.flagKey"}"#) == #""my-flag""#)
    }

    @Test("comparisons coerce as JSON Logic does; between forms take three arguments")
    func comparisons() throws {
        #expect(try run(#"{"==": [42, "42"]}"#) == "true")
        #expect(try run(#"{"===": [42, "42"]}"#) == "false")
        #expect(try run(#"{"!=": [null, 0]}"#) == "false")
        #expect(try run(#"{"!==": [1, 1.0]}"#) == "false")
        #expect(try run(#"{"<": [1, {"var": "age"}, 50]}"#) == "true")
        #expect(try run(#"{"<=": [1, 1, 0]}"#) == "false")
        #expect(try run(#"{">": ["b", "a"]}"#) == "true")
        #expect(try run(#"{">=": [{"var": "score"}, 2.5]}"#) == "true")
    }

    @Test("logic: if chains, and/or return an operand, ! and !!")
    func logic() throws {
        #expect(try run(#"{"if": [false, 1, null, 2, 3]}"#) == "3")
        #expect(try run(#"{"and": [1, "", 2]}"#) == #""""#)
        #expect(try run(#"{"or": [0, [], "x"]}"#) == #""x""#)
        #expect(try run(#"{"!": [[]]}"#) == "true")
        #expect(try run(#"{"!!": ["0"]}"#) == "true")
    }

    @Test("strings and arrays: in, cat, substr, merge, missing, missing_some")
    func stringsAndArrays() throws {
        #expect(try run(#"{"in": ["pro", ["free", "pro"]]}"#) == "true")
        #expect(try run(#"{"in": ["ro", {"var": "plan"}]}"#) == "true")
        #expect(try run(#"{"cat": ["a", 1, 2.5, true, null]}"#) == #""a12.5Truenull""#)
        #expect(try run(#"{"substr": ["discfg", -3]}"#) == #""cfg""#)
        #expect(try run(#"{"substr": ["discfg", 1, -2]}"#) == #""isc""#)
        #expect(try run(#"{"merge": [[1], 2, [[3]]]}"#) == "[1,2,[3]]")
        #expect(try run(#"{"missing": ["plan", "nope", "user.tier"]}"#) == #"["nope"]"#)
        #expect(try run(#"{"missing_some": [1, ["plan", "nope"]]}"#) == "[]")
        #expect(try run(#"{"missing_some": [2, ["plan", "nope"]]}"#) == #"["nope"]"#)
    }

    @Test("arithmetic keeps integers exact and makes floats as the reference does")
    func arithmetic() throws {
        #expect(try run(#"{"+": [1, 2]}"#) == "3")
        #expect(try run(#"{"+": ["1", 2]}"#) == "3.0")
        #expect(try run(#"{"-": [5]}"#) == "-5")
        #expect(try run(#"{"*": [2, 2.5]}"#) == "5.0")
        #expect(try run(#"{"/": [6, 3]}"#) == "2.0")
        #expect(try run(#"{"%": [-7, 3]}"#) == "2")
        #expect(try run(#"{"min": [3, 1.5, "2"]}"#) == "1.5")
        #expect(try run(#"{"max": [3, 1.5]}"#) == "3")
        #expect(throws: LogicError.self) { try run(#"{"/": [1, 0]}"#) }
    }

    @Test("map, filter, reduce, all, none, some")
    func iteration() throws {
        #expect(try run(#"{"map": [[1, 2], {"*": [{"var": ""}, 2]}]}"#) == "[2,4]")
        #expect(try run(#"{"filter": [[1, 2, 3], {">": [{"var": ""}, 1]}]}"#) == "[2,3]")
        #expect(try run(#"{"reduce": [[1, 2, 3], {"+": [{"var": "current"}, {"var": "accumulator"}]}, 0]}"#) == "6")
        #expect(try run(#"{"all": [[], true]}"#) == "false")
        #expect(try run(#"{"none": [{"var": "tags"}, {"==": [{"var": ""}, "z"]}]}"#) == "true")
        #expect(try run(#"{"some": [{"var": "tags"}, {"==": [{"var": ""}, "b"]}]}"#) == "true")
    }

    @Test("starts_with, ends_with and sem_ver; bad arguments give null")
    func custom() throws {
        #expect(try run(#"{"starts_with": [{"var": "targetingKey"}, "user"]}"#) == "true")
        #expect(try run(#"{"ends_with": [{"var": "targetingKey"}, 123]}"#) == "null")
        #expect(try run(#"{"sem_ver": [{"var": "version"}, ">=", "1.2"]}"#) == "true")
        #expect(try run(#"{"sem_ver": ["1.2.3-alpha", "<", "1.2.3"]}"#) == "true")
        #expect(try run(#"{"sem_ver": ["1.2.3-alpha.2", "<", "1.2.3-alpha.10"]}"#) == "true")
        #expect(try run(#"{"sem_ver": ["1.2.3+build", "=", "1.2.3"]}"#) == "true")
        #expect(try run(#"{"sem_ver": ["2.1.0", "^", "2.9.9"]}"#) == "true")
        #expect(try run(#"{"sem_ver": ["2.1.0", "~", "2.2.0"]}"#) == "false")
        #expect(try run(#"{"sem_ver": ["01.2.3", "=", "1.2.3"]}"#) == "null")
        #expect(try run(#"{"sem_ver": ["1.2.3", "=="]}"#) == "null")
    }

    @Test("fractional: both generations bucket deterministically; bad arguments give null")
    func fractional() throws {
        let rule = #"{"fractional": [["a", 50], ["b", 50]]}"#
        let current = try run(rule)
        #expect(current == (try run(rule)))
        #expect([#""a""#, #""b""#].contains(current))
        #expect(try run(#"{"fractional": [["only"]]}"#, .utf8Concatenation) == #""only""#)
        #expect(try run(#"{"fractional": [["a", 1.5]]}"#) == "null")
        #expect(try run(#"{"fractional": [["a", 0]]}"#) == "null")
        #expect(try run(#"{"fractional": [null, ["a", 1]]}"#) == "null")
        #expect(try run(#"{"fractional": []}"#) == "null")
    }

    @Test("deeply nested rules and runaway arrays fail with an error, not a crash")
    func bombs() throws {
        let deep = String(repeating: #"{"!": "#, count: 300) + "true" + String(repeating: "}", count: 300)
        var run = LogicRun(fractional: .canonicalCBOR)
        let rule = try JSONParser.parse(deep, options: .init(maxDepth: 1000))
        #expect(throws: LogicError.self) { try run.evaluate(rule, .null) }
        let steps = (1...40).map(String.init).joined(separator: ",")
        let doubling = #"{"reduce": [[\#(steps)], {"merge": [{"var": "accumulator"}, {"var": "accumulator"}]}, [1]]}"#
        #expect(throws: LogicError.self) { try self.run(doubling) }
        var mapped = #"[1,2,3,4,5,6,7,8,9,10]"#
        for _ in 0..<7 { mapped = #"{"map": ["# + mapped + #", {"merge": [{"var": ""}, {"var": ""}, {"var": ""}, {"var": ""}, {"var": ""}, {"var": ""}, {"var": ""}, {"var": ""}]}]}"# }
        #expect(throws: LogicError.self) { try self.run(#"{"merge": [\#(mapped), \#(mapped)]}"#) }
    }
}
