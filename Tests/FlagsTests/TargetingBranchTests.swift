import DiscfgFlags
import DiscfgJSON
import Testing

/// Which branch of a top-level `if` answered: the first condition that holds, as the
/// evaluator's own `if` picks it (the same rules, `$ref`s and context).
@Suite("FlagsTests.TargetingBranch")
struct TargetingBranchTests {
    static let document = #"""
        {"$evaluators": {"pro": {"in": [{"var": "plan"}, ["pro", "team"]]}},
         "flags": {
           "tiers": {"state": "ENABLED", "variants": {"a": "a", "b": "b", "c": "c"}, "defaultVariant": "c",
                     "targeting": {"if": [{"$ref": "pro"}, "a", {"starts_with": [{"var": "email"}, "admin@"]}, "b", "c"]}},
           "even": {"state": "ENABLED", "variants": {"a": "a"}, "defaultVariant": "a", "targeting": {"if": [{"var": "beta"}, "a"]}},
           "named": {"state": "ENABLED", "variants": {"x": "x", "y": "y"}, "defaultVariant": "y",
                     "targeting": {"if": [{"==": [{"var": "$flagd.flagKey"}, "named"]}, "x", "y"]}},
           "split": {"state": "ENABLED", "variants": {"a": "a", "b": "b"}, "defaultVariant": "a", "targeting": {"fractional": [["a", 1], ["b", 1]]}},
           "static": {"state": "ENABLED", "variants": {"a": "a"}, "defaultVariant": "a"},
           "off": {"state": "DISABLED", "variants": {"a": "a"}, "defaultVariant": "a", "targeting": {"if": [true, "a"]}}
         }}
        """#

    let catalog = FlagCatalog(try! FlagSet(parsing: TargetingBranchTests.document))
    let evaluator = FlagEvaluator(clock: { 2000 })

    @Test("each condition of an if, its else, a rule that is no if, and flags with no branch to name")
    func branches() {
        let pro = JSONObject([("plan", .string("team")), ("email", .string("admin@x"))])
        #expect(evaluator.branch(of: "tiers", in: catalog, context: pro) == .condition(1))
        #expect(evaluator.evaluate("tiers", in: catalog, context: pro).variant == "a")
        let admin = JSONObject([("plan", .string("free")), ("email", .string("admin@x"))])
        #expect(evaluator.branch(of: "tiers", in: catalog, context: admin) == .condition(2))
        #expect(evaluator.evaluate("tiers", in: catalog, context: admin).variant == "b")
        #expect(evaluator.branch(of: "tiers", in: catalog) == .otherwise)
        #expect(evaluator.evaluate("tiers", in: catalog).variant == "c")
        // $flagd.flagKey is set as the evaluator sets it.
        #expect(evaluator.branch(of: "named", in: catalog) == .condition(1))
        // An if with no else whose condition fails answers null: no branch answered.
        #expect(evaluator.branch(of: "even", in: catalog) == nil)
        #expect(evaluator.evaluate("even", in: catalog).reason == .defaultValue)
        #expect(evaluator.branch(of: "split", in: catalog, context: JSONObject([("targetingKey", .string("u1"))])) == .wholeRule)
        #expect(evaluator.branch(of: "static", in: catalog) == nil)
        #expect(evaluator.branch(of: "off", in: catalog) == nil)
        #expect(evaluator.branch(of: "missing", in: catalog) == nil)
    }
}
