extension Evaluator {
    /// `type`, `enum`, `const`.
    func applyAssertions(_ schema: LocatedSchema, _ object: JSONObject, _ instance: JSONValue) -> Bool {
        var valid = true
        if let type = object["type"] {
            let names: [String]
            switch type {
            case .string(let name): names = [name]
            case .array(let list): names = list.compactMap { if case .string(let s) = $0 { s } else { nil } }
            default: names = []
            }
            if !names.contains(where: { Self.instance(instance, hasType: $0) }) {
                valid = false
                let expected = names.count == 1 ? names[0] : "one of " + names.joined(separator: ", ")
                report(schema, "type", "must be \(expected), not \(instance.typeName)")
            }
        }
        if case .array(let allowed)? = object["enum"], !(index.enumSets["\(schema.base)#\(schema.pointer)"]?.contains(instance) ?? allowed.contains(instance)) {
            valid = false
            let listed = allowed.prefix(10).map(Self.brief).joined(separator: ", ")
            report(schema, "enum", "must be one of: \(listed)\(allowed.count > 10 ? ", … (\(allowed.count) values)" : "")")
        }
        if let constant = object["const"], constant != instance {
            valid = false
            report(schema, "const", "must be \(Self.brief(constant))")
        }
        return valid
    }

    static func instance(_ instance: JSONValue, hasType name: String) -> Bool {
        switch (name, instance) {
        case ("number", .number): true
        case ("integer", .number(let n)): n.isInteger
        default: instance.typeName == name
        }
    }

    /// A value in a message: JSON, cut at 60 characters.
    static func brief(_ value: JSONValue) -> String {
        let text = (try? JSONSerializer.string(value, options: .init(maxDepth: 32))) ?? "(deeply nested value)"
        return text.count > 60 ? String(text.prefix(57)) + "…" : text
    }

    func applyNumber(_ schema: LocatedSchema, _ object: JSONObject, _ number: JSONNumber) -> Bool {
        var valid = true
        func bound(_ keyword: String, _ symbol: String, _ ok: (Int) -> Bool) {
            guard case .number(let limit)? = object[keyword] else { return }
            if !ok(JSONNumber.compare(number, limit)) {
                valid = false
                report(schema, keyword, "must be \(symbol) \(JSONSerializer.canonical(limit))")
            }
        }
        bound("minimum", "≥") { $0 >= 0 }
        bound("maximum", "≤") { $0 <= 0 }
        bound("exclusiveMinimum", ">") { $0 > 0 }
        bound("exclusiveMaximum", "<") { $0 < 0 }
        if case .number(let divisor)? = object["multipleOf"], !divisor.isZero, !divisor.isNegative {
            let multiple: Bool
            if let exact = number.isMultiple(of: divisor) {
                multiple = exact
            } else {
                let quotient = number.doubleValue / divisor.doubleValue
                multiple = quotient.isFinite && quotient == quotient.rounded()
            }
            if !multiple {
                valid = false
                report(schema, "multipleOf", "must be a multiple of \(JSONSerializer.canonical(divisor))")
            }
        }
        return valid
    }

    /// A non-negative integer keyword value; values too large for `Int` count as `Int.max`.
    static func count(_ value: JSONValue?) -> Int? {
        guard case .number(let n)? = value, n.isInteger, !n.isNegative else { return nil }
        return n.intValue ?? Int.max
    }

    func applyString(_ schema: LocatedSchema, _ object: JSONObject, _ string: String) -> Bool {
        var valid = true
        let asserts = validator.assertsValidation
        let minLength = asserts ? Self.count(object["minLength"]) : nil
        let maxLength = asserts ? Self.count(object["maxLength"]) : nil
        if minLength != nil || maxLength != nil {
            let length = string.unicodeScalars.count
            if let minLength, length < minLength {
                valid = false
                report(schema, "minLength", "must be at least \(minLength) character\(minLength == 1 ? "" : "s") long")
            }
            if let maxLength, length > maxLength {
                valid = false
                report(schema, "maxLength", "must be at most \(maxLength) character\(maxLength == 1 ? "" : "s") long")
            }
        }
        if asserts, case .string(let source)? = object["pattern"] {
            switch match(source, string) {
            case .some(true): break
            case .some(false):
                valid = false
                report(schema, "pattern", "must match the pattern '\(source)'")
            case .none:
                valid = false
                report(schema, "pattern", "pattern too expensive: '\(source)' ran past the matching step budget")
            }
        }
        if validator.options.assertFormats, case .string(let format)? = object["format"] {
            switch FormatChecker.check(format, string, budget: &budget) {
            case .some(false):
                valid = false
                report(schema, "format", "must be a valid \(format)")
            default: break
            }
        }
        return valid
    }

    /// Whether `pattern` matches `string`; nil when the step budget ran out.
    func match(_ pattern: String, _ string: String) -> Bool? {
        guard let regex = index.patterns[pattern] else { return false }
        do {
            return try regex.firstMatch(in: string, budget: &budget)
        } catch {
            budget.remaining = 0
            return nil
        }
    }

    /// `properties`, `patternProperties`, `additionalProperties`, `propertyNames`, `required`,
    /// `dependentRequired`, `minProperties`, `maxProperties`, `unevaluatedProperties`.
    func applyObject(_ schema: LocatedSchema, _ object: JSONObject, _ members: JSONObject, _ annotations: inout Annotations) -> Bool {
        var evaluated: Set<String> = []
        var valid = applyProperties(schema, object, members, &evaluated)
        if validator.assertsValidation { valid = applyObjectAssertions(schema, object, members) && valid }
        return finishObject(schema, object, members, evaluated, &annotations) && valid
    }

    /// `properties`, `patternProperties`, `additionalProperties`, `propertyNames`; collects the
    /// names they evaluated when `unevaluatedProperties` needs them.
    private func applyProperties(_ schema: LocatedSchema, _ object: JSONObject, _ members: JSONObject, _ evaluated: inout Set<String>) -> Bool {
        var valid = true
        let properties = object["properties"].flatMap { if case .object(let o) = $0 { o } else { nil } }
        let patterns = object["patternProperties"].flatMap { if case .object(let o) = $0 { o } else { nil } }
        if let properties {
            for (name, child) in properties {
                guard let value = members[name] else { continue }
                if tracksAnnotations { evaluated.insert(name) }
                if apply(subschema(schema, child, "properties", name), value, keyword: ["properties", name], instanceToken: name) == nil { valid = false }
            }
        }
        if let patterns {
            for (name, value) in members {
                for (source, child) in patterns {
                    switch match(source, name) {
                    case .some(true):
                        if tracksAnnotations { evaluated.insert(name) }
                        if apply(subschema(schema, child, "patternProperties", source), value, keyword: ["patternProperties", source], instanceToken: name) == nil {
                            valid = false
                        }
                    case .some(false): break
                    case .none:
                        valid = false
                        report(schema, "patternProperties", "pattern too expensive: '\(source)' ran past the matching step budget", child: name)
                    }
                }
            }
        }
        if let additional = object["additionalProperties"] {
            for (name, value) in members where properties?.contains(name) != true {
                if let patterns, patterns.keys.contains(where: { match($0, name) != false }) { continue }
                if tracksAnnotations { evaluated.insert(name) }
                if case .bool(false) = additional {
                    valid = false
                    report(schema, "additionalProperties", "property \"\(name)\" is not allowed", child: name)
                } else if apply(subschema(schema, additional, "additionalProperties"), value, keyword: ["additionalProperties"], instanceToken: name) == nil {
                    valid = false
                }
            }
        }
        if let names = object["propertyNames"] {
            let located = subschema(schema, names, "propertyNames")
            for (name, _) in members where passes(located, .string(name), keyword: ["propertyNames"]) == nil {
                valid = false
                report(schema, "propertyNames", "property name \"\(name)\" does not match the propertyNames schema", child: name)
            }
        }
        return valid
    }

    /// `required`, `dependentRequired`, `minProperties`, `maxProperties`.
    private func applyObjectAssertions(_ schema: LocatedSchema, _ object: JSONObject, _ members: JSONObject) -> Bool {
        var valid = true
        if case .array(let required)? = object["required"] {
            for case .string(let name) in required where !members.contains(name) {
                valid = false
                report(schema, "required", "\"\(name)\" is required")
            }
        }
        if schema.draft == .draft2020_12, case .object(let dependents)? = object["dependentRequired"] {
            for (name, list) in dependents where members.contains(name) {
                guard case .array(let required) = list else { continue }
                for case .string(let other) in required where !members.contains(other) {
                    valid = false
                    report(schema, "dependentRequired", "\"\(other)\" is required when \"\(name)\" is present")
                }
            }
        }
        if let minimum = Self.count(object["minProperties"]), members.count < minimum {
            valid = false
            report(schema, "minProperties", "must have at least \(minimum) propert\(minimum == 1 ? "y" : "ies")")
        }
        if let maximum = Self.count(object["maxProperties"]), members.count > maximum {
            valid = false
            report(schema, "maxProperties", "must have at most \(maximum) propert\(maximum == 1 ? "y" : "ies")")
        }
        return valid
    }

    /// Records the evaluated properties and applies `unevaluatedProperties`.
    private func finishObject(_ schema: LocatedSchema, _ object: JSONObject, _ members: JSONObject, _ evaluated: Set<String>, _ annotations: inout Annotations) -> Bool {
        var valid = true
        if tracksAnnotations {
            annotations.properties.formUnion(evaluated)
            if schema.draft == .draft2020_12, let unevaluated = object["unevaluatedProperties"], !annotations.allProperties {
                let located = subschema(schema, unevaluated, "unevaluatedProperties")
                for (name, value) in members where !annotations.properties.contains(name) {
                    if case .bool(false) = unevaluated {
                        valid = false
                        report(schema, "unevaluatedProperties", "property \"\(name)\" is not allowed", child: name)
                    } else if apply(located, value, keyword: ["unevaluatedProperties"], instanceToken: name) == nil {
                        valid = false
                    }
                }
                annotations.allProperties = true
            }
        }
        return valid
    }
}
