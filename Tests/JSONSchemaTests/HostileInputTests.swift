import Foundation
import Testing

import DiscfgJSON
@testable import JSONSchema

/// What an attacker who controls the instance (or the schema) can try, and what they get.
@Suite("JSONSchemaTests.HostileInput")
struct HostileInputTests {
    /// A value nested `depth` arrays deep.
    private func deepArray(_ depth: Int) -> JSONValue {
        var value: JSONValue = 1
        for _ in 0..<depth { value = [value] }
        return value
    }

    /// Takes a deep value apart one level at a time: letting Swift free it would recurse once per level.
    private func dismantle(_ value: inout JSONValue) {
        while case .array(let items) = value, let first = items.first {
            value = first
        }
    }

    @Test func selfReferenceOnADeepInstanceEndsWithAnError() throws {
        let validator = try JSONSchemaValidator(schema: JSONParser.parse(##"{"items": {"$ref": "#"}}"##))
        var deep = deepArray(100_000)
        let result = validator.validate(deep)
        dismantle(&deep)
        #expect(!result.isValid)
        #expect(result.errors.first?.message.contains("nests deeper than 400 levels") == true)
    }

    @Test func referenceCyclesWithoutProgressEnd() throws {
        for schema in [##"{"$ref": "#"}"##, ##"{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}"##,
                       ##"{"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"a": {"$ref": "#/definitions/a"}}, "$ref": "#/definitions/a"}"##,
                       ##"{"$dynamicAnchor": "x", "$dynamicRef": "#x"}"##]
        {
            let result = try JSONSchemaValidator(schema: JSONParser.parse(schema)).validate(1)
            #expect(!result.isValid, "\(schema)")
            #expect(result.errors.contains { $0.message.contains("nests deeper") }, "\(schema)")
        }
    }

    /// Validates on a new thread with a stack of `stackSize` bytes.
    private func validate(_ validator: JSONSchemaValidator, _ instance: JSONValue, stackSize: Int) -> ValidationResult {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: ValidationResult?
        let thread = Thread {
            result = validator.validate(instance)
            done.signal()
        }
        thread.stackSize = stackSize
        thread.start()
        done.wait()
        return result!
    }

    @Test(arguments: [
        ##"{"anyOf": [{"$ref": "#"}, {"$ref": "#"}]}"##,
        ##"{"oneOf": [{"not": {"$ref": "#"}}, {"not": {"$ref": "#"}}, {"$ref": "#"}]}"##,
        ##"{"$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}, {"$ref": "#/$defs/b"}]}, "b": {"anyOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}"##,
    ])
    func branchingReferenceCyclesRunOutOfBudgetInsteadOfForever(_ schema: String) throws {
        let validator = try JSONSchemaValidator(schema: JSONParser.parse(schema), options: .init(maxEvaluations: 10_000))
        let clock = ContinuousClock()
        var result: ValidationResult?
        let elapsed = clock.measure { result = validator.validate(1) }
        #expect(result?.isValid == false)
        #expect(result?.errors.first?.message == "schema evaluation too expensive: more than 10000 subschema evaluations")
        #expect(elapsed < .seconds(10))
        #expect(JSONSchemaValidator.Options().maxEvaluations == 1_000_000)
    }

    @Test func deepRecursionStopsBeforeASmallStackEnds() throws {
        let schema = try JSONParser.parse(##"{"type": ["object", "integer"], "properties": {"a": {"$ref": "#"}}, "unevaluatedProperties": false}"##)
        let validator = try JSONSchemaValidator(schema: schema, options: .init(maxDepth: 100_000))
        func nested(_ depth: Int) throws -> JSONValue {
            try JSONParser.parse(String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth))
        }
        // The parser's deepest document, on a 512 KiB stack with no depth limit to help: an error, no crash.
        let small = validate(validator, try nested(512), stackSize: 512 << 10)
        #expect(!small.isValid)
        #expect(small.errors.first?.message.contains("deeper than this thread's stack allows") == true)
        // A 8 MiB stack holds ordinary depths.
        #expect(validate(validator, try nested(100), stackSize: 8 << 20).isValid)
        #expect(!validate(validator, try nested(100), stackSize: 8 << 20).errors.contains { $0.message.contains("stack") })
    }

    @Test func pathologicalPatternFailsTheWriteQuickly() throws {
        let validator = try JSONSchemaValidator(schema: JSONParser.parse(##"{"pattern": "(a+)+$"}"##))
        let clock = ContinuousClock()
        var result: ValidationResult?
        let elapsed = clock.measure { result = validator.validate(.string(String(repeating: "a", count: 5000) + "!")) }
        #expect(result?.isValid == false)
        #expect(result?.errors.first?.message == "pattern too expensive: '(a+)+$' ran past the matching step budget")
        #expect(elapsed < .seconds(10))
        // The budget covers the whole validation: many property names cannot multiply it.
        let perKey = try JSONSchemaValidator(schema: JSONParser.parse(##"{"patternProperties": {"^(a|aa)+$": true}}"##), options: .init(regexSteps: 1_000_000))
        var members = JSONObject()
        for i in 0..<2000 { members[String(repeating: "a", count: 30) + "\(i)"] = 1 }
        let elapsed2 = clock.measure { #expect(!perKey.validate(.object(members)).isValid) }
        #expect(elapsed2 < .seconds(10))
    }

    @Test func uniqueItemsAndEnumOnHugeArraysStayLinear() throws {
        let clock = ContinuousClock()
        let items = (0..<200_000).map { JSONValue.number(JSONNumber($0)) }
        let unique = try JSONSchemaValidator(schema: JSONParser.parse(##"{"uniqueItems": true}"##))
        let elapsed = clock.measure {
            #expect(unique.validate(.array(items)).isValid)
            #expect(!unique.validate(.array(items + [.number(JSONNumber("199999.0")!)])).isValid)
        }
        #expect(elapsed < .seconds(10))
        // Deeply nested equal items: hashing stops at a fixed depth, equality walks without recursion.
        var a = deepArray(50_000)
        var b = deepArray(50_000)
        #expect(!unique.validate([a, b]).isValid)
        #expect(try JSONSchemaValidator(schema: ["const": a]).validate(b).isValid)
        dismantle(&a)
        dismantle(&b)
        let bigEnum = try JSONSchemaValidator(schema: .object(JSONObject([(key: "enum", value: .array(items))])))
        let elapsed2 = clock.measure {
            for i in 0..<1000 { #expect(!bigEnum.validate(.number(JSONNumber(200_000 + i))).isValid) }
            #expect(bigEnum.validate(.number(JSONNumber("1234.000")!)).isValid)
        }
        #expect(elapsed2 < .seconds(10))
    }

    @Test func hugeNumbersDoNotStallArithmetic() throws {
        let clock = ContinuousClock()
        let elapsed = try clock.measure { () throws in
            for (schema, instance, valid) in [
                (##"{"multipleOf": 1e-300}"##, "1e300", true),
                (##"{"multipleOf": 3}"##, "1e99999999999999999999", false),
                (##"{"multipleOf": 2}"##, "1e99999999999999999999", true),
                (##"{"multipleOf": 123456789012345678901234567890}"##, "1e400", false),
                (##"{"maximum": 1e308}"##, "1e400", false),
                (##"{"minimum": -1e400}"##, "-1e399", true),
                (##"{"maxLength": 1e400}"##, ##""abc""##, true),
                (##"{"minItems": 18446744073709551616}"##, "[]", false),
            ] {
                #expect(try JSONSchemaValidator(schema: JSONParser.parse(schema)).validate(JSONParser.parse(instance)).isValid == valid, "\(schema) \(instance)")
            }
        }
        #expect(elapsed < .seconds(5))
    }

    @Test func schemaSizeIsBounded() throws {
        var properties = JSONObject()
        for i in 0..<2000 { properties["p\(i)"] = ["type": "string"] }
        let schema = JSONValue.object(JSONObject([(key: "properties", value: .object(properties))]))
        #expect(throws: SchemaError.self) { try JSONSchemaValidator(schema: schema, options: .init(maxSubschemas: 1000)) }
        #expect(throws: Never.self) { try JSONSchemaValidator(schema: schema) }
        var nested: JSONValue = true
        for _ in 0..<300 { nested = ["not": nested] }
        #expect(throws: SchemaError.self) { try JSONSchemaValidator(schema: nested) }
    }

    @Test func errorMessagesStayShortForHugeValues() throws {
        let validator = try JSONSchemaValidator(schema: ["const": .string(String(repeating: "x", count: 1_000_000))])
        let message = try #require(validator.validate("y").errors.first?.message)
        #expect(message.count < 80)
    }
}
