import Testing

import DiscfgJSON
@testable import JSONSchema

@Suite("JSONSchemaTests.Validator")
struct ValidatorTests {
    private func validator(_ schema: String, registry: [String: JSONValue] = [:], options: JSONSchemaValidator.Options = .init()) throws -> JSONSchemaValidator {
        try JSONSchemaValidator(schema: JSONParser.parse(schema), registry: registry, options: options)
    }

    private func errors(_ schema: String, _ instance: String) throws -> [ValidationError] {
        try validator(schema).validate(JSONParser.parse(instance)).errors
    }

    @Test func messagesAndLocationsPeopleCanAct0n() throws {
        let schema = ##"""
        {"$id": "https://example.com/server.json", "type": "object", "required": ["host", "port"],
         "properties": {"port": {"$ref": "#/$defs/port"}, "tags": {"type": "array", "items": {"type": "string", "maxLength": 3}, "uniqueItems": true}},
         "additionalProperties": false,
         "$defs": {"port": {"type": "integer", "minimum": 1, "maximum": 65535}}}
        """##
        let found = try errors(schema, ##"{"port": 70000, "tags": ["abcd", "x", "x"], "extra": 1}"##)
        let lines = found.map { "\($0.instanceLocation) \($0.keyword) \($0.keywordLocation) \($0.schemaLocation): \($0.message)" }
        #expect(lines == [
            "/port maximum /properties/port/$ref/maximum https://example.com/server.json#/$defs/port/maximum: must be ≤ 65535",
            "/tags/0 maxLength /properties/tags/items/maxLength https://example.com/server.json#/properties/tags/items/maxLength: must be at most 3 characters long",
            "/tags uniqueItems /properties/tags/uniqueItems https://example.com/server.json#/properties/tags/uniqueItems: items 1 and 2 are equal; items must be unique",
            "/extra additionalProperties /additionalProperties https://example.com/server.json#/additionalProperties: property \"extra\" is not allowed",
            " required /required https://example.com/server.json#/required: \"host\" is required",
        ])
        #expect(found[0].description == "/port: must be ≤ 65535")
        #expect(found[4].description == "(root): \"host\" is required")
    }

    @Test func moreMessages() throws {
        #expect(try errors(##"{"type": ["string", "null"]}"##, "1").map(\.message) == ["must be one of string, null, not integer"])
        #expect(try errors(##"{"type": "integer"}"##, "1.5").map(\.message) == ["must be integer, not number"])
        #expect(try errors(##"{"enum": ["a", 1, null]}"##, "2").map(\.message) == [##"must be one of: "a", 1, null"##])
        #expect(try errors(##"{"const": {"a": 1}}"##, "2").map(\.message) == [##"must be {"a":1}"##])
        #expect(try errors(##"{"exclusiveMinimum": 0.5}"##, "0.5").map(\.message) == ["must be > 0.5"])
        #expect(try errors(##"{"multipleOf": 0.01}"##, "1.005").map(\.message) == ["must be a multiple of 0.01"])
        #expect(try errors(##"{"pattern": "^[a-z]+$"}"##, ##""A""##).map(\.message) == ["must match the pattern '^[a-z]+$'"])
        #expect(try errors(##"{"format": "ipv4"}"##, ##""1.2.3""##).map(\.message) == ["must be a valid ipv4"])
        #expect(try errors(##"{"dependentRequired": {"tls": ["cert"]}}"##, ##"{"tls": true}"##).map(\.message) == [##""cert" is required when "tls" is present"##])
        #expect(try errors(##"{"oneOf": [{"type": "integer"}, {"minimum": 0}]}"##, "1").map(\.message) == ["must match exactly one of the schemas in oneOf, but matches 0 and 1"])
        #expect(try errors(##"{"not": {}}"##, "1").map(\.message) == ["must not match the schema in not"])
        #expect(try errors(##"{"anyOf": [{"type": "string"}, {"type": "object", "required": ["a"]}]}"##, "1").map(\.message)
            == ["must match at least one of the 2 schemas in anyOf: [0] must be string, not integer; [1] must be object, not integer"])
        #expect(try errors(##"{"properties": {"p": {"oneOf": [{"type": "string"}, {"properties": {"x": {"minimum": 2}}}]}}}"##, ##"{"p": {"x": 1}}"##).map(\.message)
            == ["must match exactly one of the 2 schemas in oneOf, but matches none: [0] must be string, not object; [1] at /p/x must be ≥ 2"])
        #expect(try errors("false", "1").map(\.message) == ["no value is allowed here"])
        #expect(try errors(##"{"contains": {"const": 1}, "minContains": 2}"##, "[1]").map(\.message) == ["must contain at least 2 items matching the contains schema (has 1)"])
        #expect(try errors(##"{"unevaluatedProperties": false, "properties": {"a": true}}"##, ##"{"a": 1, "b": 2}"##).map(\.instanceLocation) == ["/b"])
        #expect(try errors(##"{"propertyNames": {"maxLength": 2}}"##, ##"{"abc": 1}"##).map(\.message) == [##"property name "abc" does not match the propertyNames schema"##])
        #expect(try errors(##"{"properties": {"a/b~c": {"type": "string"}}}"##, ##"{"a/b~c": 1}"##).map(\.instanceLocation) == ["/a~1b~0c"])
    }

    @Test func numbersAreComparedExactly() throws {
        let v = try validator(##"{"maximum": 18446744073709551615, "multipleOf": 5}"##)
        #expect(v.validate(try JSONParser.parse("18446744073709551615")).isValid)
        #expect(!v.validate(try JSONParser.parse("18446744073709551616")).isValid)  // one past, where Double sees no difference
        #expect(try validator(##"{"type": "integer"}"##).validate(JSONParser.parse("1.0")).isValid)
        #expect(try validator(##"{"type": "integer"}"##).validate(JSONParser.parse("1e400")).isValid)
        #expect(try validator(##"{"const": 1}"##).validate(JSONParser.parse("1.00")).isValid)
        #expect(try validator(##"{"enum": [[1, {"a": 2.0}]]}"##).validate(JSONParser.parse(##"[1.0, {"a": 2}]"##)).isValid)
        #expect(try validator(##"{"multipleOf": 0.1}"##).validate(JSONParser.parse("0.3")).isValid)  // 0.3/0.1 in Double is 2.9999999999999996
        #expect(try validator(##"{"multipleOf": 1e-300}"##).validate(JSONParser.parse("1e308")).isValid)
        #expect(try !validator(##"{"multipleOf": 3e-300}"##).validate(JSONParser.parse("1e308")).isValid)
        #expect(try validator(##"{"multipleOf": 7}"##).validate(JSONParser.parse("7e99999999999")).isValid)
        #expect(try !validator(##"{"multipleOf": 0.7}"##).validate(JSONParser.parse("1e-99999999999")).isValid)
        #expect(try !validator(##"{"minimum": 1e-99999999999}"##).validate(JSONParser.parse("0")).isValid)
    }

    @Test func draftIsChosenBySchemaKeyword() throws {
        // Draft 7: siblings of $ref are ignored, so maximum does not apply.
        let seven = try validator(##"{"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"a": {"type": "integer"}}, "$ref": "#/definitions/a", "maximum": 1}"##)
        #expect(seven.draft == .draft7)
        #expect(seven.validate(5).isValid)
        let twenty = try validator(##"{"$defs": {"a": {"type": "integer"}}, "$ref": "#/$defs/a", "maximum": 1}"##)
        #expect(twenty.draft == .draft2020_12)
        #expect(!twenty.validate(5).isValid)
        // Draft 7 array items and additionalItems; 2020-12 prefixItems and items.
        #expect(try !validator(##"{"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "integer"}], "additionalItems": false}"##).validate([1, 2]).isValid)
        #expect(try !validator(##"{"prefixItems": [{"type": "integer"}], "items": false}"##).validate([1, 2]).isValid)
    }

    @Test func remoteReferencesAreRefusedNeverFetched() throws {
        let v = try validator(##"{"$ref": "https://example.invalid/schema.json"}"##)
        let result = v.validate(1)
        #expect(!result.isValid)
        #expect(result.errors.map(\.message) == ["reference 'https://example.invalid/schema.json' is not in the schema or its registry (remote schemas are never fetched)"])
        let registered = try validator(##"{"$ref": "https://example.com/port.json"}"##, registry: ["https://example.com/port.json": ["type": "integer"]])
        #expect(registered.validate(1).isValid)
        #expect(!registered.validate("1").isValid)
    }

    @Test func formatsCanBeAnnotationsOnly() throws {
        let v = try validator(##"{"format": "date"}"##, options: .init(assertFormats: false))
        #expect(v.validate("2024-02-30").isValid)
        #expect(try !validator(##"{"format": "date"}"##).validate("2024-02-30").isValid)
        #expect(try validator(##"{"format": "date"}"##).validate("2024-02-29").isValid)
        #expect(try validator(##"{"format": "no-such-format"}"##).validate("x").isValid)
    }

    @Test func invalidSchemasAreRefusedWhenBuilt() throws {
        #expect(throws: SchemaError.self) { try validator(##"{"pattern": "(unclosed"}"##) }
        #expect(throws: SchemaError.self) { try validator(##"{"patternProperties": {"[": {}}}"##) }
    }

    @Test func schemasAreCheckedAgainstTheirMetaschema() throws {
        #expect(JSONSchemaValidator.checkSchema(try JSONParser.parse(##"{"type": "object", "properties": {"port": {"type": "integer", "maximum": 65535}}}"##)).isValid)
        let typo = JSONSchemaValidator.checkSchema(try JSONParser.parse(##"{"properties": {"port": {"type": "integr"}}}"##))
        #expect(!typo.isValid)
        #expect(typo.errors.contains { $0.instanceLocation == "/properties/port/type" })
        #expect(!JSONSchemaValidator.checkSchema(try JSONParser.parse(##"{"minLength": -1}"##)).isValid)
        #expect(!JSONSchemaValidator.checkSchema(try JSONParser.parse(##"{"pattern": "(unclosed"}"##)).isValid)
        #expect(!JSONSchemaValidator.checkSchema(try JSONParser.parse(##"{"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": 1}]}"##)).isValid)
        #expect(JSONSchemaValidator.checkSchema(try JSONParser.parse(##"{"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}], "dependencies": {"a": ["b"]}}"##)).isValid)
        for (uri, text) in Metaschemas.documents {
            #expect(JSONSchemaValidator.checkSchema(try JSONParser.parse(text)).isValid, "\(uri)")
        }
    }

    @Test func errorCountIsCapped() throws {
        let v = try validator(##"{"items": {"type": "string"}}"##, options: .init(maxErrors: 5))
        let result = v.validate(.array(Array(repeating: 1, count: 10_000)))
        #expect(!result.isValid)
        #expect(result.errors.count == 5)
    }
}
