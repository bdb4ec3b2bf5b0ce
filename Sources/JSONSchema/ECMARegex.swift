/// An ECMA-262 regular expression, as JSON Schema's `pattern`, `patternProperties` and the
/// `regex` format use them, run by a backtracking matcher with a step budget.
///
/// Patterns match Unicode scalars (code points), like a JavaScript regex with the `u` flag.
/// Supported: alternation, groups (capturing, `(?:)`, named `(?<n>)`), greedy and lazy
/// quantifiers (`* + ? {n} {n,} {n,m}`), classes with ranges, `. \d \D \w \W \s \S \b \B`,
/// `\p{…}` / `\P{…}` for general categories and a few binary properties, `^ $`, lookahead and
/// lookbehind, back references (numbered and `\k<name>`), and the character escapes.
/// Not supported: flags, `\p{Script=…}`.
///
/// A match runs at most ``RegexBudget/remaining`` steps; past it, matching throws
/// ``RegexBudgetExceeded`` instead of running on, so `(a+)+$` against `aaaa…!` ends quickly.
///
/// ```swift
/// let regex = try ECMARegex("^[a-z]+(-[a-z]+)*$")
/// var budget = RegexBudget()
/// try regex.firstMatch(in: "max-connections", budget: &budget)  // true
/// ```
public struct ECMARegex: Sendable {
    /// The source pattern.
    public let pattern: String
    let program: RegexProgram

    /// Compiles a pattern.
    /// - Throws: ``RegexSyntaxError`` for invalid syntax, unsupported constructs, or a pattern whose
    ///   compiled form would exceed ``RegexProgram/maxInstructions`` (e.g. `(a{1000}){1000}`).
    public init(_ pattern: String) throws(RegexSyntaxError) {
        self.pattern = pattern
        var parser = RegexParser(pattern)
        let node = try parser.parse()
        program = try RegexProgram(node: node, groupCount: parser.groupCount, namedReferenceGroups: parser.namedReferenceGroups, pattern: pattern)
    }

    /// Whether the pattern matches anywhere in `string` (JSON Schema patterns are not anchored).
    /// - Throws: ``RegexBudgetExceeded`` when the budget runs out first.
    public func firstMatch(in string: String, budget: inout RegexBudget) throws(RegexBudgetExceeded) -> Bool {
        try program.search(string.unicodeScalars.map(\.value), budget: &budget, pattern: pattern)
    }
}

/// The number of matcher steps that may still be spent; shared by every match of one validation.
public struct RegexBudget: Sendable {
    /// Steps left.
    public var remaining: Int

    /// A budget of `steps` (default ten million: tens of milliseconds of matching).
    public init(steps: Int = 10_000_000) {
        remaining = steps
    }
}

/// Matching ran out of steps: the pattern is too expensive for this input.
public struct RegexBudgetExceeded: Error, Sendable, CustomStringConvertible {
    /// The pattern that was running.
    public let pattern: String
    public var description: String { "pattern too expensive: '\(pattern)' ran past the matching step budget" }
}
