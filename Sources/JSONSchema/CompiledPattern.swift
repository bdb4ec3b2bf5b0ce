/// A `pattern` or `patternProperties` key ready to match: the one-pass matcher when the pattern
/// is a ``ClassSequencePattern``, else the backtracking ``ECMARegex``.
struct CompiledPattern: Sendable {
    /// The pattern as written (for messages).
    let source: String
    private let sequence: ClassSequencePattern?
    /// nil only for a pattern that does not compile, which then matches nothing.
    private let regex: ECMARegex?

    /// Compiles `source`; the regex is taken from `compiled` when it is there.
    init(_ source: String, compiled: ECMARegex?) {
        self.source = source
        regex = compiled ?? (try? ECMARegex(source))
        var parser = RegexParser(source)
        sequence = regex == nil ? nil : (try? parser.parse()).flatMap(ClassSequencePattern.init)
    }

    /// Whether the pattern matches somewhere in `string`; nil when the step budget ran out.
    func matches(_ string: String, budget: inout RegexBudget) -> Bool? {
        if let sequence { return sequence.matches(string, budget: &budget) }
        guard let regex else { return false }
        do {
            return try regex.firstMatch(in: string, budget: &budget)
        } catch {
            budget.remaining = 0
            return nil
        }
    }
}

/// A pattern anchored at its start that is a sequence of ASCII classes, each repeated between a
/// least and a most number of times, where a class repeated a varying number of times shares no
/// character with the class after it, which must occur at least once: `^[a-z][a-z0-9-]*$`,
/// `^[A-Z_]+$`, `^v[0-9]+\.[0-9]+$`. Such a pattern matches, if at all, by taking each class as
/// often as it can, so one pass over the UTF-8 bytes decides, with no backtracking and no copy
/// of the string.
///
/// It spends one step of the regex budget per byte read, as the backtracking matcher spends at
/// least one per character, so the budget still bounds the matching a validation does.
struct ClassSequencePattern: Sendable {
    struct Step: Sendable {
        let characters: ASCIISet
        let least: Int
        let most: Int
    }

    let steps: [Step]
    let anchoredAtEnd: Bool

    /// The sequence form of a parsed pattern, or nil when it has none.
    init?(_ node: RegexNode) {
        guard case .sequence(var terms) = node, case .lineStart? = terms.first else { return nil }
        terms.removeFirst()
        var anchoredAtEnd = false
        if case .lineEnd? = terms.last {
            anchoredAtEnd = true
            terms.removeLast()
        }
        var steps: [Step] = []
        for term in terms {
            switch term {
            case .quantified(let atom, let least, let most, _):
                guard let characters = Self.asciiClass(atom), most.map({ $0 >= least }) ?? true else { return nil }
                steps.append(Step(characters: characters, least: least, most: most ?? Int.max))
            default:
                guard let characters = Self.asciiClass(term) else { return nil }
                steps.append(Step(characters: characters, least: 1, most: 1))
            }
        }
        // Taking a varying class greedily is right only if what it takes can never be what the
        // next class needs.
        for (i, step) in steps.enumerated() where step.least != step.most && i + 1 < steps.count {
            let next = steps[i + 1]
            guard next.least >= 1, step.characters.isDisjoint(with: next.characters) else { return nil }
        }
        self.steps = steps
        self.anchoredAtEnd = anchoredAtEnd
    }

    /// The class of one character or bracket class that holds only ASCII characters.
    private static func asciiClass(_ node: RegexNode) -> ASCIISet? {
        let contains: (UInt32) -> Bool
        switch node {
        case .scalar(let c):
            guard c < 128 else { return nil }
            contains = { $0 == c }
        case .set(let set):
            guard !set.negated else { return nil }
            for item in set.items {
                switch item {
                case .range(_, let hi): guard hi < 128 else { return nil }
                case .digit(negated: false), .word(negated: false): break
                default: return nil
                }
            }
            contains = set.contains
        default:
            return nil
        }
        return ASCIISet((UInt8(0)..<128).filter { contains(UInt32($0)) })
    }

    /// Whether `string` matches; nil when the budget ran out.
    func matches(_ string: String, budget: inout RegexBudget) -> Bool? {
        var string = string
        let (matched, read) = string.withUTF8 { bytes -> (Bool, Int) in
            var position = 0
            for step in steps {
                var taken = 0
                while taken < step.most, position < bytes.count, step.characters.contains(bytes[position]) {
                    position += 1
                    taken += 1
                }
                if taken < step.least { return (false, position) }
            }
            return (!anchoredAtEnd || position == bytes.count, position)
        }
        budget.remaining -= read + 1
        if budget.remaining < 0 {
            budget.remaining = 0
            return nil
        }
        return matched
    }
}

/// A set of ASCII characters as 128 bits: membership of a byte is a shift and a mask (bytes
/// from 128 up, parts of non-ASCII characters, are never members).
struct ASCIISet: Sendable {
    private let low: UInt64
    private let high: UInt64

    init(_ members: [UInt8]) {
        var low: UInt64 = 0
        var high: UInt64 = 0
        for c in members where c < 128 {
            if c < 64 { low |= 1 << UInt64(c) } else { high |= 1 << UInt64(c - 64) }
        }
        self.low = low
        self.high = high
    }

    @inline(__always)
    func contains(_ byte: UInt8) -> Bool {
        // Masking shifts (&>>): the amount is in range, and Swift's checked `>>` costs branches.
        byte < 64 ? low &>> UInt64(byte) & 1 == 1 : byte < 128 && high &>> UInt64(byte &- 64) & 1 == 1
    }

    func isDisjoint(with other: ASCIISet) -> Bool {
        low & other.low == 0 && high & other.high == 0
    }
}
