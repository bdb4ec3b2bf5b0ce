import DiscfgJSON

/// Rules and contexts for ``FlagCaseGenerator``.
extension FlagCaseGenerator {
    /// Context members, some missing, some of the wrong type.
    static let scalarVariables = ["email", "age", "plan", "score", "version", "user.tier", "user.id", "beta", "missing.member", "targetingKey", "$flagd.flagKey", "$flagd.timestamp"]

    mutating func context() -> JSONObject {
        var context = JSONObject()
        if !chance(10) { context["targetingKey"] = .string(chance(5) ? "" : pick(["user-1", "user-123", "ünï", "42", "a@b.c"]) + (chance(50) ? String(int(0...999)) : "")) }
        if chance(80) { context["email"] = chance(85) ? .string(pick(["jane@example.org", "bob@corp.example", "x"])) : number("7") }
        if chance(80) { context["age"] = pick([number("17"), number("42"), number("42.0"), number("65.5"), "30", "abc", .null, true]) }
        if chance(70) { context["plan"] = pick(["pro", "free", "team", "", number("3")]) }
        if chance(60) { context["score"] = pick([number("0"), number("2.5"), number("-1"), "1e3", " 12 ", [number("4")]]) }
        if chance(60) { context["version"] = semVerValue() }
        if chance(50) { context["tags"] = pick([["a", "b", "c"], [], [number("1"), number("2"), number("3.5")], "a,b"]) }
        if chance(50) { context["user"] = ["tier": pick(["gold", "silver", number("2")]), "id": pick([number("1234"), "u-9", number("12.0")])] }
        if chance(30) { context["beta"] = pick([true, false, "true", number("1")]) }
        return context
    }

    mutating func semVerValue() -> JSONValue {
        pick([
            "1.2.3", "v1.2.3", "V2.0.0", "1.2", "1", "2", "1.2.3-alpha", "1.2.3-alpha.1", "1.2.3-alpha.beta", "1.2.3-rc.1+build.5",
            "1.2.3+build", "01.2.3", "1.2.3-01", "1.2.3-", "", "2.0.0-0.3.7", "1.0.0-x.7.z.92", "1.0.0-alpha-1", "10.20.30",
            "1.2.3.4", "1.2.3-a..b", "v", number("1"), number("1.5"), .null, true,
        ])
    }

    mutating func semVer() -> JSONValue {
        let op: JSONValue = pick(["=", "!=", "<", "<=", ">", ">=", "^", "~", "==", number("5")])
        let lhs: JSONValue = chance(60) ? ["var": "version"] : semVerValue()
        return ["sem_ver": chance(95) ? [lhs, op, semVerValue()] : [lhs, op]]
    }

    /// A rule whose value decides a branch.
    mutating func condition(depth: Int, references: [String]) -> JSONValue {
        if depth <= 0 { return comparison() }
        switch int(0...11) {
        case 0: return ["and": .array((0..<int(0...3)).map { _ in condition(depth: depth - 1, references: references) })]
        case 1: return ["or": .array((0..<int(0...3)).map { _ in condition(depth: depth - 1, references: references) })]
        case 2: return [pick(["!", "!!"]): chance(50) ? condition(depth: depth - 1, references: references) : [value(depth: depth - 1)]]
        case 3: return references.isEmpty ? comparison() : ["$ref": .string(pick(references))]
        case 4: return ["in": [scalar(), pick([["var": "tags"], ["var": "email"], ["a", "pro", number("1")], "jane@example.org"])]]
        case 5: return semVer()
        case 6: return [pick(["starts_with", "ends_with"]): [chance(80) ? ["var": "email"] : scalar(), pick(["jane", "example.org", "", number("1")])]]
        case 7: return ["missing": chance(50) ? .array([pick(["email", "age", "user.tier", "nope"])]) : ["email", "nope"]]
        case 8: return ["missing_some": [number(pick(["1", "2"])), ["email", "age", "plan", "nope"]]]
        case 9: return [pick(["some", "all", "none"]): [pick([["var": "tags"], [number("1"), number("2")], []]), [pick([">", "==", "<"]): [["var": ""], number("1")]]]]
        case 10: return ["if": [condition(depth: depth - 1, references: references), condition(depth: depth - 1, references: references), comparison()]]
        default: return comparison()
        }
    }

    /// A comparison between context members and literals.
    mutating func comparison() -> JSONValue {
        let op = pick(["==", "!=", "===", "!==", "<", "<=", ">", ">="])
        var args = [scalar(), scalar()]
        if ["<", "<=", ">", ">="].contains(op), chance(25) { args.append(scalar()) }
        return [op: .array(args)]
    }

    /// A context member or a literal that is not an array or object.
    mutating func scalar() -> JSONValue {
        if chance(55) {
            let name = pick(Self.scalarVariables)
            return chance(15) ? ["var": [.string(name), pick(["dflt", number("0"), number("2.5")])]] : ["var": .string(name)]
        }
        return pick(["pro", "jane@example.org", "", number("42"), number("42.0"), number("0"), number("2.5"), number("-1"), true, false, .null, "42", "1e3"])
    }

    /// An expression of any type.
    mutating func value(depth: Int) -> JSONValue {
        if depth <= 0 { return scalar() }
        let inner = { (generator: inout FlagCaseGenerator) in generator.value(depth: depth - 1) }
        switch int(0...13) {
        case 0: return ["cat": .array((0..<int(0...3)).map { _ in inner(&self) })]
        case 1: return ["substr": .array([inner(&self), pick([number("0"), number("1"), number("-3"), number("2.7"), "x"])] + (chance(50) ? [pick([number("2"), number("-1"), number("0"), "y"])] : []))]
        case 2: return [pick(["+", "*", "-"]): .array((0..<int(0...3)).map { _ in inner(&self) })]
        case 3: return [pick(["/", "%"]): [inner(&self), pick([number("2"), number("-3"), number("0.5"), number("0"), ["var": "age"]])]]
        case 4: return [pick(["min", "max"]): .array((0..<int(0...3)).map { _ in inner(&self) })]
        case 5: return ["merge": [pick([["var": "tags"], ["x"], "y"]), inner(&self)]]
        case 6: return ["map": [pick([["var": "tags"], [number("1"), number("2"), "3"]]), [pick(["+", "*", "cat"]): [["var": ""], number("2")]]]]
        case 7: return ["filter": [pick([["var": "tags"], [number("1"), number("2"), number("3")]]), [">=": [["var": ""], number("2")]]]]
        case 8: return ["reduce": [pick([["var": "tags"], [number("1"), number("2.5")], "x"]), ["+": [["var": "current"], ["var": "accumulator"]]], pick([number("0"), number("1.5"), "s"])]]
        case 9: return ["if": [condition(depth: depth - 1, references: []), inner(&self), inner(&self)]]
        case 10: return ["var": [pick(["tags.0", "tags.length", "email.length", "user", "age", "version"]), inner(&self)]]
        case 11: return ["fractional": fractionalArgs(names: Self.variantNames)]
        case 12: return condition(depth: depth - 1, references: [])
        default: return scalar()
        }
    }

    mutating func fractional(names: [String]) -> JSONValue {
        ["fractional": fractionalArgs(names: names)]
    }

    /// `fractional`'s arguments: an optional bucketing expression, then 1–10 variants with odd weights.
    mutating func fractionalArgs(names: [String]) -> JSONValue {
        var args: [JSONValue] = []
        switch int(0...9) {
        case 0: args.append(["cat": [["var": "$flagd.flagKey"], ["var": "email"]]])
        case 1: args.append(["var": pick(["email", "user.id", "age", "user", "nope", "beta"])])
        case 2: args.append(pick(["fixed-seed", "", number("7"), number("7.0"), number("2.5"), true, .null]))
        default: break
        }
        for _ in 0..<int(1...10) {
            var entry: [JSONValue] = [chance(92) ? .string(pick(names)) : pick([number("3"), true, .null])]
            switch int(0...9) {
            case 0...1: break
            case 2: entry.append(pick([number("0"), number("-2"), number("2147483647"), number("1.5"), "3", number("5.0")]))
            default: entry.append(number(String(pick([1, 3, 7, 13, 25, 50, 99, 1000]))))
            }
            args.append(.array(entry))
        }
        if chance(3) { args.append("not-a-fraction") }
        return .array(args)
    }
}
