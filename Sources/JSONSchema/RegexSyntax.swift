/// The parsed form of an ECMA-262 pattern, before it is compiled to a ``RegexProgram``.
indirect enum RegexNode: Sendable {
    case empty
    case scalar(UInt32)
    case anyButNewline
    case set(RegexCharacterSet)
    case sequence([RegexNode])
    case alternation([RegexNode])
    case group(RegexNode, capture: Int?)
    case quantified(RegexNode, min: Int, max: Int?, greedy: Bool)
    case lineStart
    case lineEnd
    case wordBoundary(negated: Bool)
    case backreference(Int)
    case look(RegexNode, behind: Bool, negated: Bool)

    /// Whether the node can match without consuming input (loops over it need a progress check).
    var canMatchEmpty: Bool {
        switch self {
        case .empty, .lineStart, .lineEnd, .wordBoundary, .backreference, .look: true
        case .scalar, .anyButNewline, .set: false
        case .sequence(let nodes): nodes.allSatisfy(\.canMatchEmpty)
        case .alternation(let nodes): nodes.contains(where: \.canMatchEmpty)
        case .group(let node, _): node.canMatchEmpty
        case .quantified(let node, let min, _, _): min == 0 || node.canMatchEmpty
        }
    }
}

/// A bracket class or class escape: `[a-z\d]`, `\w`, `\p{Letter}`, negated or not.
struct RegexCharacterSet: Sendable {
    enum Item: Sendable {
        case range(UInt32, UInt32)
        case digit(negated: Bool)
        case word(negated: Bool)
        case space(negated: Bool)
        case property(RegexUnicodeProperty, negated: Bool)
    }

    var items: [Item]
    var negated: Bool

    func contains(_ c: UInt32) -> Bool {
        var hit = false
        for item in items {
            switch item {
            case .range(let lo, let hi): hit = c >= lo && c <= hi
            case .digit(let n): hit = Self.isDigit(c) != n
            case .word(let n): hit = Self.isWord(c) != n
            case .space(let n): hit = Self.isSpace(c) != n
            case .property(let p, let n): hit = p.contains(c) != n
            }
            if hit { break }
        }
        return hit != negated
    }

    static func isDigit(_ c: UInt32) -> Bool { c >= 0x30 && c <= 0x39 }

    static func isWord(_ c: UInt32) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F
    }

    /// ECMA-262 WhiteSpace and LineTerminator: tab, VT, FF, space, NBSP, BOM, Zs, LF, CR, LS, PS.
    static func isSpace(_ c: UInt32) -> Bool {
        switch c {
        case 0x09...0x0D, 0x20, 0xA0, 0xFEFF, 0x2028, 0x2029: return true
        default:
            guard c > 0x7F, let scalar = Unicode.Scalar(c) else { return false }
            return scalar.properties.generalCategory == .spaceSeparator
        }
    }

    static func isLineTerminator(_ c: UInt32) -> Bool { c == 0x0A || c == 0x0D || c == 0x2028 || c == 0x2029 }
}

/// A Unicode property usable in `\p{…}`: general categories and a few binary properties.
enum RegexUnicodeProperty: Sendable {
    case categories(Set<Unicode.GeneralCategory>)
    case any
    case ascii
    case alphabetic
    case whiteSpace
    case uppercase
    case lowercase

    func contains(_ c: UInt32) -> Bool {
        switch self {
        case .any: return true
        case .ascii: return c < 0x80
        default: break
        }
        guard let scalar = Unicode.Scalar(c) else {
            if case .categories(let set) = self { return set.contains(.surrogate) }
            return false
        }
        switch self {
        case .categories(let set): return set.contains(scalar.properties.generalCategory)
        case .alphabetic: return scalar.properties.isAlphabetic
        case .whiteSpace: return scalar.properties.isWhitespace
        case .uppercase: return scalar.properties.isUppercase
        case .lowercase: return scalar.properties.isLowercase
        case .any, .ascii: return true
        }
    }

    /// Looks a property up by the names ECMA-262 accepts (`L`, `Letter`, `gc=Lu`, `General_Category=Nd`).
    static func named(_ name: String) -> RegexUnicodeProperty? {
        var name = name
        if let eq = name.firstIndex(of: "=") {
            let key = name[..<eq]
            guard key == "General_Category" || key == "gc" else { return nil }
            name = String(name[name.index(after: eq)...])
        }
        switch name {
        case "Any": return .any
        case "ASCII": return .ascii
        case "Alphabetic", "Alpha": return .alphabetic
        case "White_Space", "space": return .whiteSpace
        case "Uppercase", "Upper": return .uppercase
        case "Lowercase", "Lower": return .lowercase
        default: break
        }
        for entry in generalCategories where entry.names.contains(name) {
            return .categories(entry.categories)
        }
        return nil
    }

    private static let generalCategories: [(names: Set<String>, categories: Set<Unicode.GeneralCategory>)] = [
        (["L", "Letter"], [.uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter]),
        (["LC", "Cased_Letter"], [.uppercaseLetter, .lowercaseLetter, .titlecaseLetter]),
        (["Lu", "Uppercase_Letter"], [.uppercaseLetter]),
        (["Ll", "Lowercase_Letter"], [.lowercaseLetter]),
        (["Lt", "Titlecase_Letter"], [.titlecaseLetter]),
        (["Lm", "Modifier_Letter"], [.modifierLetter]),
        (["Lo", "Other_Letter"], [.otherLetter]),
        (["M", "Mark", "Combining_Mark"], [.nonspacingMark, .spacingMark, .enclosingMark]),
        (["Mn", "Nonspacing_Mark"], [.nonspacingMark]),
        (["Mc", "Spacing_Mark"], [.spacingMark]),
        (["Me", "Enclosing_Mark"], [.enclosingMark]),
        (["N", "Number"], [.decimalNumber, .letterNumber, .otherNumber]),
        (["Nd", "Decimal_Number", "digit"], [.decimalNumber]),
        (["Nl", "Letter_Number"], [.letterNumber]),
        (["No", "Other_Number"], [.otherNumber]),
        (["P", "Punctuation", "punct"], [.connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation, .finalPunctuation, .otherPunctuation]),
        (["Pc", "Connector_Punctuation"], [.connectorPunctuation]),
        (["Pd", "Dash_Punctuation"], [.dashPunctuation]),
        (["Ps", "Open_Punctuation"], [.openPunctuation]),
        (["Pe", "Close_Punctuation"], [.closePunctuation]),
        (["Pi", "Initial_Punctuation"], [.initialPunctuation]),
        (["Pf", "Final_Punctuation"], [.finalPunctuation]),
        (["Po", "Other_Punctuation"], [.otherPunctuation]),
        (["S", "Symbol"], [.mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol]),
        (["Sm", "Math_Symbol"], [.mathSymbol]),
        (["Sc", "Currency_Symbol"], [.currencySymbol]),
        (["Sk", "Modifier_Symbol"], [.modifierSymbol]),
        (["So", "Other_Symbol"], [.otherSymbol]),
        (["Z", "Separator"], [.spaceSeparator, .lineSeparator, .paragraphSeparator]),
        (["Zs", "Space_Separator"], [.spaceSeparator]),
        (["Zl", "Line_Separator"], [.lineSeparator]),
        (["Zp", "Paragraph_Separator"], [.paragraphSeparator]),
        (["C", "Other"], [.control, .format, .surrogate, .privateUse, .unassigned]),
        (["Cc", "Control", "cntrl"], [.control]),
        (["Cf", "Format"], [.format]),
        (["Cs", "Surrogate"], [.surrogate]),
        (["Co", "Private_Use"], [.privateUse]),
        (["Cn", "Unassigned"], [.unassigned]),
    ]
}
