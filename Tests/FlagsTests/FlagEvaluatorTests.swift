import DiscfgFlags
import DiscfgJSON
import Testing

@Suite("FlagsTests.Evaluator")
struct FlagEvaluatorTests {
    static let document = #"""
        {"metadata": {"team": "web", "scope": "set"},
         "$evaluators": {"pro": {"in": [{"var": "plan"}, ["pro", "team"]]}, "proUser": {"and": [{"$ref": "pro"}, {"var": "targetingKey"}]}},
         "flags": {
           "static": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on", "metadata": {"scope": "flag"}},
           "limit": {"state": "ENABLED", "variants": {"low": 10.0, "high": 9007199254740991}, "defaultVariant": "low",
                     "targeting": {"if": [{"$ref": "proUser"}, "high", null]}},
           "off": {"state": "DISABLED", "variants": {"on": true}, "defaultVariant": "on"},
           "nodefault": {"state": "ENABLED", "variants": {"on": true}},
           "ghost": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on", "targeting": {"cat": ["gh", "ost"]}},
           "broken": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on", "targeting": {"nope": [1]}},
           "divide": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on", "targeting": {"/": [1, 0]}},
           "clock": {"state": "ENABLED", "variants": {"late": "late", "early": "early"}, "defaultVariant": "early",
                     "targeting": {"if": [{">": [{"var": "$flagd.timestamp"}, 1000]}, "late", "early"]}},
           "named": {"state": "ENABLED", "variants": {"x": "x", "other": "o"}, "defaultVariant": "other",
                     "targeting": {"if": [{"==": [{"var": "$flagd.flagKey"}, "named"]}, "x", "other"]}}
         }}
        """#

    let catalog = FlagCatalog(try! FlagSet(parsing: FlagEvaluatorTests.document))
    let evaluator = FlagEvaluator(clock: { 2000 })

    func context(_ members: [(String, JSONValue)]) -> JSONObject { JSONObject(members.map { (key: $0.0, value: $0.1) }) }

    @Test("no targeting is STATIC with the default variant; set and flag metadata merge, the flag's winning")
    func staticFlag() {
        let answer = evaluator.evaluate("static", in: catalog)
        #expect(answer.reason == .staticValue && answer.variant == "on" && answer.value == .bool(true))
        #expect(answer.metadata["team"] == "web" && answer.metadata["scope"] == "flag")
    }

    @Test("targeting through nested $refs matches; null from targeting is DEFAULT with the default variant")
    func targeting() throws {
        let pro = evaluator.evaluate("limit", in: catalog, context: context([("targetingKey", "u1"), ("plan", "pro")]))
        #expect(pro.reason == .targetingMatch && pro.variant == "high")
        #expect(pro.value.map { try! JSONSerializer.string($0, options: .init(numbersAsWritten: true)) } == "9007199254740991")
        let free = evaluator.evaluate("limit", in: catalog, context: context([("targetingKey", "u1"), ("plan", "free")]))
        #expect(free.reason == .defaultValue && free.variant == "low")
        // A float variant written 10.0 is answered 10.0, not 10.
        #expect(free.value.map { try! JSONSerializer.string($0, options: .init(numbersAsWritten: true)) } == "10.0")
    }

    @Test("DISABLED and a missing default variant answer the caller's default, not an error")
    func callersDefault() {
        let off = evaluator.evaluate("off", in: catalog)
        #expect(off.reason == .disabled && off.value == nil && off.variant == nil && off.errorCode == nil)
        let none = evaluator.evaluate("nodefault", in: catalog)
        #expect(none.reason == .defaultValue && none.value == nil && none.errorCode == nil)
    }

    @Test("errors: FLAG_NOT_FOUND, GENERAL for an undefined variant or a failing rule, PARSE_ERROR for an unknown operator, TYPE_MISMATCH")
    func errors() {
        #expect(evaluator.evaluate("absent", in: catalog).errorCode == .flagNotFound)
        #expect(evaluator.evaluate("ghost", in: catalog).errorCode == .general)
        #expect(evaluator.evaluate("divide", in: catalog).errorCode == .general)
        #expect(evaluator.evaluate("broken", in: catalog).errorCode == .parseError)
        let mismatch = evaluator.evaluate("static", in: catalog, expecting: .string)
        #expect(mismatch.errorCode == .typeMismatch && mismatch.reason == .error && mismatch.value == nil)
        #expect(evaluator.evaluate("limit", in: catalog, context: context([("plan", "free")]), expecting: .integer).errorCode == .typeMismatch)
        #expect(evaluator.evaluate("limit", in: catalog, context: context([("plan", "free")]), expecting: .float).errorCode == nil)
        #expect(evaluator.evaluate("limit", in: catalog, context: context([("targetingKey", 5)])).errorCode == .invalidContext)
    }

    @Test("$flagd.timestamp comes from the injected clock and $flagd.flagKey names the flag")
    func injected() {
        #expect(evaluator.evaluate("clock", in: catalog).variant == "late")
        #expect(FlagEvaluator(clock: { 10 }).evaluate("clock", in: catalog).variant == "early")
        #expect(evaluator.evaluate("named", in: catalog).variant == "x")
    }

    @Test("a flag set's errors are data naming the member")
    func setErrors() {
        func refusal(_ text: String) -> FlagSetError? {
            do { _ = try FlagSet(parsing: text) } catch { return error }
            return nil
        }
        #expect(refusal(#"{"flags": {"a": {"state": "ON", "variants": {"x": 1}}}}"#)?.pointer == "/flags/a/state")
        #expect(refusal(#"{"flags": {"a": {"state": "ENABLED", "variants": {}}}}"#)?.pointer == "/flags/a/variants")
        #expect(refusal(#"{"flags": {"a": {"state": "ENABLED", "variants": {"x": 1}, "defaultVariant": 5}}}"#)?.pointer == "/flags/a/defaultVariant")
        #expect(refusal(#"{"metadata": {"m": null}, "flags": {}}"#)?.pointer == "/metadata/m")
        #expect(refusal(#"{"flags": {"a": {"state": "ENABLED", "variants": {"x": 1}, "targeting": {"$ref": "nope"}}}}"#)?.pointer == "/flags/a/targeting/$ref")
        let cycle = refusal(#"{"$evaluators": {"p": {"$ref": "q"}, "q": {"!": {"$ref": "p"}}}, "flags": {"a": {"state": "ENABLED", "variants": {"x": 1}, "targeting": {"$ref": "p"}}}}"#)
        #expect(cycle?.message.contains("cycle") == true)
        #expect(refusal("{") != nil)
        #expect(refusal(#"{"metadata": {"fractionalGeneration": "md5"}}"#)?.pointer == "/metadata/fractionalGeneration")
    }

    @Test("the union of flag sets refuses a key defined twice, naming both sets")
    func union() throws {
        let a = try FlagSet(parsing: #"{"flags": {"x": {"state": "ENABLED", "variants": {"on": true}}}}"#)
        let b = try FlagSet(parsing: #"{"flags": {"y": {"state": "ENABLED", "variants": {"on": true}}}}"#)
        let catalog = try FlagCatalog(sets: [("/flags/a", a), ("/flags/b", b)])
        #expect(catalog.entries["y"]?.setName == "/flags/b")
        #expect(throws: FlagSetError.self) { try FlagCatalog(sets: [("/flags/a", a), ("/flags/a2", a)]) }
        do {
            _ = try FlagCatalog(sets: [("/flags/a", a), ("/flags/a2", a)])
        } catch {
            #expect(error.message.contains("/flags/a") && error.message.contains("/flags/a2"))
        }
    }
}
