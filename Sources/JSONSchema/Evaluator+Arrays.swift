import DiscfgJSON

extension Evaluator {
    /// `prefixItems`, `items`, `additionalItems`, `contains`, `minContains`, `maxContains`,
    /// `minItems`, `maxItems`, `uniqueItems`, `unevaluatedItems`.
    mutating func applyArray(_ node: SchemaNode, _ keywords: ArrayKeywords, _ items: [JSONValue], _ annotations: inout Annotations) -> Bool {
        var valid = true
        var prefix = 0
        if let tuple = keywords.tuple {
            for (i, edge) in tuple.edges.enumerated() where i < items.count {
                if !apply(edge, items[i], at: .index(i)) { valid = false }
            }
            prefix = min(tuple.edges.count, items.count)
        }
        if let rest = keywords.rest {
            let start = keywords.tuple?.edges.count ?? 0
            if start < items.count {
                if rest.isFalse {
                    valid = false
                    report(node, steps[rest.edge.step].keyword, "must have at most \(start) item\(start == 1 ? "" : "s")")
                } else {
                    for i in start..<items.count where !apply(rest.edge, items[i], at: .index(i)) { valid = false }
                }
            }
        }
        if let contains = keywords.contains {
            var matched: [Int] = []
            var count = 0
            for (i, item) in items.enumerated() where passes(contains, item, at: .index(i)) {
                count += 1
                if tracksAnnotations { matched.append(i) }
            }
            let minimum = keywords.minContains
            if count < minimum {
                valid = false
                report(node, keywords.reportsMinContains ? "minContains" : "contains",
                       "must contain at least \(minimum) item\(minimum == 1 ? "" : "s") matching the contains schema (has \(count))")
            }
            if let maximum = keywords.maxContains, count > maximum {
                valid = false
                report(node, "maxContains", "must contain at most \(maximum) item\(maximum == 1 ? "" : "s") matching the contains schema (has \(count))")
            }
            if tracksAnnotations { annotations.itemIndices.formUnion(matched) }
        }
        if let minimum = keywords.minItems, items.count < minimum {
            valid = false
            report(node, "minItems", "must have at least \(minimum) item\(minimum == 1 ? "" : "s")")
        }
        if let maximum = keywords.maxItems, items.count > maximum {
            valid = false
            report(node, "maxItems", "must have at most \(maximum) item\(maximum == 1 ? "" : "s")")
        }
        if keywords.uniqueItems {
            // Hashing keeps this linear; equality is JSON equality (1 == 1.0).
            var seen: [JSONValue: Int] = [:]
            for (i, item) in items.enumerated() {
                if let first = seen.updateValue(i, forKey: item) {
                    valid = false
                    report(node, "uniqueItems", "items \(first) and \(i) are equal; items must be unique")
                    break
                }
            }
        }
        if tracksAnnotations {
            annotations.itemsPrefix = max(annotations.itemsPrefix, prefix)
            if keywords.rest != nil { annotations.allItems = true }
            if let unevaluated = keywords.unevaluatedItems, !annotations.allItems {
                for i in annotations.itemsPrefix..<max(annotations.itemsPrefix, items.count) where !annotations.itemIndices.contains(i) {
                    if unevaluated.isFalse {
                        valid = false
                        report(node, "unevaluatedItems", "item \(i) is not allowed", child: .index(i))
                    } else if !apply(unevaluated.edge, items[i], at: .index(i)) {
                        valid = false
                    }
                }
                annotations.allItems = true
            }
        }
        return valid
    }
}
