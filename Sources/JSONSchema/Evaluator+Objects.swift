import DiscfgJSON

extension Evaluator {
    /// What one pass over an object's members with the schema's ``PropertyTable`` found.
    struct MemberScan {
        /// Members `required` lists (each counted once: member names are distinct).
        var requiredFound = 0
        /// Members `properties` does not list.
        var unlisted = 0
    }

    /// `properties`, `patternProperties`, `additionalProperties`, `propertyNames`, `required`,
    /// `dependentRequired`, `minProperties`, `maxProperties`, `unevaluatedProperties`.
    mutating func applyObject(_ node: SchemaNode, _ keywords: ObjectKeywords, _ members: JSONObject, _ annotations: inout Annotations) -> Bool {
        var evaluated: Set<String> = []
        var scan = MemberScan()
        var valid = applyProperties(node, keywords, members, &evaluated, &scan)
        valid = applyObjectAssertions(node, keywords, members, scan) && valid
        return finishObject(node, keywords, members, evaluated, &annotations) && valid
    }

    /// `properties`, `patternProperties`, `additionalProperties`, `propertyNames`; collects the
    /// names they evaluated when `unevaluatedProperties` needs them.
    private mutating func applyProperties(
        _ node: SchemaNode, _ keywords: ObjectKeywords, _ members: JSONObject, _ evaluated: inout Set<String>, _ scan: inout MemberScan
    ) -> Bool {
        var valid = true
        if keywords.properties != nil || keywords.requiredCount > 0 {
            valid = applyListedProperties(node, keywords, members, &evaluated, &scan)
        } else {
            scan.unlisted = members.count
        }
        if let patterns = keywords.patternProperties {
            for (name, value) in members {
                for (pattern, edge) in patterns {
                    switch pattern.matches(name, budget: &budget) {
                    case .some(true):
                        if tracksAnnotations { evaluated.insert(name) }
                        if !apply(edge, value, at: .name(name)) { valid = false }
                    case .some(false): break
                    case .none:
                        valid = false
                        report(node, "patternProperties", "pattern too expensive: '\(pattern.source)' ran past the matching step budget", child: .name(name))
                    }
                }
            }
        }
        if let additional = keywords.additionalProperties, scan.unlisted > 0 {
            for (name, value) in members where !keywords.listsProperty(name) {
                if let patterns = keywords.patternProperties, patterns.contains(where: { $0.pattern.matches(name, budget: &budget) != false }) { continue }
                if tracksAnnotations { evaluated.insert(name) }
                if additional.isFalse {
                    valid = false
                    report(node, "additionalProperties", "property \"\(name)\" is not allowed", child: .name(name))
                } else if !apply(additional.edge, value, at: .name(name)) {
                    valid = false
                }
            }
        }
        if let names = keywords.propertyNames {
            for (name, _) in members {
                var ignored = Annotations()
                if !passes(names, .string(name), &ignored) {
                    valid = false
                    report(node, "propertyNames", "property name \"\(name)\" does not match the propertyNames schema", child: .name(name))
                }
            }
        }
        return valid
    }

    /// `properties`, in one pass over the members in their order, which also counts the required
    /// and unlisted members. Errors are reported in the schema's order of `properties`, so when
    /// more than one property fails (and errors are being reported), the pass is undone (errors,
    /// budgets) and run again in that order.
    private mutating func applyListedProperties(
        _ node: SchemaNode, _ keywords: ObjectKeywords, _ members: JSONObject, _ evaluated: inout Set<String>, _ scan: inout MemberScan
    ) -> Bool {
        let start = (errors: errors.count, evaluations: evaluations, exhausted: exhausted, steps: budget.remaining)
        var failures = 0
        var expected = 0
        for (name, value) in members {
            guard let entry = keywords.names.entry(name, expected: expected) else {
                scan.unlisted += 1
                continue
            }
            expected = entry + 1
            let (property, isRequired) = keywords.entries[entry]
            if isRequired { scan.requiredFound += 1 }
            guard let property, let properties = keywords.properties else {
                scan.unlisted += 1
                continue
            }
            if tracksAnnotations { evaluated.insert(name) }
            if !apply(properties[property].edge, value, at: .name(name)) { failures += 1 }
        }
        // One failure reports the same errors in any order.
        guard failures > 1, muted == 0, let properties = keywords.properties else { return failures == 0 }
        errors.removeSubrange(start.errors...)
        evaluations = start.evaluations
        exhausted = start.exhausted
        budget.remaining = start.steps
        for (name, edge) in properties {
            guard let value = members[name] else { continue }
            _ = apply(edge, value, at: .name(name))
        }
        return false
    }

    /// `required`, `dependentRequired`, `minProperties`, `maxProperties`.
    private mutating func applyObjectAssertions(_ node: SchemaNode, _ keywords: ObjectKeywords, _ members: JSONObject, _ scan: MemberScan) -> Bool {
        var valid = true
        if let required = keywords.required, scan.requiredFound < keywords.requiredCount {
            for name in required where !members.contains(name) {
                valid = false
                report(node, "required", "\"\(name)\" is required")
            }
        }
        if let dependents = keywords.dependentRequired {
            for (name, required) in dependents where members.contains(name) {
                for other in required where !members.contains(other) {
                    valid = false
                    report(node, "dependentRequired", "\"\(other)\" is required when \"\(name)\" is present")
                }
            }
        }
        if let minimum = keywords.minProperties, members.count < minimum {
            valid = false
            report(node, "minProperties", "must have at least \(minimum) propert\(minimum == 1 ? "y" : "ies")")
        }
        if let maximum = keywords.maxProperties, members.count > maximum {
            valid = false
            report(node, "maxProperties", "must have at most \(maximum) propert\(maximum == 1 ? "y" : "ies")")
        }
        return valid
    }

    /// Records the evaluated properties and applies `unevaluatedProperties`.
    private mutating func finishObject(
        _ node: SchemaNode, _ keywords: ObjectKeywords, _ members: JSONObject, _ evaluated: Set<String>, _ annotations: inout Annotations
    ) -> Bool {
        guard tracksAnnotations else { return true }
        var valid = true
        annotations.properties.formUnion(evaluated)
        if let unevaluated = keywords.unevaluatedProperties, !annotations.allProperties {
            for (name, value) in members where !annotations.properties.contains(name) {
                if unevaluated.isFalse {
                    valid = false
                    report(node, "unevaluatedProperties", "property \"\(name)\" is not allowed", child: .name(name))
                } else if !apply(unevaluated.edge, value, at: .name(name)) {
                    valid = false
                }
            }
            annotations.allProperties = true
        }
        return valid
    }
}

extension ObjectKeywords {
    /// Whether `properties` lists `name`.
    func listsProperty(_ name: String) -> Bool {
        guard properties != nil, let entry = names.entry(name) else { return false }
        return entries[entry].property != nil
    }
}
