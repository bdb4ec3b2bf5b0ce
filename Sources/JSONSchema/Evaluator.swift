import DiscfgJSON

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

/// One validation in progress over a ``CompiledSchema``: the paths walked, the dynamic scope, the
/// depth and the budgets. Not shared between validations.
///
/// The paths are stacks of steps (a member name, an index, a keyword); they become JSON pointers
/// only when an error is reported, so a valid instance costs no string building.
struct Evaluator {
    let nodes: [SchemaNode]
    let steps: [KeywordStep]
    /// Annotations are collected only when some schema uses `unevaluatedProperties`/`unevaluatedItems`;
    /// otherwise every evaluation shares its caller's (empty) annotations.
    let tracksAnnotations: Bool
    let maxErrors: Int
    private let maxEvaluations: Int
    private let maxDepth: Int
    private let usesDynamicScope: Bool
    /// Reported errors; `whyBranchesFail` swaps them out while it re-runs branches.
    var errors: [ValidationError] = []
    var instancePath: [InstanceStep] = []
    /// Numbers of ``KeywordStep``s.
    var keywordPath: [Int] = []
    /// Resource numbers evaluation passes through, outermost first (kept only for `$dynamicRef`).
    private var dynamicScope: [Int] = []
    private var depth = 0
    var evaluations = 0
    /// Set once the evaluation budget ran out; every evaluation after that fails at once.
    var exhausted = false
    /// Above zero while evaluating a subschema only for its verdict (`not`, `anyOf` branches…).
    var muted = 0
    var budget: RegexBudget
    /// Read when evaluation first goes deep: reading a main thread's bounds parses /proc/self/maps.
    private lazy var stack = StackGuard()

    init(validator: JSONSchemaValidator) {
        nodes = validator.compiled.nodes
        steps = validator.compiled.steps
        tracksAnnotations = validator.tracksAnnotations
        maxErrors = validator.options.maxErrors
        maxEvaluations = validator.options.maxEvaluations
        maxDepth = validator.options.maxDepth
        usesDynamicScope = validator.compiled.usesDynamicScope
        budget = RegexBudget(steps: validator.options.regexSteps)
    }

    /// Records a violation of `keyword` in `node` at the current instance location (plus `child`).
    mutating func report(_ node: SchemaNode, _ keyword: String, _ message: String, child: InstanceStep? = nil) {
        guard muted == 0, errors.count < maxErrors else { return }
        var instance = instanceLocation
        if let child { instance += "/" + Self.token(child) }
        errors.append(ValidationError(
            instanceLocation: instance, keyword: keyword, keywordLocation: keywordLocation + "/" + keyword,
            schemaLocation: "\(node.base)#\(node.pointer)/\(keyword)", message: message))
    }

    /// The JSON pointer of the instance being evaluated.
    var instanceLocation: String {
        instancePath.map { "/" + Self.token($0) }.joined()
    }

    /// The JSON pointer of the keywords followed to the schema being evaluated.
    var keywordLocation: String {
        keywordPath.map { step in
            switch steps[step] {
            case .keyword(let keyword): "/" + keyword
            case .member(let keyword, let name): "/" + keyword + "/" + SchemaIndex.escape(name)
            case .item(let keyword, let i): "/" + keyword + "/" + String(i)
            }
        }.joined()
    }

    private static func token(_ step: InstanceStep) -> String {
        switch step {
        case .name(let name): SchemaIndex.escape(name)
        case .index(let i): String(i)
        }
    }

    /// Evaluates the subschema `edge` leads to against the same instance.
    mutating func apply(_ edge: SchemaEdge, _ instance: JSONValue, _ annotations: inout Annotations) -> Bool {
        keywordPath.append(edge.step)
        defer { keywordPath.removeLast() }
        return evaluate(edge.node, instance, &annotations)
    }

    /// Evaluates the subschema `edge` leads to against a member or item of the instance.
    mutating func apply(_ edge: SchemaEdge, _ value: JSONValue, at step: InstanceStep) -> Bool {
        keywordPath.append(edge.step)
        instancePath.append(step)
        defer {
            keywordPath.removeLast()
            instancePath.removeLast()
        }
        // What a child evaluated does not concern its parent.
        var annotations = Annotations()
        return evaluate(edge.node, value, &annotations)
    }

    /// `apply`, adding what the subschema evaluated to `annotations` when it holds.
    mutating func applyMerging(_ edge: SchemaEdge, _ instance: JSONValue, into annotations: inout Annotations) -> Bool {
        guard tracksAnnotations else { return apply(edge, instance, &annotations) }
        var own = Annotations()
        guard apply(edge, instance, &own) else { return false }
        annotations.merge(own)
        return true
    }

    /// Whether the subschema accepts the instance, reporting nothing.
    mutating func passes(_ edge: SchemaEdge, _ instance: JSONValue, _ annotations: inout Annotations) -> Bool {
        muted += 1
        defer { muted -= 1 }
        return apply(edge, instance, &annotations)
    }

    /// Whether the subschema accepts a member or item of the instance, reporting nothing.
    mutating func passes(_ edge: SchemaEdge, _ value: JSONValue, at step: InstanceStep) -> Bool {
        muted += 1
        defer { muted -= 1 }
        return apply(edge, value, at: step)
    }

    /// Evaluates one node; false when the instance is invalid. `annotations` receives what it
    /// evaluated (when annotations are tracked; the caller discards them when it fails).
    mutating func evaluate(_ number: Int, _ instance: JSONValue, _ annotations: inout Annotations) -> Bool {
        let node = nodes[number]
        switch node.kind {
        case .keywords: break
        case .alwaysValid, .ignored: return true
        case .neverValid:
            guard muted == 0, errors.count < maxErrors else { return false }
            errors.append(ValidationError(
                instanceLocation: instanceLocation, keyword: "false", keywordLocation: keywordLocation,
                schemaLocation: "\(node.base)#\(node.pointer)", message: "no value is allowed here"))
            return false
        }
        evaluations += 1
        if evaluations > maxEvaluations {
            exhausted = true
            return false
        }
        depth += 1
        defer { depth -= 1 }
        if depth > maxDepth {
            report(node, "$ref", "schema evaluation nests deeper than \(maxDepth) levels (a reference cycle, or an instance nested too deep)")
            return false
        }
        if depth > 32, !stack.hasRoom {
            report(node, "$ref", "schema evaluation nests deeper than this thread's stack allows (\(depth) levels)")
            return false
        }
        // The dynamic scope holds every resource evaluation passes through, entered at its root or not.
        let entersResource = usesDynamicScope && dynamicScope.last != node.resource
        if entersResource { dynamicScope.append(node.resource) }
        defer { if entersResource { dynamicScope.removeLast() } }

        var valid = true
        if let references = node.references {
            if let ref = references.ref {
                valid = follow(node, ref, instance, &annotations)
                if references.refHidesSiblings { return valid }
            }
            if let dynamicRef = references.dynamicRef {
                valid = follow(node, dynamicRef, instance, &annotations) && valid
            }
        }
        // Where no error is reported (inside `not`, `anyOf`, `contains`…), the first failure decides.
        if !valid, muted > 0 { return false }
        if let inPlace = node.inPlace { valid = applyInPlace(node, inPlace, instance, &annotations) && valid }
        if !valid, muted > 0 { return false }
        if let assertions = node.assertions { valid = applyAssertions(node, assertions, instance) && valid }
        if !valid, muted > 0 { return false }
        switch instance {
        case .number(let number):
            if let keywords = node.numbers { valid = applyNumber(node, keywords, number) && valid }
        case .string(let string):
            if let keywords = node.strings { valid = applyString(node, keywords, string) && valid }
        case .object(let members):
            if let keywords = node.objects { valid = applyObject(node, keywords, members, &annotations) && valid }
        case .array(let items):
            if let keywords = node.arrays { valid = applyArray(node, keywords, items, &annotations) && valid }
        default: break
        }
        return valid
    }

    private mutating func follow(_ node: SchemaNode, _ reference: CompiledReference, _ instance: JSONValue, _ annotations: inout Annotations) -> Bool {
        guard var target = reference.target else {
            report(node, reference.keyword, "reference '\(reference.uri)' is not in the schema or its registry (remote schemas are never fetched)")
            return false
        }
        if !reference.dynamicTargets.isEmpty {
            for resource in dynamicScope {
                guard let anchored = reference.dynamicTargets[resource] else { continue }
                if let anchored { target = anchored }
                break
            }
        }
        return applyMerging(SchemaEdge(node: target, step: reference.step), instance, into: &annotations)
    }
}
