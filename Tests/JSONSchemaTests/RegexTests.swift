import Testing

@testable import JSONSchema

@Suite("JSONSchemaTests.ECMARegex")
struct RegexTests {
    private func matches(_ pattern: String, _ input: String) throws -> Bool {
        var budget = RegexBudget()
        return try ECMARegex(pattern).firstMatch(in: input, budget: &budget)
    }

    @Test func basics() throws {
        #expect(try matches("abc", "xxabcxx"))
        #expect(try !matches("^abc$", "xabc"))
        #expect(try matches("^a.c$", "abc"))
        #expect(try !matches("^a.c$", "a\nc"))
        #expect(try matches("^(foo|bar)+$", "foobarfoo"))
        #expect(try !matches("^(foo|bar)+$", "foobaz"))
        #expect(try matches("^[a-z0-9-]{3,5}$", "a-9"))
        #expect(try !matches("^[a-z0-9-]{3,5}$", "abcdef"))
        #expect(try matches("^[^a-z]+$", "ABC123"))
        #expect(try matches("^a{2}$", "aa"))
        #expect(try matches("^a{2,}$", "aaaaa"))
        #expect(try matches("^x{,2}$", "x{,2}"))  // not a quantifier: literal
        #expect(try matches("]", "a]"))
    }

    @Test func escapesAndClasses() throws {
        #expect(try matches(#"^\d+$"#, "0123"))
        #expect(try !matches(#"^\d$"#, "৪"))  // \d is ASCII only
        #expect(try matches(#"^\w+$"#, "snake_case9"))
        #expect(try !matches(#"^\w$"#, "é"))
        #expect(try matches(#"^\s$"#, "\u{2003}"))
        #expect(try matches(#"^\s$"#, "\u{FEFF}"))
        #expect(try matches(#"^\S+$"#, "abc"))
        #expect(try matches(#"\bfoo\b"#, "a foo b"))
        #expect(try !matches(#"\bfoo\b"#, "afoob"))
        #expect(try matches(#"^\p{L}+$"#, "héllo"))
        #expect(try matches(#"^\p{Lu}\p{Ll}+$"#, "Émile"))
        #expect(try matches(#"^\P{L}+$"#, "123"))
        #expect(try matches(#"^\x41\u0042\u{43}\cJ$"#, "ABC\n"))
        #expect(try matches(#"^\uD83D\uDE00$"#, "😀"))
        #expect(try matches(#"^[\d-]+$"#, "12-3"))
        #expect(try matches(#"^[\b]$"#, "\u{8}"))
        #expect(try matches("^🐲{2}$", "🐲🐲"))
        #expect(try matches(#"^\.\*\+\?\(\)\[\]\{\}\|\/\\\^\$$"#, #".*+?()[]{}|/\^$"#))
    }

    @Test func groupsLookaroundAndBackreferences() throws {
        #expect(try matches(#"^(a+)b\1$"#, "aabaa"))
        #expect(try !matches(#"^(a+)b\1$"#, "aaba"))
        #expect(try matches(#"^(?<q>['"]).*\k<q>$"#, "'quoted'"))
        #expect(try !matches(#"^(?<q>['"]).*\k<q>$"#, "'quoted\""))
        #expect(try matches("^foo(?=bar)", "foobar"))
        #expect(try !matches("^foo(?=bar)", "foobaz"))
        #expect(try matches("^foo(?!bar)", "foobaz"))
        #expect(try matches("(?<=\\$)\\d+", "cost $42"))
        #expect(try !matches("(?<!\\$)\\b\\d+", "$42"))
        #expect(try matches("^(?:ab)*?c$", "ababc"))
        #expect(try matches("^a*?$", "aaa"))
        #expect(try matches("^(a*)*$", "aaaa"))  // a loop over something that can match empty ends
        #expect(try matches("^(|a)+$", "aaa"))
    }

    @Test(arguments: [#"\a"#, "(?P<n>x)", "(?i)abc", "(?#c)a", "^(abc]", "(", ")", "[z-a]", "a**", "*a", #"\p{NotAProperty}"#, #"\1"#, #"\k<nope>"#, "a{2,1}", "(?=a)*", #"[\d-z]"#])
    func invalidPatternsAreRefused(_ pattern: String) {
        #expect(throws: RegexSyntaxError.self) { try ECMARegex(pattern) }
    }

    @Test func compiledSizeIsBounded() {
        #expect(throws: RegexSyntaxError.self) { try ECMARegex("((a{1000}){1000}){1000}") }
        #expect(throws: RegexSyntaxError.self) { try ECMARegex(String(repeating: "(", count: 10_000) + String(repeating: ")", count: 10_000)) }
    }

    @Test(arguments: ["(a+)+$", "(a|a)*$", "(a*)*b", "^(a|aa)+$", "(x+x+)+y", "(.*a){20}"])
    func catastrophicBacktrackingRunsOutOfBudgetQuickly(_ pattern: String) throws {
        let regex = try ECMARegex(pattern)
        let input = String(repeating: pattern.contains("x") ? "x" : "a", count: 40) + "!"
        var budget = RegexBudget(steps: 2_000_000)
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            #expect(throws: RegexBudgetExceeded.self) { try regex.firstMatch(in: input, budget: &budget) }
        }
        #expect(elapsed < .seconds(5))
    }

    @Test func longInputsDoNotOverflowTheStack() throws {
        let long = String(repeating: "a", count: 1_000_000)
        var budget = RegexBudget(steps: 50_000_000)
        #expect(try ECMARegex("^a*$").firstMatch(in: long, budget: &budget))
        #expect(try ECMARegex("^(a|b)*$").firstMatch(in: long, budget: &budget))
        #expect(try !ECMARegex("^a*b$").firstMatch(in: long, budget: &budget))
    }
}
