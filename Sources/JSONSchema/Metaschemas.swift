import DiscfgJSON

/// The draft 7 and draft 2020-12 metaschemas, so a schema can `$ref` them (and be checked
/// against them) with nothing fetched. Written from the published specifications.
enum Metaschemas {
    /// Document URI to text.
    static let documents: [String: String] = [
        "http://json-schema.org/draft-07/schema": draft7,
        "https://json-schema.org/draft/2020-12/schema": draft2020Root,
        "https://json-schema.org/draft/2020-12/meta/core": draft2020Core,
        "https://json-schema.org/draft/2020-12/meta/applicator": draft2020Applicator,
        "https://json-schema.org/draft/2020-12/meta/unevaluated": draft2020Unevaluated,
        "https://json-schema.org/draft/2020-12/meta/validation": draft2020Validation,
        "https://json-schema.org/draft/2020-12/meta/meta-data": draft2020MetaData,
        "https://json-schema.org/draft/2020-12/meta/format-annotation": draft2020FormatAnnotation,
        "https://json-schema.org/draft/2020-12/meta/content": draft2020Content,
    ]

    /// All metaschemas, indexed once per process.
    static let index: SchemaIndex = {
        var index = SchemaIndex()
        for (uri, text) in documents.sorted(by: { $0.key < $1.key }) {
            let draft: SchemaDraft = uri.hasPrefix("http://json-schema.org/draft-07") ? .draft7 : .draft2020_12
            // The texts are constants checked by the tests; a failure here is a programming error.
            try! index.add(JSONParser.parse(text), uri: uri, draft: draft, limit: 10_000)
        }
        return index
    }()

    private static let draft7 = ##"""
    {"$schema": "http://json-schema.org/draft-07/schema#", "$id": "http://json-schema.org/draft-07/schema#",
     "title": "Core schema meta-schema",
     "definitions": {
      "schemaArray": {"type": "array", "minItems": 1, "items": {"$ref": "#"}},
      "nonNegativeInteger": {"type": "integer", "minimum": 0},
      "nonNegativeIntegerDefault0": {"allOf": [{"$ref": "#/definitions/nonNegativeInteger"}, {"default": 0}]},
      "simpleTypes": {"enum": ["array", "boolean", "integer", "null", "number", "object", "string"]},
      "stringArray": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "default": []}
     },
     "type": ["object", "boolean"],
     "properties": {
      "$id": {"type": "string", "format": "uri-reference"},
      "$schema": {"type": "string", "format": "uri"},
      "$ref": {"type": "string", "format": "uri-reference"},
      "$comment": {"type": "string"},
      "title": {"type": "string"},
      "description": {"type": "string"},
      "default": true,
      "readOnly": {"type": "boolean", "default": false},
      "writeOnly": {"type": "boolean", "default": false},
      "examples": {"type": "array", "items": true},
      "multipleOf": {"type": "number", "exclusiveMinimum": 0},
      "maximum": {"type": "number"},
      "exclusiveMaximum": {"type": "number"},
      "minimum": {"type": "number"},
      "exclusiveMinimum": {"type": "number"},
      "maxLength": {"$ref": "#/definitions/nonNegativeInteger"},
      "minLength": {"$ref": "#/definitions/nonNegativeIntegerDefault0"},
      "pattern": {"type": "string", "format": "regex"},
      "additionalItems": {"$ref": "#"},
      "items": {"anyOf": [{"$ref": "#"}, {"$ref": "#/definitions/schemaArray"}], "default": true},
      "maxItems": {"$ref": "#/definitions/nonNegativeInteger"},
      "minItems": {"$ref": "#/definitions/nonNegativeIntegerDefault0"},
      "uniqueItems": {"type": "boolean", "default": false},
      "contains": {"$ref": "#"},
      "maxProperties": {"$ref": "#/definitions/nonNegativeInteger"},
      "minProperties": {"$ref": "#/definitions/nonNegativeIntegerDefault0"},
      "required": {"$ref": "#/definitions/stringArray"},
      "additionalProperties": {"$ref": "#"},
      "definitions": {"type": "object", "additionalProperties": {"$ref": "#"}, "default": {}},
      "properties": {"type": "object", "additionalProperties": {"$ref": "#"}, "default": {}},
      "patternProperties": {"type": "object", "additionalProperties": {"$ref": "#"}, "propertyNames": {"format": "regex"}, "default": {}},
      "dependencies": {"type": "object", "additionalProperties": {"anyOf": [{"$ref": "#"}, {"$ref": "#/definitions/stringArray"}]}},
      "propertyNames": {"$ref": "#"},
      "const": true,
      "enum": {"type": "array", "items": true},
      "type": {"anyOf": [{"$ref": "#/definitions/simpleTypes"},
                         {"type": "array", "items": {"$ref": "#/definitions/simpleTypes"}, "minItems": 1, "uniqueItems": true}]},
      "format": {"type": "string"},
      "contentMediaType": {"type": "string"},
      "contentEncoding": {"type": "string"},
      "if": {"$ref": "#"},
      "then": {"$ref": "#"},
      "else": {"$ref": "#"},
      "allOf": {"$ref": "#/definitions/schemaArray"},
      "anyOf": {"$ref": "#/definitions/schemaArray"},
      "oneOf": {"$ref": "#/definitions/schemaArray"},
      "not": {"$ref": "#"}
     },
     "default": true}
    """##

    private static let draft2020Root = ##"""
    {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://json-schema.org/draft/2020-12/schema",
     "$dynamicAnchor": "meta", "title": "Core and Validation specifications meta-schema",
     "allOf": [{"$ref": "meta/core"}, {"$ref": "meta/applicator"}, {"$ref": "meta/unevaluated"}, {"$ref": "meta/validation"},
               {"$ref": "meta/meta-data"}, {"$ref": "meta/format-annotation"}, {"$ref": "meta/content"}],
     "type": ["object", "boolean"],
     "properties": {
      "definitions": {"type": "object", "additionalProperties": {"$dynamicRef": "#meta"}, "deprecated": true, "default": {}},
      "dependencies": {"type": "object", "additionalProperties": {"anyOf": [{"$dynamicRef": "#meta"}, {"$ref": "meta/validation#/$defs/stringArray"}]},
                       "deprecated": true, "default": {}},
      "$recursiveAnchor": {"$ref": "meta/core#/$defs/anchorString", "deprecated": true},
      "$recursiveRef": {"$ref": "meta/core#/$defs/uriReferenceString", "deprecated": true}
     }}
    """##

    private static let draft2020Core = ##"""
    {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://json-schema.org/draft/2020-12/meta/core",
     "$dynamicAnchor": "meta", "title": "Core vocabulary meta-schema", "type": ["object", "boolean"],
     "properties": {
      "$id": {"$ref": "#/$defs/uriReferenceString", "pattern": "^[^#]*#?$"},
      "$schema": {"$ref": "#/$defs/uriString"},
      "$ref": {"$ref": "#/$defs/uriReferenceString"},
      "$anchor": {"$ref": "#/$defs/anchorString"},
      "$dynamicRef": {"$ref": "#/$defs/uriReferenceString"},
      "$dynamicAnchor": {"$ref": "#/$defs/anchorString"},
      "$vocabulary": {"type": "object", "propertyNames": {"$ref": "#/$defs/uriString"}, "additionalProperties": {"type": "boolean"}},
      "$comment": {"type": "string"},
      "$defs": {"type": "object", "additionalProperties": {"$dynamicRef": "#meta"}}
     },
     "$defs": {
      "anchorString": {"type": "string", "pattern": "^[A-Za-z_][-A-Za-z0-9._]*$"},
      "uriString": {"type": "string", "format": "uri"},
      "uriReferenceString": {"type": "string", "format": "uri-reference"}
     }}
    """##

    private static let draft2020Applicator = ##"""
    {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://json-schema.org/draft/2020-12/meta/applicator",
     "$dynamicAnchor": "meta", "title": "Applicator vocabulary meta-schema", "type": ["object", "boolean"],
     "properties": {
      "prefixItems": {"$ref": "#/$defs/schemaArray"},
      "items": {"$dynamicRef": "#meta"},
      "contains": {"$dynamicRef": "#meta"},
      "additionalProperties": {"$dynamicRef": "#meta"},
      "properties": {"type": "object", "additionalProperties": {"$dynamicRef": "#meta"}, "default": {}},
      "patternProperties": {"type": "object", "additionalProperties": {"$dynamicRef": "#meta"}, "propertyNames": {"format": "regex"}, "default": {}},
      "dependentSchemas": {"type": "object", "additionalProperties": {"$dynamicRef": "#meta"}, "default": {}},
      "propertyNames": {"$dynamicRef": "#meta"},
      "if": {"$dynamicRef": "#meta"},
      "then": {"$dynamicRef": "#meta"},
      "else": {"$dynamicRef": "#meta"},
      "allOf": {"$ref": "#/$defs/schemaArray"},
      "anyOf": {"$ref": "#/$defs/schemaArray"},
      "oneOf": {"$ref": "#/$defs/schemaArray"},
      "not": {"$dynamicRef": "#meta"}
     },
     "$defs": {"schemaArray": {"type": "array", "minItems": 1, "items": {"$dynamicRef": "#meta"}}}}
    """##

    private static let draft2020Unevaluated = ##"""
    {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://json-schema.org/draft/2020-12/meta/unevaluated",
     "$dynamicAnchor": "meta", "title": "Unevaluated applicator vocabulary meta-schema", "type": ["object", "boolean"],
     "properties": {"unevaluatedItems": {"$dynamicRef": "#meta"}, "unevaluatedProperties": {"$dynamicRef": "#meta"}}}
    """##

    private static let draft2020Validation = ##"""
    {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://json-schema.org/draft/2020-12/meta/validation",
     "$dynamicAnchor": "meta", "title": "Validation vocabulary meta-schema", "type": ["object", "boolean"],
     "properties": {
      "type": {"anyOf": [{"$ref": "#/$defs/simpleTypes"},
                         {"type": "array", "items": {"$ref": "#/$defs/simpleTypes"}, "minItems": 1, "uniqueItems": true}]},
      "const": true,
      "enum": {"type": "array", "items": true},
      "multipleOf": {"type": "number", "exclusiveMinimum": 0},
      "maximum": {"type": "number"},
      "exclusiveMaximum": {"type": "number"},
      "minimum": {"type": "number"},
      "exclusiveMinimum": {"type": "number"},
      "maxLength": {"$ref": "#/$defs/nonNegativeInteger"},
      "minLength": {"$ref": "#/$defs/nonNegativeIntegerDefault0"},
      "pattern": {"type": "string", "format": "regex"},
      "maxItems": {"$ref": "#/$defs/nonNegativeInteger"},
      "minItems": {"$ref": "#/$defs/nonNegativeIntegerDefault0"},
      "uniqueItems": {"type": "boolean", "default": false},
      "maxContains": {"$ref": "#/$defs/nonNegativeInteger"},
      "minContains": {"$ref": "#/$defs/nonNegativeInteger", "default": 1},
      "maxProperties": {"$ref": "#/$defs/nonNegativeInteger"},
      "minProperties": {"$ref": "#/$defs/nonNegativeIntegerDefault0"},
      "required": {"$ref": "#/$defs/stringArray"},
      "dependentRequired": {"type": "object", "additionalProperties": {"$ref": "#/$defs/stringArray"}}
     },
     "$defs": {
      "nonNegativeInteger": {"type": "integer", "minimum": 0},
      "nonNegativeIntegerDefault0": {"$ref": "#/$defs/nonNegativeInteger", "default": 0},
      "simpleTypes": {"enum": ["array", "boolean", "integer", "null", "number", "object", "string"]},
      "stringArray": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "default": []}
     }}
    """##

    private static let draft2020MetaData = ##"""
    {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://json-schema.org/draft/2020-12/meta/meta-data",
     "$dynamicAnchor": "meta", "title": "Meta-data vocabulary meta-schema", "type": ["object", "boolean"],
     "properties": {
      "title": {"type": "string"},
      "description": {"type": "string"},
      "default": true,
      "deprecated": {"type": "boolean", "default": false},
      "readOnly": {"type": "boolean", "default": false},
      "writeOnly": {"type": "boolean", "default": false},
      "examples": {"type": "array", "items": true}
     }}
    """##

    private static let draft2020FormatAnnotation = ##"""
    {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://json-schema.org/draft/2020-12/meta/format-annotation",
     "$dynamicAnchor": "meta", "title": "Format vocabulary meta-schema for annotation results", "type": ["object", "boolean"],
     "properties": {"format": {"type": "string"}}}
    """##

    private static let draft2020Content = ##"""
    {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://json-schema.org/draft/2020-12/meta/content",
     "$dynamicAnchor": "meta", "title": "Content vocabulary meta-schema", "type": ["object", "boolean"],
     "properties": {
      "contentEncoding": {"type": "string"},
      "contentMediaType": {"type": "string"},
      "contentSchema": {"$dynamicRef": "#meta"}
     }}
    """##
}
