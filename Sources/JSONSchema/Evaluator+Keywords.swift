import DiscfgJSON

extension Evaluator {
    /// `type`, `enum`, `const`.
    mutating func applyAssertions(_ node: SchemaNode, _ keywords: AnyValueKeywords, _ instance: JSONValue) -> Bool {
        var valid = true
        if let types = keywords.types, TypeMask.of(instance).isDisjoint(with: types.mask) {
            valid = false
            let expected = types.names.count == 1 ? types.names[0] : "one of " + types.names.joined(separator: ", ")
            report(node, "type", "must be \(expected), not \(instance.typeName)")
        }
        if let allowed = keywords.allowed, !(allowed.set?.contains(instance) ?? allowed.values.contains(instance)) {
            valid = false
            let listed = allowed.values.prefix(10).map(JSONSerializer.brief).joined(separator: ", ")
            report(node, "enum", "must be one of: \(listed)\(allowed.values.count > 10 ? ", … (\(allowed.values.count) values)" : "")")
        }
        if let constant = keywords.constant, constant != instance {
            valid = false
            report(node, "const", "must be \(JSONSerializer.brief(constant))")
        }
        return valid
    }

    mutating func applyNumber(_ node: SchemaNode, _ keywords: NumberKeywords, _ number: JSONNumber) -> Bool {
        var valid = true
        // Two small integers compare as machine integers; anything else exactly, digit by digit.
        let small = keywords.boundsAreSmall ? Self.smallInteger(number) : nil
        func bound(_ bound: NumericBound?, _ keyword: String, _ symbol: String, _ holds: (Int) -> Bool) {
            guard let bound else { return }
            let order: Int
            if let small, let limit = bound.small {
                order = small < limit ? -1 : (small == limit ? 0 : 1)
            } else {
                order = JSONNumber.compare(number, bound.limit)
            }
            if !holds(order) {
                valid = false
                report(node, keyword, "must be \(symbol) \(JSONSerializer.canonical(bound.limit))")
            }
        }
        bound(keywords.minimum, "minimum", "≥") { $0 >= 0 }
        bound(keywords.maximum, "maximum", "≤") { $0 <= 0 }
        bound(keywords.exclusiveMinimum, "exclusiveMinimum", ">") { $0 > 0 }
        bound(keywords.exclusiveMaximum, "exclusiveMaximum", "<") { $0 < 0 }
        if let divisor = keywords.multipleOf {
            let multiple: Bool
            if let exact = number.isMultiple(of: divisor) {
                multiple = exact
            } else {
                let quotient = number.doubleValue / divisor.doubleValue
                multiple = quotient.isFinite && quotient == quotient.rounded()
            }
            if !multiple {
                valid = false
                report(node, "multipleOf", "must be a multiple of \(JSONSerializer.canonical(divisor))")
            }
        }
        return valid
    }

    /// The value of an integer of at most 18 digits (which cannot overflow), else nil.
    static func smallInteger(_ number: JSONNumber) -> Int? {
        guard number.exponent >= 0, number.digits.count + number.exponent <= 18 else { return nil }
        var value = 0
        for digit in number.digits { value = value * 10 + Int(digit &- UInt8(ascii: "0")) }
        for _ in 0..<number.exponent { value *= 10 }
        return number.isNegative ? -value : value
    }

    mutating func applyString(_ node: SchemaNode, _ keywords: StringKeywords, _ string: String) -> Bool {
        var valid = true
        if keywords.minLength != nil || keywords.maxLength != nil {
            // Lengths count Unicode scalars, never more than the UTF-8 bytes: most strings are
            // decided by their byte count, which a native string knows.
            let bytes = string.utf8.count
            var scalars: Int?
            if let minLength = keywords.minLength, bytes < minLength || Self.scalars(string, &scalars) < minLength {
                valid = false
                report(node, "minLength", "must be at least \(minLength) character\(minLength == 1 ? "" : "s") long")
            }
            if let maxLength = keywords.maxLength, bytes > maxLength, Self.scalars(string, &scalars) > maxLength {
                valid = false
                report(node, "maxLength", "must be at most \(maxLength) character\(maxLength == 1 ? "" : "s") long")
            }
        }
        if let pattern = keywords.pattern {
            switch pattern.matches(string, budget: &budget) {
            case .some(true): break
            case .some(false):
                valid = false
                report(node, "pattern", "must match the pattern '\(pattern.source)'")
            case .none:
                valid = false
                report(node, "pattern", "pattern too expensive: '\(pattern.source)' ran past the matching step budget")
            }
        }
        if let format = keywords.format, !FormatChecker.check(format.format, string) {
            valid = false
            report(node, "format", "must be a valid \(format.name)")
        }
        return valid
    }

    /// The number of Unicode scalars of `string`, counted once.
    private static func scalars(_ string: String, _ counted: inout Int?) -> Int {
        if let counted { return counted }
        let count = string.unicodeScalars.count
        counted = count
        return count
    }
}
