/// Why a pattern was refused: bad ECMA-262 syntax, or a construct this engine does not run.
public struct RegexSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The pattern as given.
    public let pattern: String
    /// 0-based position in the pattern, counted in Unicode scalars.
    public let position: Int
    /// What was wrong.
    public let message: String

    public var description: String { "invalid pattern at position \(position): \(message)" }
}

/// Parses ECMA-262 pattern syntax (with the `u` flag's strict escapes; a `{` or `}` that is not
/// a quantifier, and a lone `]`, are literal as browsers read them).
struct RegexParser {
    private let pattern: String
    private let scalars: [UInt32]
    private var position = 0
    private(set) var groupCount = 0
    private var groupNames: [String: Int] = [:]
    private var namedReferences: [(name: String, position: Int)] = []
    private var numberedReferences: [(number: Int, position: Int)] = []
    private var depth = 0

    init(_ pattern: String) {
        self.pattern = pattern
        scalars = pattern.unicodeScalars.map(\.value)
    }

    mutating func parse() throws(RegexSyntaxError) -> RegexNode {
        let node = try parseDisjunction()
        if position < scalars.count {
            throw error(scalars[position] == 0x29 ? "unmatched ')'" : "unexpected character")
        }
        for reference in numberedReferences where reference.number > groupCount {
            throw RegexSyntaxError(pattern: pattern, position: reference.position, message: "back reference to group \(reference.number), but there are \(groupCount) groups")
        }
        for reference in namedReferences where groupNames[reference.name] == nil {
            throw RegexSyntaxError(pattern: pattern, position: reference.position, message: "back reference to unknown group name '\(reference.name)'")
        }
        return node
    }

    private func error(_ message: String) -> RegexSyntaxError {
        RegexSyntaxError(pattern: pattern, position: position, message: message)
    }

    private var current: UInt32? { position < scalars.count ? scalars[position] : nil }

    private mutating func eat(_ c: Character) -> Bool {
        if current == c.unicodeScalars.first!.value {
            position += 1
            return true
        }
        return false
    }

    private mutating func parseDisjunction() throws(RegexSyntaxError) -> RegexNode {
        depth += 1
        defer { depth -= 1 }
        if depth > 200 { throw error("groups nest deeper than 200") }
        var alternatives = [try parseAlternative()]
        while eat("|") { alternatives.append(try parseAlternative()) }
        return alternatives.count == 1 ? alternatives[0] : .alternation(alternatives)
    }

    private mutating func parseAlternative() throws(RegexSyntaxError) -> RegexNode {
        var terms: [RegexNode] = []
        while let c = current, c != 0x7C /* | */, c != 0x29 /* ) */ {
            terms.append(try parseTerm())
        }
        return terms.count == 1 ? terms[0] : .sequence(terms)
    }

    private mutating func parseTerm() throws(RegexSyntaxError) -> RegexNode {
        let start = position
        let atom: RegexNode
        var quantifiable = true
        switch current! {
        case 0x5E: position += 1; return .lineStart
        case 0x24: position += 1; return .lineEnd
        case 0x2E: position += 1; atom = .anyButNewline
        case 0x28: (atom, quantifiable) = try parseGroup()
        case 0x5B: atom = .set(try parseClass())
        case 0x5C:
            if let assertion = try parseAssertionEscape() { return assertion }
            atom = try parseAtomEscape()
        case 0x2A, 0x2B, 0x3F: throw error("nothing to repeat")
        case 0x7B:
            if (try? lookaheadQuantifierBraces()) != nil { throw error("nothing to repeat") }
            position += 1
            atom = .scalar(0x7B)
        default:
            atom = .scalar(current!)
            position += 1
        }
        guard let (min, max) = try parseQuantifier() else { return atom }
        guard quantifiable else {
            position = start
            throw error("a lookaround cannot be repeated")
        }
        let greedy = !eat("?")
        return .quantified(atom, min: min, max: max, greedy: greedy)
    }

    /// Tries `{n}`, `{n,}`, `{n,m}` at the current position without consuming it.
    private func lookaheadQuantifierBraces() throws(RegexSyntaxError) -> (Int, Int?, Int)? {
        var p = position
        guard p < scalars.count, scalars[p] == 0x7B else { return nil }
        p += 1
        func number(_ p: inout Int) -> Int? {
            var value: Int?
            while p < scalars.count, scalars[p] >= 0x30, scalars[p] <= 0x39 {
                value = min((value ?? 0) * 10 + Int(scalars[p] - 0x30), 1_000_000)
                p += 1
            }
            return value
        }
        guard let low = number(&p) else { return nil }
        var high: Int? = low
        if p < scalars.count, scalars[p] == 0x2C {
            p += 1
            high = number(&p)
        }
        guard p < scalars.count, scalars[p] == 0x7D else { return nil }
        return (low, high, p + 1)
    }

    private mutating func parseQuantifier() throws(RegexSyntaxError) -> (Int, Int?)? {
        guard let c = current else { return nil }
        switch c {
        case 0x2A: position += 1; return (0, nil)
        case 0x2B: position += 1; return (1, nil)
        case 0x3F: position += 1; return (0, 1)
        case 0x7B:
            guard let (low, high, end) = try lookaheadQuantifierBraces() else { return nil }
            if let high, high < low { throw error("numbers out of order in {} quantifier") }
            position = end
            return (low, high)
        default: return nil
        }
    }

    private mutating func parseGroup() throws(RegexSyntaxError) -> (RegexNode, Bool) {
        let open = position
        position += 1
        var capture: Int?
        var look: (behind: Bool, negated: Bool)?
        if eat("?") {
            if eat(":") {
            } else if eat("=") {
                look = (false, false)
            } else if eat("!") {
                look = (false, true)
            } else if eat("<") {
                if eat("=") {
                    look = (true, false)
                } else if eat("!") {
                    look = (true, true)
                } else {
                    let name = try parseGroupName()
                    guard groupNames[name] == nil else { throw error("duplicate group name '\(name)'") }
                    groupCount += 1
                    groupNames[name] = groupCount
                    capture = groupCount
                }
            } else {
                throw error("invalid group: '(?' must be followed by ':', '=', '!', '<=', '<!' or '<name>'")
            }
        } else {
            groupCount += 1
            capture = groupCount
        }
        let body = try parseDisjunction()
        guard eat(")") else {
            position = open
            throw error("unclosed group")
        }
        if let look { return (.look(body, behind: look.behind, negated: look.negated), false) }
        return (.group(body, capture: capture), true)
    }

    /// A group name after `(?<` or `\k<`, through the closing `>`.
    private mutating func parseGroupName() throws(RegexSyntaxError) -> String {
        var name = String.UnicodeScalarView()
        while let c = current, c != 0x3E {
            guard let scalar = Unicode.Scalar(c), scalar.properties.isIDContinue || c == 0x24 else { throw error("invalid character in group name") }
            if name.isEmpty, !(scalar.properties.isIDStart || c == 0x24 || c == 0x5F) { throw error("invalid group name") }
            name.append(scalar)
            position += 1
        }
        guard eat(">"), !name.isEmpty else { throw error("invalid group name") }
        return String(name)
    }

    private mutating func parseAssertionEscape() throws(RegexSyntaxError) -> RegexNode? {
        guard position + 1 < scalars.count else { return nil }
        switch scalars[position + 1] {
        case 0x62: position += 2; return .wordBoundary(negated: false)
        case 0x42: position += 2; return .wordBoundary(negated: true)
        default: return nil
        }
    }

    private mutating func parseAtomEscape() throws(RegexSyntaxError) -> RegexNode {
        let start = position
        position += 1
        guard let c = current else { throw error("pattern ends with '\\'") }
        if c >= 0x31, c <= 0x39 {
            var number = 0
            while let d = current, d >= 0x30, d <= 0x39 {
                number = min(number * 10 + Int(d - 0x30), 100_000)
                position += 1
            }
            numberedReferences.append((number, start))
            return .backreference(number)
        }
        if c == 0x6B {  // \k<name>
            position += 1
            guard eat("<") else { throw error("\\k must be followed by <name>") }
            let name = try parseGroupName()
            namedReferences.append((name, start))
            return .backreference(-1 - namedReferences.count)  // resolved after the parse
        }
        if let item = try parseClassEscape() {
            return .set(RegexCharacterSet(items: [item], negated: false))
        }
        return .scalar(try parseCharacterEscape(inClass: false))
    }

    /// `\d \D \w \W \s \S \p{…} \P{…}`, after the backslash; nil for other escapes.
    private mutating func parseClassEscape() throws(RegexSyntaxError) -> RegexCharacterSet.Item? {
        switch current! {
        case 0x64: position += 1; return .digit(negated: false)
        case 0x44: position += 1; return .digit(negated: true)
        case 0x77: position += 1; return .word(negated: false)
        case 0x57: position += 1; return .word(negated: true)
        case 0x73: position += 1; return .space(negated: false)
        case 0x53: position += 1; return .space(negated: true)
        case 0x70, 0x50:
            let negated = current == 0x50
            position += 1
            guard eat("{") else { throw error("\\p must be followed by {property}") }
            var name = ""
            while let c = current, c != 0x7D, let scalar = Unicode.Scalar(c) {
                name.unicodeScalars.append(scalar)
                position += 1
            }
            guard eat("}") else { throw error("unclosed \\p{") }
            guard let property = RegexUnicodeProperty.named(name) else { throw error("unknown or unsupported Unicode property '\(name)'") }
            return .property(property, negated: negated)
        default: return nil
        }
    }

    /// A single-character escape after the backslash: `\n`, `\cA`, `\x41`, `\u{1F600}`, `\.`…
    private mutating func parseCharacterEscape(inClass: Bool) throws(RegexSyntaxError) -> UInt32 {
        let c = current!
        position += 1
        switch c {
        case 0x74: return 0x09
        case 0x6E: return 0x0A
        case 0x76: return 0x0B
        case 0x66: return 0x0C
        case 0x72: return 0x0D
        case 0x62 where inClass: return 0x08
        case 0x2D where inClass: return 0x2D
        case 0x30:
            if let d = current, d >= 0x30, d <= 0x39 { throw error("invalid escape '\\0' followed by a digit") }
            return 0
        case 0x63:
            guard let letter = current, (0x41...0x5A).contains(letter) || (0x61...0x7A).contains(letter) else {
                throw error("\\c must be followed by a letter")
            }
            position += 1
            return letter % 32
        case 0x78:
            return try hexDigits(2)
        case 0x75:
            if eat("{") {
                var value: UInt32 = 0
                var count = 0
                while let d = current, let digit = hexValue(d) {
                    value = value * 16 + digit
                    count += 1
                    position += 1
                    if value > 0x10FFFF { throw error("code point out of range in \\u{}") }
                }
                guard count > 0, eat("}") else { throw error("invalid \\u{} escape") }
                return value
            }
            let high = try hexDigits(4)
            if (0xD800...0xDBFF).contains(high), position + 1 < scalars.count, scalars[position] == 0x5C, scalars[position + 1] == 0x75 {
                let save = position
                position += 2
                if let low = try? hexDigits(4), (0xDC00...0xDFFF).contains(low) {
                    return 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                }
                position = save
            }
            return high
        default:
            // Syntax characters and '/' may be escaped to stand for themselves; nothing else may.
            if "^$\\.*+?()[]{}|/".unicodeScalars.contains(where: { $0.value == c }) { return c }
            position -= 1
            throw error("invalid escape '\\\(Unicode.Scalar(c).map { String($0) } ?? "?")'")
        }
    }

    private func hexValue(_ c: UInt32) -> UInt32? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x41...0x46: c - 0x41 + 10
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }

    private mutating func hexDigits(_ count: Int) throws(RegexSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<count {
            guard let c = current, let digit = hexValue(c) else { throw error("expected \(count) hex digits") }
            value = value * 16 + digit
            position += 1
        }
        return value
    }

    private mutating func parseClass() throws(RegexSyntaxError) -> RegexCharacterSet {
        let open = position
        position += 1
        let negated = eat("^")
        var items: [RegexCharacterSet.Item] = []
        while true {
            guard let c = current else {
                position = open
                throw error("unclosed character class")
            }
            if c == 0x5D {
                position += 1
                break
            }
            let low = try parseClassAtom()
            if current == 0x2D, position + 1 < scalars.count, scalars[position + 1] != 0x5D {
                position += 1
                let high = try parseClassAtom()
                guard case .range(let lo, _) = low, case .range(let hi, _) = high else {
                    throw error("a class escape cannot bound a range")
                }
                guard lo <= hi else { throw error("range out of order in character class") }
                items.append(.range(lo, hi))
            } else {
                items.append(low)
            }
        }
        return RegexCharacterSet(items: items, negated: negated)
    }

    private mutating func parseClassAtom() throws(RegexSyntaxError) -> RegexCharacterSet.Item {
        let c = current!
        if c == 0x5C {
            position += 1
            guard current != nil else { throw error("pattern ends with '\\'") }
            if let item = try parseClassEscape() { return item }
            let value = try parseCharacterEscape(inClass: true)
            return .range(value, value)
        }
        position += 1
        return .range(c, c)
    }

    /// Group numbers for the `\k<name>` references, in the order they were written.
    var namedReferenceGroups: [Int] { namedReferences.map { groupNames[$0.name] ?? 0 } }
}
