/// What a valid subschema evaluated, for `unevaluatedProperties` and `unevaluatedItems`.
struct Annotations {
    var properties: Set<String> = []
    var allProperties = false
    var itemsPrefix = 0
    var allItems = false
    var itemIndices: Set<Int> = []

    mutating func merge(_ other: Annotations) {
        if other.allProperties { allProperties = true } else if !allProperties { properties.formUnion(other.properties) }
        if other.allItems { allItems = true }
        itemsPrefix = max(itemsPrefix, other.itemsPrefix)
        itemIndices.formUnion(other.itemIndices)
    }
}

/// One validation in progress: the paths walked, the dynamic scope, the depth and the regex
/// budget. Not shared between validations.
final class Evaluator {
    let validator: JSONSchemaValidator
    let index: SchemaIndex
    let tracksAnnotations: Bool
    /// Reported errors; `whyBranchesFail` swaps them out while it re-runs branches.
    private(set) var errors: [ValidationError] = []
    /// Unescaped tokens; they become JSON pointers only when an error is reported.
    var instancePath: [String] = []
    var keywordPath: [String] = []
    private var dynamicScope: [String] = []
    private var depth = 0
    private var evaluations = 0
    /// Set once the evaluation budget ran out; every evaluation after that fails at once.
    private(set) var exhausted = false
    /// Above zero while evaluating a subschema only for its verdict (`not`, `anyOf` branches…).
    var muted = 0
    var budget: RegexBudget
    /// `base reference` to the resolved URI and its target (nil when unresolvable).
    private var refCache: [String: (uri: String, target: LocatedSchema?)] = [:]
    /// Read when evaluation first goes deep: reading a main thread's bounds parses /proc/self/maps.
    private lazy var stack = StackGuard()

    init(validator: JSONSchemaValidator) {
        self.validator = validator
        index = validator.index
        tracksAnnotations = validator.index.usesUnevaluated
        budget = RegexBudget(steps: validator.options.regexSteps)
    }

    /// Records a violation of `keyword` in `schema` at the current instance location (plus `child`).
    func report(_ schema: LocatedSchema, _ keyword: String, _ message: String, child: String? = nil) {
        guard muted == 0, errors.count < validator.options.maxErrors else { return }
        var instance = Self.pointer(instancePath)
        if let child { instance += "/" + SchemaIndex.escape(child) }
        let keywordLocation = Self.pointer(keywordPath) + "/" + keyword
        let schemaLocation = "\(schema.base)#\(schema.pointer)/\(keyword)"
        errors.append(ValidationError(instanceLocation: instance, keyword: keyword, keywordLocation: keywordLocation, schemaLocation: schemaLocation, message: message))
    }

    static func pointer(_ tokens: [String]) -> String {
        tokens.map { "/" + SchemaIndex.escape($0) }.joined()
    }

    /// The subschema at `schema`'s pointer plus `tokens`, starting a new resource if it has its own `$id`.
    func subschema(_ schema: LocatedSchema, _ value: JSONValue, _ tokens: String...) -> LocatedSchema {
        var pointer = schema.pointer
        for token in tokens { pointer += "/" + SchemaIndex.escape(token) }
        if case .object(let object) = value, object["$id"] != nil, let base = index.embeddedBases["\(schema.base)#\(pointer)"] {
            return LocatedSchema(value: value, base: base, pointer: "", draft: index.resources[base]?.draft ?? schema.draft)
        }
        return LocatedSchema(value: value, base: schema.base, pointer: pointer, draft: schema.draft)
    }

    /// Evaluates `schema` (reached through `keyword` tokens) against `instance` (reached through `instanceToken`).
    func apply(_ schema: LocatedSchema, _ instance: JSONValue, keyword: [String], instanceToken: String? = nil) -> Annotations? {
        keywordPath.append(contentsOf: keyword)
        if let instanceToken { instancePath.append(instanceToken) }
        defer {
            keywordPath.removeLast(keyword.count)
            if instanceToken != nil { instancePath.removeLast() }
        }
        return evaluate(schema, instance)
    }

    /// Whether `schema` accepts `instance`, reporting nothing.
    func passes(_ schema: LocatedSchema, _ instance: JSONValue, keyword: [String], instanceToken: String? = nil) -> Annotations? {
        muted += 1
        defer { muted -= 1 }
        return apply(schema, instance, keyword: keyword, instanceToken: instanceToken)
    }

    /// Evaluates one schema; nil when the instance is invalid, else what it evaluated.
    func evaluate(_ schema: LocatedSchema, _ instance: JSONValue) -> Annotations? {
        let object: JSONObject
        switch schema.value {
        case .bool(true): return Annotations()
        case .bool(false):
            guard muted == 0, errors.count < validator.options.maxErrors else { return nil }
            let instance = Self.pointer(instancePath)
            errors.append(ValidationError(
                instanceLocation: instance, keyword: "false", keywordLocation: Self.pointer(keywordPath),
                schemaLocation: "\(schema.base)#\(schema.pointer)", message: "no value is allowed here"))
            return nil
        case .object(let o): object = o
        default: return Annotations()
        }
        evaluations += 1
        if evaluations > validator.options.maxEvaluations {
            exhausted = true
            return nil
        }
        depth += 1
        defer { depth -= 1 }
        if depth > validator.options.maxDepth {
            report(schema, "$ref", "schema evaluation nests deeper than \(validator.options.maxDepth) levels (a reference cycle, or an instance nested too deep)")
            return nil
        }
        if depth > 32, !stack.hasRoom {
            report(schema, "$ref", "schema evaluation nests deeper than this thread's stack allows (\(depth) levels)")
            return nil
        }
        // The dynamic scope holds every resource evaluation passes through, entered at its root or not.
        let entersResource = dynamicScope.last != schema.base
        if entersResource { dynamicScope.append(schema.base) }
        defer { if entersResource { dynamicScope.removeLast() } }

        var annotations = Annotations()
        var valid = true
        var groups = KeywordGroups(object)
        if !validator.assertsValidation { groups.subtract([.any, .number]) }
        if groups.contains(.references) {
            if case .string(let reference)? = object["$ref"] {
                if let result = followReference(schema, reference, keyword: "$ref", instance) {
                    annotations.merge(result)
                } else {
                    valid = false
                }
                // Draft 7: a $ref makes every sibling keyword ignored.
                if schema.draft == .draft7 { return valid ? annotations : nil }
            }
            if schema.draft == .draft2020_12, case .string(let reference)? = object["$dynamicRef"] {
                if let result = followReference(schema, reference, keyword: "$dynamicRef", instance) {
                    annotations.merge(result)
                } else {
                    valid = false
                }
            }
        }
        // Where no error is reported (inside `not`, `anyOf`, `contains`…), the first failure decides.
        if !valid, muted > 0 { return nil }
        if groups.contains(.inPlace) { valid = applyInPlace(schema, object, instance, &annotations) && valid }
        if !valid, muted > 0 { return nil }
        if groups.contains(.any) { valid = applyAssertions(schema, object, instance) && valid }
        if !valid, muted > 0 { return nil }
        switch instance {
        case .number(let number):
            if groups.contains(.number) { valid = applyNumber(schema, object, number) && valid }
        case .string(let string):
            if groups.contains(.string) { valid = applyString(schema, object, string) && valid }
        case .object(let members):
            if groups.contains(.object) { valid = applyObject(schema, object, members, &annotations) && valid }
        case .array(let items):
            if groups.contains(.array) { valid = applyArray(schema, object, items, &annotations) && valid }
        default: break
        }
        return valid ? annotations : nil
    }

    private func followReference(_ schema: LocatedSchema, _ reference: String, keyword: String, _ instance: JSONValue) -> Annotations? {
        let cacheKey = "\(schema.base) \(reference)"
        let uri: String
        var target: LocatedSchema?
        if let cached = refCache[cacheKey] {
            (uri, target) = cached
        } else {
            uri = URIReference.resolve(reference, against: schema.base)
            target = index.resolve(uri)
            refCache[cacheKey] = (uri, target)
        }
        guard var target else {
            report(schema, keyword, "reference '\(uri)' is not in the schema or its registry (remote schemas are never fetched)")
            return nil
        }
        if keyword == "$dynamicRef", index.dynamicAnchors.contains(uri), let hash = uri.firstIndex(of: "#") {
            let name = uri[uri.index(after: hash)...]
            for base in dynamicScope where index.dynamicAnchors.contains("\(base)#\(name)") {
                if let dynamic = index.anchors["\(base)#\(name)"] { target = dynamic }
                break
            }
        }
        return apply(target, instance, keyword: [keyword])
    }

    /// `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas` and draft 7 `dependencies`.
    private func applyInPlace(_ schema: LocatedSchema, _ object: JSONObject, _ instance: JSONValue, _ annotations: inout Annotations) -> Bool {
        var valid = applyCombinators(schema, object, instance, &annotations)
        valid = applyConditional(schema, object, instance, &annotations) && valid
        if case .object(let members) = instance {
            valid = applyDependents(schema, object, instance, members, &annotations) && valid
        }
        return valid
    }

    /// `allOf`, `anyOf`, `oneOf`.
    private func applyCombinators(_ schema: LocatedSchema, _ object: JSONObject, _ instance: JSONValue, _ annotations: inout Annotations) -> Bool {
        var valid = true
        if case .array(let branches)? = object["allOf"] {
            for (i, branch) in branches.enumerated() {
                if let result = apply(subschema(schema, branch, "allOf", String(i)), instance, keyword: ["allOf", String(i)]) {
                    annotations.merge(result)
                } else {
                    valid = false
                }
            }
        }
        if case .array(let branches)? = object["anyOf"] {
            var matched = false
            for (i, branch) in branches.enumerated() {
                if let result = passes(subschema(schema, branch, "anyOf", String(i)), instance, keyword: ["anyOf", String(i)]) {
                    matched = true
                    annotations.merge(result)
                    if !tracksAnnotations { break }
                }
            }
            if !matched {
                valid = false
                report(schema, "anyOf", "must match at least one of the \(branches.count) schemas in anyOf" + whyBranchesFail(schema, branches, "anyOf", instance))
            }
        }
        if case .array(let branches)? = object["oneOf"] {
            var matches: [Int] = []
            var matchedAnnotations = Annotations()
            for (i, branch) in branches.enumerated() {
                if let result = passes(subschema(schema, branch, "oneOf", String(i)), instance, keyword: ["oneOf", String(i)]) {
                    matches.append(i)
                    matchedAnnotations = result
                    if matches.count > 1 { break }
                }
            }
            if matches.count == 1 {
                annotations.merge(matchedAnnotations)
            } else {
                valid = false
                report(schema, "oneOf", matches.isEmpty
                    ? "must match exactly one of the \(branches.count) schemas in oneOf, but matches none" + whyBranchesFail(schema, branches, "oneOf", instance)
                    : "must match exactly one of the schemas in oneOf, but matches \(matches[0]) and \(matches[1])")
            }
        }
        return valid
    }

    /// `: [0] must be string, not integer; [1] must be null, not integer` — the first error of
    /// each failing branch (at most 5), found by evaluating them again; empty when nothing is reported.
    private func whyBranchesFail(_ schema: LocatedSchema, _ branches: [JSONValue], _ keyword: String, _ instance: JSONValue) -> String {
        guard muted == 0, errors.count < validator.options.maxErrors else { return "" }
        let kept = errors
        var reasons: [String] = []
        for (i, branch) in branches.prefix(5).enumerated() {
            errors = []
            _ = apply(subschema(schema, branch, keyword, String(i)), instance, keyword: [keyword, String(i)])
            if let first = errors.first {
                let location = first.instanceLocation == Self.pointer(instancePath) ? "" : " at \(first.instanceLocation)"
                // Nested anyOf/oneOf explain themselves too; cut so the sentence stays readable.
                let message = first.message.count > 160 ? first.message.prefix(157) + "…" : first.message
                reasons.append("[\(i)]\(location) \(message)")
            }
        }
        errors = kept
        return reasons.isEmpty ? "" : ": " + reasons.joined(separator: "; ") + (branches.count > 5 ? "; …" : "")
    }

    /// `not`, `if`/`then`/`else`.
    private func applyConditional(_ schema: LocatedSchema, _ object: JSONObject, _ instance: JSONValue, _ annotations: inout Annotations) -> Bool {
        var valid = true
        if let negated = object["not"] {
            if passes(subschema(schema, negated, "not"), instance, keyword: ["not"]) != nil {
                valid = false
                report(schema, "not", "must not match the schema in not")
            }
        }
        if let condition = object["if"] {
            if let result = passes(subschema(schema, condition, "if"), instance, keyword: ["if"]) {
                annotations.merge(result)
                if let then = object["then"] {
                    if let result = apply(subschema(schema, then, "then"), instance, keyword: ["then"]) { annotations.merge(result) } else { valid = false }
                }
            } else if let otherwise = object["else"] {
                if let result = apply(subschema(schema, otherwise, "else"), instance, keyword: ["else"]) { annotations.merge(result) } else { valid = false }
            }
        }
        return valid
    }

    /// `dependentSchemas`, and `dependencies` (draft 7, and draft 2020-12 for compatibility).
    private func applyDependents(_ schema: LocatedSchema, _ object: JSONObject, _ instance: JSONValue, _ members: JSONObject, _ annotations: inout Annotations) -> Bool {
        var valid = true
        // Draft 2020-12 still reads draft 7's `dependencies`, as the specification suggests for compatibility.
        for dependentKeyword in schema.draft == .draft7 ? ["dependencies"] : ["dependentSchemas", "dependencies"] {
            guard case .object(let dependents)? = object[dependentKeyword] else { continue }
            for (name, dependent) in dependents where members.contains(name) {
                if case .array(let required) = dependent {
                    // Draft 7 `dependencies` with an array is `dependentRequired`.
                    for case .string(let other) in required where !members.contains(other) {
                        valid = false
                        report(schema, dependentKeyword, "\"\(other)\" is required when \"\(name)\" is present")
                    }
                    continue
                }
                if let result = apply(subschema(schema, dependent, dependentKeyword, name), instance, keyword: [dependentKeyword, name]) {
                    annotations.merge(result)
                } else {
                    valid = false
                }
            }
        }
        return valid
    }
}
