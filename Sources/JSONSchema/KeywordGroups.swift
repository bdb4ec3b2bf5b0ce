/// Which families of keywords a schema object uses, found in one pass over its members, so
/// evaluation skips the lookups of families it does not use (most subschemas hold 1–4 keywords).
struct KeywordGroups: OptionSet {
    let rawValue: UInt8

    static let references = KeywordGroups(rawValue: 1 << 0)
    static let inPlace = KeywordGroups(rawValue: 1 << 1)
    static let any = KeywordGroups(rawValue: 1 << 2)
    static let number = KeywordGroups(rawValue: 1 << 3)
    static let string = KeywordGroups(rawValue: 1 << 4)
    static let object = KeywordGroups(rawValue: 1 << 5)
    static let array = KeywordGroups(rawValue: 1 << 6)

    private static let byKeyword: [String: KeywordGroups] = [
        "$ref": .references, "$dynamicRef": .references,
        "allOf": .inPlace, "anyOf": .inPlace, "oneOf": .inPlace, "not": .inPlace, "if": .inPlace,
        "dependentSchemas": .inPlace, "dependencies": .inPlace,
        "type": .any, "enum": .any, "const": .any,
        "minimum": .number, "maximum": .number, "exclusiveMinimum": .number, "exclusiveMaximum": .number, "multipleOf": .number,
        "minLength": .string, "maxLength": .string, "pattern": .string, "format": .string,
        "properties": .object, "patternProperties": .object, "additionalProperties": .object, "propertyNames": .object,
        "required": .object, "dependentRequired": .object, "minProperties": .object, "maxProperties": .object,
        "unevaluatedProperties": .object,
        "items": .array, "prefixItems": .array, "additionalItems": .array, "contains": .array, "minContains": .array,
        "maxContains": .array, "minItems": .array, "maxItems": .array, "uniqueItems": .array, "unevaluatedItems": .array,
    ]

    init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    init(_ object: JSONObject) {
        var groups: KeywordGroups = []
        for (key, _) in object {
            if let group = Self.byKeyword[key] { groups.insert(group) }
        }
        self = groups
    }
}
