import DiscfgJSON

/// Replaces `{"$ref": "name"}` in targeting by the rule `$evaluators.name`, resolving
/// references inside evaluators too, and refuses cycles and unknown names.
struct ReferenceResolver {
    let evaluators: JSONObject
    private var resolved: [String: JSONValue] = [:]
    private var inProgress: [String] = []

    init(evaluators: JSONObject) {
        self.evaluators = evaluators
    }

    mutating func resolve(_ value: JSONValue, at path: [String]) throws(FlagSetError) -> JSONValue {
        guard path.count < LogicRun.maxDepth else { throw FlagSetError(path, "targeting nests deeper than \(LogicRun.maxDepth) levels") }
        switch value {
        case .array(let items):
            var out: [JSONValue] = []
            out.reserveCapacity(items.count)
            for (index, item) in items.enumerated() { out.append(try resolve(item, at: path + [String(index)])) }
            return .array(out)
        case .object(let object):
            if object.count == 1, case .string(let name)? = object["$ref"] {
                return try evaluator(name, at: path)
            }
            var out = JSONObject()
            for (key, member) in object { out[key] = try resolve(member, at: path + [key]) }
            return .object(out)
        default:
            return value
        }
    }

    private mutating func evaluator(_ name: String, at path: [String]) throws(FlagSetError) -> JSONValue {
        if let done = resolved[name] { return done }
        guard let rule = evaluators[name] else {
            throw FlagSetError(path + ["$ref"], "$ref names \"\(name)\", which $evaluators does not define")
        }
        if inProgress.contains(name) {
            throw FlagSetError(["$evaluators", name], "$evaluators refer to each other in a cycle: \((inProgress + [name]).joined(separator: " → "))")
        }
        inProgress.append(name)
        defer { inProgress.removeLast() }
        let value = try resolve(rule, at: ["$evaluators", name])
        resolved[name] = value
        return value
    }
}
