extension Evaluator {
    /// `prefixItems`, `items`, `additionalItems`, `contains`, `minContains`, `maxContains`,
    /// `minItems`, `maxItems`, `uniqueItems`, `unevaluatedItems`.
    func applyArray(_ schema: LocatedSchema, _ object: JSONObject, _ items: [JSONValue], _ annotations: inout Annotations) -> Bool {
        var valid = true
        let asserts = validator.assertsValidation
        var prefix = 0
        var all = false
        func each(_ child: JSONValue, keyword: [String], from start: Int) {
            guard start < items.count else { return }
            if case .bool(false) = child {
                valid = false
                report(schema, keyword[0], "must have at most \(start) item\(start == 1 ? "" : "s")")
                return
            }
            let located = subschema(schema, child, keyword[0])
            for i in start..<items.count where apply(located, items[i], keyword: keyword, instanceToken: String(i)) == nil {
                valid = false
            }
        }
        func tuple(_ list: [JSONValue], keyword: String) {
            for (i, child) in list.enumerated() where i < items.count {
                if apply(subschema(schema, child, keyword, String(i)), items[i], keyword: [keyword, String(i)], instanceToken: String(i)) == nil {
                    valid = false
                }
            }
            prefix = min(list.count, items.count)
        }
        switch schema.draft {
        case .draft7:
            if case .array(let list)? = object["items"] {
                tuple(list, keyword: "items")
                if let additional = object["additionalItems"] {
                    each(additional, keyword: ["additionalItems"], from: list.count)
                    all = true
                }
            } else if let single = object["items"] {
                each(single, keyword: ["items"], from: 0)
                all = true
            }
        case .draft2020_12:
            if case .array(let list)? = object["prefixItems"] { tuple(list, keyword: "prefixItems") }
            if let rest = object["items"] {
                each(rest, keyword: ["items"], from: prefix)
                all = true
            }
        }
        if let contains = object["contains"] {
            let located = subschema(schema, contains, "contains")
            var matched: [Int] = []
            for (i, item) in items.enumerated() where passes(located, item, keyword: ["contains"], instanceToken: String(i)) != nil {
                matched.append(i)
            }
            let minimum = schema.draft == .draft2020_12 && asserts ? (Self.count(object["minContains"]) ?? 1) : 1
            let maximum = schema.draft == .draft2020_12 && asserts ? Self.count(object["maxContains"]) : nil
            if matched.count < minimum {
                valid = false
                report(schema, minimum == 1 || object["minContains"] == nil ? "contains" : "minContains",
                       "must contain at least \(minimum) item\(minimum == 1 ? "" : "s") matching the contains schema (has \(matched.count))")
            }
            if let maximum, matched.count > maximum {
                valid = false
                report(schema, "maxContains", "must contain at most \(maximum) item\(maximum == 1 ? "" : "s") matching the contains schema (has \(matched.count))")
            }
            if tracksAnnotations { annotations.itemIndices.formUnion(matched) }
        }
        if asserts, let minimum = Self.count(object["minItems"]), items.count < minimum {
            valid = false
            report(schema, "minItems", "must have at least \(minimum) item\(minimum == 1 ? "" : "s")")
        }
        if asserts, let maximum = Self.count(object["maxItems"]), items.count > maximum {
            valid = false
            report(schema, "maxItems", "must have at most \(maximum) item\(maximum == 1 ? "" : "s")")
        }
        if asserts, case .bool(true)? = object["uniqueItems"] {
            // Hashing keeps this linear; equality is JSON equality (1 == 1.0).
            var seen: [JSONValue: Int] = [:]
            for (i, item) in items.enumerated() {
                if let first = seen.updateValue(i, forKey: item) {
                    valid = false
                    report(schema, "uniqueItems", "items \(first) and \(i) are equal; items must be unique")
                    break
                }
            }
        }
        if tracksAnnotations {
            annotations.itemsPrefix = max(annotations.itemsPrefix, prefix)
            if all { annotations.allItems = true }
            if schema.draft == .draft2020_12, let unevaluated = object["unevaluatedItems"], !annotations.allItems {
                let located = subschema(schema, unevaluated, "unevaluatedItems")
                for i in annotations.itemsPrefix..<max(annotations.itemsPrefix, items.count) where !annotations.itemIndices.contains(i) {
                    if case .bool(false) = unevaluated {
                        valid = false
                        report(schema, "unevaluatedItems", "item \(i) is not allowed", child: String(i))
                    } else if apply(located, items[i], keyword: ["unevaluatedItems"], instanceToken: String(i)) == nil {
                        valid = false
                    }
                }
                annotations.allItems = true
            }
        }
        return valid
    }
}
