/// The JSON Schema dialects this validator implements.
public enum SchemaDraft: String, Sendable, CaseIterable {
    /// Draft 7 (`http://json-schema.org/draft-07/schema#`).
    case draft7
    /// Draft 2020-12 (`https://json-schema.org/draft/2020-12/schema`), the default.
    case draft2020_12

    /// The dialect a `$schema` URI names, or nil for one this validator does not know.
    init?(schemaURI: String) {
        var uri = schemaURI
        if uri.hasSuffix("#") { uri.removeLast() }
        if uri.hasPrefix("https://") { uri = "http://" + uri.dropFirst(8) }
        switch uri {
        case "http://json-schema.org/draft-07/schema": self = .draft7
        case "http://json-schema.org/draft/2020-12/schema": self = .draft2020_12
        default: return nil
        }
    }

    /// Keywords whose value is one subschema.
    var singleSubschemaKeywords: [String] {
        switch self {
        case .draft7: ["not", "if", "then", "else", "additionalItems", "contains", "additionalProperties", "propertyNames", "items"]
        case .draft2020_12: ["not", "if", "then", "else", "contains", "additionalProperties", "propertyNames", "items", "unevaluatedItems", "unevaluatedProperties", "contentSchema"]
        }
    }

    /// Keywords whose value maps names to subschemas.
    var subschemaMapKeywords: [String] {
        switch self {
        case .draft7: ["properties", "patternProperties", "definitions", "dependencies"]
        case .draft2020_12: ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"]
        }
    }

    /// Keywords whose value is an array of subschemas.
    var subschemaArrayKeywords: [String] {
        switch self {
        case .draft7: ["allOf", "anyOf", "oneOf", "items"]
        case .draft2020_12: ["allOf", "anyOf", "oneOf", "prefixItems"]
        }
    }
}
