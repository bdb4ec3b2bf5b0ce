/// A `pattern` or `patternProperties` key ready to match.
struct CompiledPattern: Sendable {
    /// The pattern as written (for messages).
    let source: String
    /// nil only for a pattern that does not compile, which then matches nothing.
    private let regex: ECMARegex?

    /// Compiles `source`; the regex is taken from `compiled` when it is there.
    init(_ source: String, compiled: ECMARegex?) {
        self.source = source
        regex = compiled ?? (try? ECMARegex(source))
    }

    /// Whether the pattern matches somewhere in `string`; nil when the step budget ran out.
    func matches(_ string: String, budget: inout RegexBudget) -> Bool? {
        guard let regex else { return false }
        do {
            return try regex.firstMatch(in: string, budget: &budget)
        } catch {
            budget.remaining = 0
            return nil
        }
    }
}
