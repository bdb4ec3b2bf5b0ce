import DiscfgJSON

extension Evaluator {
    /// `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas` and draft 7 `dependencies`.
    mutating func applyInPlace(_ node: SchemaNode, _ keywords: InPlaceKeywords, _ instance: JSONValue, _ annotations: inout Annotations) -> Bool {
        var valid = applyCombinators(node, keywords, instance, &annotations)
        valid = applyConditional(node, keywords, instance, &annotations) && valid
        if !keywords.dependents.isEmpty, case .object(let members) = instance {
            valid = applyDependents(node, keywords, instance, members, &annotations) && valid
        }
        return valid
    }

    /// `allOf`, `anyOf`, `oneOf`.
    private mutating func applyCombinators(_ node: SchemaNode, _ keywords: InPlaceKeywords, _ instance: JSONValue, _ annotations: inout Annotations) -> Bool {
        var valid = true
        if let branches = keywords.allOf {
            for branch in branches where !applyMerging(branch, instance, into: &annotations) { valid = false }
        }
        if let branches = keywords.anyOf {
            var matched = false
            for branch in branches {
                var own = Annotations()
                if passes(branch, instance, &own) {
                    matched = true
                    annotations.merge(own)
                    if !tracksAnnotations { break }
                }
            }
            if !matched {
                valid = false
                report(node, "anyOf", "must match at least one of the \(branches.count) schemas in anyOf" + whyBranchesFail(branches, instance))
            }
        }
        if let branches = keywords.oneOf {
            var first: Int?
            var second: Int?
            var matchedAnnotations = Annotations()
            for (i, branch) in branches.enumerated() {
                var own = Annotations()
                if passes(branch, instance, &own) {
                    if first == nil {
                        first = i
                        matchedAnnotations = own
                    } else {
                        second = i
                        break
                    }
                }
            }
            if first != nil, second == nil {
                annotations.merge(matchedAnnotations)
            } else {
                valid = false
                report(node, "oneOf", first.map { "must match exactly one of the schemas in oneOf, but matches \($0) and \(second!)" }
                    ?? "must match exactly one of the \(branches.count) schemas in oneOf, but matches none" + whyBranchesFail(branches, instance))
            }
        }
        return valid
    }

    /// `: [0] must be string, not integer; [1] must be null, not integer` — the first error of
    /// each failing branch (at most 5), found by evaluating them again; empty when nothing is reported.
    private mutating func whyBranchesFail(_ branches: [SchemaEdge], _ instance: JSONValue) -> String {
        guard muted == 0, errors.count < maxErrors else { return "" }
        let kept = errors
        let here = instanceLocation
        var reasons: [String] = []
        for (i, branch) in branches.prefix(5).enumerated() {
            errors = []
            var ignored = Annotations()
            _ = apply(branch, instance, &ignored)
            if let first = errors.first {
                let location = first.instanceLocation == here ? "" : " at \(first.instanceLocation)"
                // Nested anyOf/oneOf explain themselves too; cut so the sentence stays readable.
                let message = first.message.count > 160 ? first.message.prefix(157) + "…" : first.message
                reasons.append("[\(i)]\(location) \(message)")
            }
        }
        errors = kept
        return reasons.isEmpty ? "" : ": " + reasons.joined(separator: "; ") + (branches.count > 5 ? "; …" : "")
    }

    /// `not`, `if`/`then`/`else`.
    private mutating func applyConditional(_ node: SchemaNode, _ keywords: InPlaceKeywords, _ instance: JSONValue, _ annotations: inout Annotations) -> Bool {
        var valid = true
        if let negated = keywords.not {
            var ignored = Annotations()
            if passes(negated, instance, &ignored) {
                valid = false
                report(node, "not", "must not match the schema in not")
            }
        }
        if let condition = keywords.condition {
            var own = Annotations()
            if passes(condition, instance, &own) {
                annotations.merge(own)
                if let then = keywords.then, !applyMerging(then, instance, into: &annotations) { valid = false }
            } else if let otherwise = keywords.otherwise, !applyMerging(otherwise, instance, into: &annotations) {
                valid = false
            }
        }
        return valid
    }

    /// `dependentSchemas`, and `dependencies` (draft 7, and draft 2020-12 for compatibility).
    private mutating func applyDependents(
        _ node: SchemaNode, _ keywords: InPlaceKeywords, _ instance: JSONValue, _ members: JSONObject, _ annotations: inout Annotations
    ) -> Bool {
        var valid = true
        for (keyword, entries) in keywords.dependents {
            for (name, dependent) in entries where members.contains(name) {
                switch dependent {
                case .required(let required):
                    for other in required where !members.contains(other) {
                        valid = false
                        report(node, keyword, "\"\(other)\" is required when \"\(name)\" is present")
                    }
                case .schema(let edge):
                    if !applyMerging(edge, instance, into: &annotations) { valid = false }
                }
            }
        }
        return valid
    }
}
