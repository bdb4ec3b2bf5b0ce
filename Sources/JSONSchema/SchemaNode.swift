import DiscfgJSON

/// A subschema with its keywords read once, when the validator is built: evaluation walks these
/// nodes and never looks a keyword up by name, hashes a schema member, or builds a pointer string
/// unless it reports an error.
///
/// Keywords come in families (references, in-place applicators, assertions on any value, and one
/// family per instance type); a node holds a family only when the schema uses one of its keywords,
/// so most nodes hold one or two. Children are numbered nodes of the validator's
/// ``CompiledSchema`` (`$ref` cycles are indices, not references).
final class SchemaNode: Sendable {
    enum Kind: Sendable {
        /// Not a schema (a number, a string…): applies nothing and is not counted.
        case ignored
        /// `true`.
        case alwaysValid
        /// `false`: reports "no value is allowed here".
        case neverValid
        /// An object schema.
        case keywords
    }

    let kind: Kind
    /// The base URI of the node's resource and its JSON pointer in it (for `schemaLocation`).
    let base: String
    let pointer: String
    let draft: SchemaDraft
    /// The number of `base`, for the dynamic scope.
    let resource: Int
    let references: ReferenceKeywords?
    let inPlace: InPlaceKeywords?
    let assertions: AnyValueKeywords?
    let numbers: NumberKeywords?
    let strings: StringKeywords?
    let objects: ObjectKeywords?
    let arrays: ArrayKeywords?

    init(
        kind: Kind, base: String, pointer: String, draft: SchemaDraft, resource: Int, references: ReferenceKeywords? = nil,
        inPlace: InPlaceKeywords? = nil, assertions: AnyValueKeywords? = nil, numbers: NumberKeywords? = nil,
        strings: StringKeywords? = nil, objects: ObjectKeywords? = nil, arrays: ArrayKeywords? = nil
    ) {
        self.kind = kind
        self.base = base
        self.pointer = pointer
        self.draft = draft
        self.resource = resource
        self.references = references
        self.inPlace = inPlace
        self.assertions = assertions
        self.numbers = numbers
        self.strings = strings
        self.objects = objects
        self.arrays = arrays
    }
}

/// How evaluation went from a schema to a subschema: one step of `keywordLocation`.
enum KeywordStep: Sendable {
    /// `not`, `$ref`, `additionalProperties`, `items`…
    case keyword(String)
    /// `properties/port`, `dependentSchemas/tls`…
    case member(String, String)
    /// `allOf/0`, `prefixItems/2`…
    case item(String, Int)

    /// The keyword the step goes through.
    var keyword: String {
        switch self {
        case .keyword(let keyword), .member(let keyword, _), .item(let keyword, _): keyword
        }
    }
}

/// One step of `instanceLocation`: a member name or an array index.
enum InstanceStep {
    case name(String)
    case index(Int)
}

/// A subschema as reached from its parent: the node, and the number of the keyword path step
/// that reaches it (in ``CompiledSchema/steps``; a number, so the path is a stack of integers).
struct SchemaEdge: Sendable {
    let node: Int
    let step: Int
}

/// A subschema that may be the literal `false`, which some keywords report themselves
/// (`additionalProperties: false` names the property) rather than evaluate.
struct OptionalSubschema: Sendable {
    let edge: SchemaEdge
    let isFalse: Bool
}

/// `$ref` or `$dynamicRef`, resolved when the validator is built.
struct CompiledReference: Sendable {
    /// `$ref` or `$dynamicRef`.
    let keyword: String
    /// The absolute URI the reference resolves to.
    let uri: String
    /// The node it names; nil when it is not in the schema or its registry.
    let target: Int?
    /// The number of its keyword path step.
    let step: Int
    /// For a `$dynamicRef` to a dynamic anchor: by resource number, the node the resource's
    /// anchor of that name starts (nil where it has none). The outermost resource of the dynamic
    /// scope that declares the anchor wins.
    let dynamicTargets: [Int: Int?]
}

final class ReferenceKeywords: Sendable {
    let ref: CompiledReference?
    let dynamicRef: CompiledReference?
    /// Draft 7: a `$ref` makes every sibling keyword ignored.
    let refHidesSiblings: Bool

    init(ref: CompiledReference?, dynamicRef: CompiledReference?, refHidesSiblings: Bool) {
        self.ref = ref
        self.dynamicRef = dynamicRef
        self.refHidesSiblings = refHidesSiblings
    }
}

/// `dependentSchemas` / `dependencies` entries: a list of names, or a subschema.
enum Dependent: Sendable {
    case required([String])
    case schema(SchemaEdge)
}

/// `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas`, `dependencies`.
final class InPlaceKeywords: Sendable {
    let allOf: [SchemaEdge]?
    let anyOf: [SchemaEdge]?
    let oneOf: [SchemaEdge]?
    let not: SchemaEdge?
    let condition: SchemaEdge?
    let then: SchemaEdge?
    let otherwise: SchemaEdge?
    /// Per keyword, in the order they apply, the entries in schema order.
    let dependents: [(keyword: String, entries: [(name: String, dependent: Dependent)])]

    init(
        allOf: [SchemaEdge]?, anyOf: [SchemaEdge]?, oneOf: [SchemaEdge]?, not: SchemaEdge?, condition: SchemaEdge?, then: SchemaEdge?,
        otherwise: SchemaEdge?, dependents: [(keyword: String, entries: [(name: String, dependent: Dependent)])]
    ) {
        self.allOf = allOf
        self.anyOf = anyOf
        self.oneOf = oneOf
        self.not = not
        self.condition = condition
        self.then = then
        self.otherwise = otherwise
        self.dependents = dependents
    }
}

/// The JSON types as bits, so `type` is one mask test.
struct TypeMask: OptionSet, Sendable {
    let rawValue: UInt8

    static let null = TypeMask(rawValue: 1 << 0)
    static let boolean = TypeMask(rawValue: 1 << 1)
    static let number = TypeMask(rawValue: 1 << 2)
    static let integer = TypeMask(rawValue: 1 << 3)
    static let string = TypeMask(rawValue: 1 << 4)
    static let array = TypeMask(rawValue: 1 << 5)
    static let object = TypeMask(rawValue: 1 << 6)

    /// The bit of a type name; empty for a name that is no JSON Schema type.
    init(name: String) {
        switch name {
        case "null": self = .null
        case "boolean": self = .boolean
        case "number": self = .number
        case "integer": self = .integer
        case "string": self = .string
        case "array": self = .array
        case "object": self = .object
        default: self = []
        }
    }

    init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The types `value` has: an integral number is both `number` and `integer`.
    static func of(_ value: JSONValue) -> TypeMask {
        switch value {
        case .null: .null
        case .bool: .boolean
        case .number(let n): n.isInteger ? [.number, .integer] : .number
        case .string: .string
        case .array: .array
        case .object: .object
        }
    }
}

/// `type`, `enum`, `const`.
final class AnyValueKeywords: Sendable {
    /// `type`: the accepted types and their names as written (for the message).
    let types: (mask: TypeMask, names: [String])?
    /// `enum`; more than 16 values are also hashed, so membership is one lookup.
    let allowed: (values: [JSONValue], set: Set<JSONValue>?)?
    let constant: JSONValue?

    init(types: (mask: TypeMask, names: [String])?, allowed: (values: [JSONValue], set: Set<JSONValue>?)?, constant: JSONValue?) {
        self.types = types
        self.allowed = allowed
        self.constant = constant
    }
}

/// A numeric bound, also as an `Int` when it is an integer that fits, for the common comparison
/// of two small integers.
struct NumericBound: Sendable {
    let limit: JSONNumber
    let small: Int?

    init(_ limit: JSONNumber) {
        self.limit = limit
        small = limit.intValue
    }
}

/// `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`.
final class NumberKeywords: Sendable {
    let minimum: NumericBound?
    let maximum: NumericBound?
    let exclusiveMinimum: NumericBound?
    let exclusiveMaximum: NumericBound?
    /// Only a positive divisor applies.
    let multipleOf: JSONNumber?
    /// Whether every bound present is a small integer.
    let boundsAreSmall: Bool

    init(minimum: NumericBound?, maximum: NumericBound?, exclusiveMinimum: NumericBound?, exclusiveMaximum: NumericBound?, multipleOf: JSONNumber?) {
        self.minimum = minimum
        self.maximum = maximum
        self.exclusiveMinimum = exclusiveMinimum
        self.exclusiveMaximum = exclusiveMaximum
        self.multipleOf = multipleOf
        boundsAreSmall = [minimum, maximum, exclusiveMinimum, exclusiveMaximum].allSatisfy { $0 == nil || $0?.small != nil }
    }
}

/// `minLength`, `maxLength`, `pattern`, `format`.
final class StringKeywords: Sendable {
    let minLength: Int?
    let maxLength: Int?
    let pattern: CompiledPattern?
    /// `format` when asserted and one this validator checks.
    let format: (name: String, format: StringFormat)?

    init(minLength: Int?, maxLength: Int?, pattern: CompiledPattern?, format: (name: String, format: StringFormat)?) {
        self.minLength = minLength
        self.maxLength = maxLength
        self.pattern = pattern
        self.format = format
    }
}

/// `properties`, `patternProperties`, `additionalProperties`, `propertyNames`, `required`,
/// `dependentRequired`, `minProperties`, `maxProperties`, `unevaluatedProperties`.
final class ObjectKeywords: Sendable {
    /// `properties` in schema order.
    let properties: [(name: String, edge: SchemaEdge)]?
    /// Every name `properties` or `required` lists, so one lookup per instance member answers both.
    let names: PropertyTable
    /// For each entry of `names`: its index in `properties` (nil when only required), and whether it is required.
    let entries: [(property: Int?, isRequired: Bool)]
    /// How many distinct names `required` lists.
    let requiredCount: Int
    let patternProperties: [(pattern: CompiledPattern, edge: SchemaEdge)]?
    let additionalProperties: OptionalSubschema?
    let propertyNames: SchemaEdge?
    /// `required` as written (its strings), when asserted.
    let required: [String]?
    let dependentRequired: [(name: String, required: [String])]?
    let minProperties: Int?
    let maxProperties: Int?
    let unevaluatedProperties: OptionalSubschema?

    init(
        properties: [(name: String, edge: SchemaEdge)]?, patternProperties: [(pattern: CompiledPattern, edge: SchemaEdge)]?,
        additionalProperties: OptionalSubschema?, propertyNames: SchemaEdge?, required: [String]?,
        dependentRequired: [(name: String, required: [String])]?, minProperties: Int?, maxProperties: Int?, unevaluatedProperties: OptionalSubschema?
    ) {
        self.properties = properties
        self.patternProperties = patternProperties
        self.additionalProperties = additionalProperties
        self.propertyNames = propertyNames
        self.required = required
        self.dependentRequired = dependentRequired
        self.minProperties = minProperties
        self.maxProperties = maxProperties
        self.unevaluatedProperties = unevaluatedProperties
        var names: [String] = []
        var entries: [(property: Int?, isRequired: Bool)] = []
        var position: [ExactKey: Int] = [:]
        for (i, property) in (properties ?? []).enumerated() {
            position[ExactKey(property.name)] = names.count
            names.append(property.name)
            entries.append((i, false))
        }
        var requiredCount = 0
        for name in required ?? [] {
            if let at = position[ExactKey(name)] {
                if !entries[at].isRequired { requiredCount += 1 }
                entries[at].isRequired = true
            } else {
                position[ExactKey(name)] = names.count
                names.append(name)
                entries.append((nil, true))
                requiredCount += 1
            }
        }
        self.names = PropertyTable(names)
        self.entries = entries
        self.requiredCount = requiredCount
    }
}

/// `prefixItems`, `items`, `additionalItems`, `contains`, `minContains`, `maxContains`,
/// `minItems`, `maxItems`, `uniqueItems`, `unevaluatedItems`.
final class ArrayKeywords: Sendable {
    /// `prefixItems` (2020-12) or `items` as an array (draft 7), with the keyword's name.
    let tuple: (keyword: String, edges: [SchemaEdge])?
    /// `items` (2020-12, after the tuple), `items` as one schema or `additionalItems` (draft 7).
    let rest: OptionalSubschema?
    let contains: SchemaEdge?
    /// The least number of items `contains` must match (1 unless `minContains` says otherwise).
    let minContains: Int
    /// Whether a shortfall is reported under `minContains` rather than `contains`.
    let reportsMinContains: Bool
    let maxContains: Int?
    let minItems: Int?
    let maxItems: Int?
    let uniqueItems: Bool
    let unevaluatedItems: OptionalSubschema?

    init(
        tuple: (keyword: String, edges: [SchemaEdge])?, rest: OptionalSubschema?, contains: SchemaEdge?, minContains: Int, reportsMinContains: Bool,
        maxContains: Int?, minItems: Int?, maxItems: Int?, uniqueItems: Bool, unevaluatedItems: OptionalSubschema?
    ) {
        self.tuple = tuple
        self.rest = rest
        self.contains = contains
        self.minContains = minContains
        self.reportsMinContains = reportsMinContains
        self.maxContains = maxContains
        self.minItems = minItems
        self.maxItems = maxItems
        self.uniqueItems = uniqueItems
        self.unevaluatedItems = unevaluatedItems
    }
}
