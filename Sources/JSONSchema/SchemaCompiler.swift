import DiscfgJSON

/// A schema and everything it references, compiled: numbered nodes, built once per validator.
struct CompiledSchema: Sendable {
    let nodes: [SchemaNode]
    /// The keyword path steps edges take, by number.
    let steps: [KeywordStep]
    let root: Int
    /// Whether some `$dynamicRef` can be redirected by the dynamic scope; only then is the scope kept.
    let usesDynamicScope: Bool
}

/// Turns the subschemas reachable from the root (through subschema keywords and `$ref`s) into
/// ``SchemaNode``s, reading each keyword once. It works through a list rather than recursing, so
/// neither a deep schema nor a reference cycle can exhaust the stack; each location compiles once.
struct SchemaCompiler {
    let index: SchemaIndex
    let options: JSONSchemaValidator.Options
    let assertsValidation: Bool
    private var nodes: [SchemaNode?] = []
    /// `draft base#pointer` to node number.
    private var numbers: [String: Int] = [:]
    private var pending: [(number: Int, schema: LocatedSchema)] = []
    private var resources: [String: Int] = [:]
    private var steps: [KeywordStep] = []
    /// Compiled patterns by source: schemas repeat them (one per property of a kind).
    private var patterns: [String: CompiledPattern] = [:]
    private var usesDynamicScope = false

    /// Compiles `root` and what it reaches.
    /// - Throws: ``SchemaError`` when the schema and its references reach more than twice
    ///   ``JSONSchemaValidator/Options/maxSubschemas`` subschemas.
    static func compile(_ root: LocatedSchema, index: SchemaIndex, options: JSONSchemaValidator.Options, assertsValidation: Bool) throws(SchemaError) -> CompiledSchema {
        var compiler = SchemaCompiler(index: index, options: options, assertsValidation: assertsValidation)
        let number = try compiler.number(root)
        while let (number, schema) = compiler.pending.popLast() {
            compiler.nodes[number] = try compiler.compile(schema)
        }
        return CompiledSchema(nodes: compiler.nodes.map { $0! }, steps: compiler.steps, root: number, usesDynamicScope: compiler.usesDynamicScope)
    }

    private init(index: SchemaIndex, options: JSONSchemaValidator.Options, assertsValidation: Bool) {
        self.index = index
        self.options = options
        self.assertsValidation = assertsValidation
    }

    /// The node number of a located subschema, queued for compilation the first time.
    private mutating func number(_ schema: LocatedSchema) throws(SchemaError) -> Int {
        let key = "\(schema.draft.rawValue) \(schema.base)#\(schema.pointer)"
        if let number = numbers[key] { return number }
        // The index counted the documents' subschemas; a reference into a value no keyword makes
        // a subschema (an `enum` entry, an unknown keyword) compiles what it names too.
        let limit = max(options.maxSubschemas, 1_000)
        guard nodes.count / 2 < limit else { throw SchemaError("schema and its references reach more than \(limit * 2) subschemas") }
        let number = nodes.count
        nodes.append(nil)
        numbers[key] = number
        pending.append((number, schema))
        return number
    }

    private mutating func step(_ step: KeywordStep) -> Int {
        steps.append(step)
        return steps.count - 1
    }

    mutating func pattern(_ source: String) -> CompiledPattern {
        if let compiled = patterns[source] { return compiled }
        let compiled = CompiledPattern(source, compiled: index.patterns[source])
        patterns[source] = compiled
        return compiled
    }

    private mutating func resource(_ base: String) -> Int {
        if let number = resources[base] { return number }
        resources[base] = resources.count
        return resources.count - 1
    }

    /// The edge to `value`, the subschema of `parent` that `step` names; a subschema with its own
    /// `$id` starts a new resource.
    mutating func edge(_ parent: LocatedSchema, _ value: JSONValue, _ step: KeywordStep) throws(SchemaError) -> SchemaEdge {
        var pointer = parent.pointer
        switch step {
        case .keyword(let keyword): pointer += "/" + keyword
        case .member(let keyword, let name): pointer += "/" + keyword + "/" + SchemaIndex.escape(name)
        case .item(let keyword, let i): pointer += "/" + keyword + "/" + String(i)
        }
        var located = LocatedSchema(value: value, base: parent.base, pointer: pointer, draft: parent.draft)
        if case .object(let object) = value, object["$id"] != nil, let base = index.embeddedBases["\(parent.base)#\(pointer)"] {
            located = LocatedSchema(value: value, base: base, pointer: "", draft: index.resources[base]?.draft ?? parent.draft)
        }
        return SchemaEdge(node: try number(located), step: self.step(step))
    }

    /// `edge` for a keyword whose `false` is reported by the keyword itself.
    mutating func optionalEdge(_ parent: LocatedSchema, _ value: JSONValue?, _ keyword: String) throws(SchemaError) -> OptionalSubschema? {
        guard let value else { return nil }
        let isFalse = if case .bool(false) = value { true } else { false }
        return OptionalSubschema(edge: try edge(parent, value, .keyword(keyword)), isFalse: isFalse)
    }

    private mutating func compile(_ schema: LocatedSchema) throws(SchemaError) -> SchemaNode {
        let resource = resource(schema.base)
        let object: JSONObject
        switch schema.value {
        case .bool(let valid):
            return SchemaNode(kind: valid ? .alwaysValid : .neverValid, base: schema.base, pointer: schema.pointer, draft: schema.draft, resource: resource)
        case .object(let o): object = o
        default:
            return SchemaNode(kind: .ignored, base: schema.base, pointer: schema.pointer, draft: schema.draft, resource: resource)
        }
        let references = try referenceKeywords(schema, object)
        if references?.refHidesSiblings == true {
            return SchemaNode(kind: .keywords, base: schema.base, pointer: schema.pointer, draft: schema.draft, resource: resource, references: references)
        }
        return SchemaNode(
            kind: .keywords, base: schema.base, pointer: schema.pointer, draft: schema.draft, resource: resource, references: references,
            inPlace: try inPlaceKeywords(schema, object), assertions: anyValueKeywords(object), numbers: numberKeywords(object),
            strings: stringKeywords(object), objects: try objectKeywords(schema, object), arrays: try arrayKeywords(schema, object))
    }

    private mutating func referenceKeywords(_ schema: LocatedSchema, _ object: JSONObject) throws(SchemaError) -> ReferenceKeywords? {
        var ref: CompiledReference?
        var dynamicRef: CompiledReference?
        if case .string(let reference)? = object["$ref"] { ref = try resolve(reference, keyword: "$ref", from: schema) }
        if schema.draft == .draft2020_12, case .string(let reference)? = object["$dynamicRef"] {
            dynamicRef = try resolve(reference, keyword: "$dynamicRef", from: schema)
        }
        guard ref != nil || dynamicRef != nil else { return nil }
        return ReferenceKeywords(ref: ref, dynamicRef: dynamicRef, refHidesSiblings: schema.draft == .draft7 && ref != nil)
    }

    private mutating func resolve(_ reference: String, keyword: String, from schema: LocatedSchema) throws(SchemaError) -> CompiledReference {
        let uri = URIReference.resolve(reference, against: schema.base)
        let step = step(.keyword(keyword))
        guard let located = index.resolve(uri) else { return CompiledReference(keyword: keyword, uri: uri, target: nil, step: step, dynamicTargets: [:]) }
        let target = try number(located)
        var dynamicTargets: [Int: Int?] = [:]
        if keyword == "$dynamicRef", index.dynamicAnchors.contains(uri), let hash = uri.firstIndex(of: "#") {
            let name = uri[uri.index(after: hash)...]
            for anchor in index.dynamicAnchors {
                guard let sign = anchor.firstIndex(of: "#"), anchor[anchor.index(after: sign)...] == name else { continue }
                var anchored: Int?
                if let located = index.anchors[anchor] { anchored = try number(located) }
                dynamicTargets[resource(String(anchor[..<sign]))] = anchored
            }
            usesDynamicScope = true
        }
        return CompiledReference(keyword: keyword, uri: uri, target: target, step: step, dynamicTargets: dynamicTargets)
    }

    mutating func edges(_ schema: LocatedSchema, _ value: JSONValue?, _ keyword: String) throws(SchemaError) -> [SchemaEdge]? {
        guard case .array(let branches)? = value else { return nil }
        var edges: [SchemaEdge] = []
        for (i, branch) in branches.enumerated() { edges.append(try edge(schema, branch, .item(keyword, i))) }
        return edges
    }

    private mutating func inPlaceKeywords(_ schema: LocatedSchema, _ object: JSONObject) throws(SchemaError) -> InPlaceKeywords? {
        let allOf = try edges(schema, object["allOf"], "allOf")
        let anyOf = try edges(schema, object["anyOf"], "anyOf")
        let oneOf = try edges(schema, object["oneOf"], "oneOf")
        var not: SchemaEdge?
        if let negated = object["not"] { not = try edge(schema, negated, .keyword("not")) }
        var condition: SchemaEdge?
        var then: SchemaEdge?
        var otherwise: SchemaEdge?
        if let test = object["if"] {
            condition = try edge(schema, test, .keyword("if"))
            if let value = object["then"] { then = try edge(schema, value, .keyword("then")) }
            if let value = object["else"] { otherwise = try edge(schema, value, .keyword("else")) }
        }
        var dependents: [(keyword: String, entries: [(name: String, dependent: Dependent)])] = []
        // Draft 2020-12 still reads draft 7's `dependencies`, as the specification suggests for compatibility.
        for keyword in schema.draft == .draft7 ? ["dependencies"] : ["dependentSchemas", "dependencies"] {
            guard case .object(let map)? = object[keyword] else { continue }
            var entries: [(name: String, dependent: Dependent)] = []
            for (name, value) in map {
                if case .array(let required) = value {
                    // Draft 7 `dependencies` with an array is `dependentRequired`.
                    entries.append((name, .required(Self.strings(required))))
                } else {
                    entries.append((name, .schema(try edge(schema, value, .member(keyword, name)))))
                }
            }
            dependents.append((keyword, entries))
        }
        guard allOf != nil || anyOf != nil || oneOf != nil || not != nil || condition != nil || !dependents.isEmpty else { return nil }
        return InPlaceKeywords(allOf: allOf, anyOf: anyOf, oneOf: oneOf, not: not, condition: condition, then: then, otherwise: otherwise, dependents: dependents)
    }

    private func anyValueKeywords(_ object: JSONObject) -> AnyValueKeywords? {
        guard assertsValidation else { return nil }
        var types: (mask: TypeMask, names: [String])?
        if let type = object["type"] {
            let names: [String] = switch type {
            case .string(let name): [name]
            case .array(let list): Self.strings(list)
            default: []
            }
            types = (names.reduce(into: TypeMask()) { $0.formUnion(TypeMask(name: $1)) }, names)
        }
        var allowed: (values: [JSONValue], set: Set<JSONValue>?)?
        if case .array(let values)? = object["enum"] { allowed = (values, values.count > 16 ? Set(values) : nil) }
        let constant = object["const"]
        guard types != nil || allowed != nil || constant != nil else { return nil }
        return AnyValueKeywords(types: types, allowed: allowed, constant: constant)
    }

    private func numberKeywords(_ object: JSONObject) -> NumberKeywords? {
        guard assertsValidation else { return nil }
        func bound(_ keyword: String) -> NumericBound? {
            guard case .number(let limit)? = object[keyword] else { return nil }
            return NumericBound(limit)
        }
        var multipleOf: JSONNumber?
        if case .number(let divisor)? = object["multipleOf"], !divisor.isZero, !divisor.isNegative { multipleOf = divisor }
        let keywords = NumberKeywords(
            minimum: bound("minimum"), maximum: bound("maximum"), exclusiveMinimum: bound("exclusiveMinimum"),
            exclusiveMaximum: bound("exclusiveMaximum"), multipleOf: multipleOf)
        let applies = keywords.minimum != nil || keywords.maximum != nil || keywords.exclusiveMinimum != nil || keywords.exclusiveMaximum != nil || multipleOf != nil
        return applies ? keywords : nil
    }

    private mutating func stringKeywords(_ object: JSONObject) -> StringKeywords? {
        let minLength = assertsValidation ? Self.count(object["minLength"]) : nil
        let maxLength = assertsValidation ? Self.count(object["maxLength"]) : nil
        var pattern: CompiledPattern?
        if assertsValidation, case .string(let source)? = object["pattern"] { pattern = self.pattern(source) }
        var format: (name: String, format: StringFormat)?
        if options.assertFormats, case .string(let name)? = object["format"], let known = StringFormat(rawValue: name) { format = (name, known) }
        guard minLength != nil || maxLength != nil || pattern != nil || format != nil else { return nil }
        return StringKeywords(minLength: minLength, maxLength: maxLength, pattern: pattern, format: format)
    }

    /// A non-negative integer keyword value; values too large for `Int` count as `Int.max`.
    static func count(_ value: JSONValue?) -> Int? {
        guard case .number(let n)? = value, n.isInteger, !n.isNegative else { return nil }
        return n.intValue ?? Int.max
    }

    /// The strings of a list, in order (other values are skipped).
    static func strings(_ list: [JSONValue]) -> [String] {
        list.compactMap { if case .string(let s) = $0 { s } else { nil } }
    }
}
