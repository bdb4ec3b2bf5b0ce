/// Checks of an IDNA A-label (`xn--…`) in a hostname: Punycode (RFC 3492) decoding and the
/// IDNA2008 rules the decoded label must meet (RFC 5891 section 4.2, RFC 5892 exceptions and
/// contextual rules). The full IDNA derived-property table is not carried; code points it
/// names by exception, the contextual rules, and controls, format characters and separators are.
enum IDNALabel {
    /// Decodes the part after `xn--`; nil when it is not valid Punycode.
    static func decodePunycode(_ input: ArraySlice<UInt8>) -> [UInt32]? {
        let base = 36, tmin = 1, tmax = 26, skew = 38, damp = 700
        var output: [UInt32] = []
        var position = input.startIndex
        if let dash = input.lastIndex(of: UInt8(ascii: "-")) {
            for byte in input[..<dash] {
                guard byte < 0x80 else { return nil }
                output.append(UInt32(byte))
            }
            position = dash + 1
        }
        var n = 128, i = 0, bias = 72
        func adapt(_ delta: Int, _ points: Int, _ first: Bool) -> Int {
            var delta = first ? delta / damp : delta / 2
            delta += delta / points
            var k = 0
            while delta > ((base - tmin) * tmax) / 2 {
                delta /= base - tmin
                k += base
            }
            return k + (base - tmin + 1) * delta / (delta + skew)
        }
        while position < input.endIndex {
            let oldi = i
            var w = 1
            var k = base
            while true {
                guard position < input.endIndex else { return nil }
                let c = input[position]
                position += 1
                let digit: Int
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = Int(c) - 22
                case UInt8(ascii: "a")...UInt8(ascii: "z"): digit = Int(c) - 97
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): digit = Int(c) - 65
                default: return nil
                }
                let (product, o1) = digit.multipliedReportingOverflow(by: w)
                let (sum, o2) = i.addingReportingOverflow(product)
                guard !o1, !o2 else { return nil }
                i = sum
                let t = k <= bias ? tmin : (k >= bias + tmax ? tmax : k - bias)
                if digit < t { break }
                let (next, o3) = w.multipliedReportingOverflow(by: base - t)
                guard !o3 else { return nil }
                w = next
                k += base
            }
            bias = adapt(i - oldi, output.count + 1, oldi == 0)
            n += i / (output.count + 1)
            i %= output.count + 1
            guard n <= 0x10FFFF, Unicode.Scalar(UInt32(n)) != nil else { return nil }
            output.insert(UInt32(n), at: i)
            i += 1
        }
        return output
    }

    /// Whether a decoded label meets the IDNA2008 rules checked here.
    static func isValidULabel(_ label: [UInt32]) -> Bool {
        guard let first = label.first else { return false }
        if label.count >= 4, label[2] == 0x2D, label[3] == 0x2D { return false }
        guard let firstScalar = Unicode.Scalar(first) else { return false }
        switch firstScalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return false
        default: break
        }
        let hasArabicIndic = label.contains { (0x0660...0x0669).contains($0) }
        let hasExtendedArabicIndic = label.contains { (0x06F0...0x06F9).contains($0) }
        if hasArabicIndic && hasExtendedArabicIndic { return false }
        for (index, c) in label.enumerated() {
            let before = index > 0 ? label[index - 1] : nil
            let after = index + 1 < label.count ? label[index + 1] : nil
            switch c {
            case 0x0640, 0x07FA, 0x302E, 0x302F, 0x3031...0x3035, 0x303B:
                return false  // DISALLOWED by exception (RFC 5892 section 2.6)
            case 0x00B7:  // MIDDLE DOT: between two 'l'
                guard before == 0x6C, after == 0x6C else { return false }
            case 0x0375:  // GREEK LOWER NUMERAL SIGN: followed by Greek
                guard let after, isGreek(after) else { return false }
            case 0x05F3, 0x05F4:  // HEBREW GERESH, GERSHAYIM: preceded by Hebrew
                guard let before, isHebrew(before) else { return false }
            case 0x30FB:  // KATAKANA MIDDLE DOT: with Hiragana, Katakana or Han in the label
                guard label.contains(where: { $0 != 0x30FB && isJapanese($0) }) else { return false }
            case 0x200D:  // ZERO WIDTH JOINER: after a virama
                guard let before, let scalar = Unicode.Scalar(before), scalar.properties.canonicalCombiningClass == .virama else { return false }
            case 0x200C:
                break  // ZERO WIDTH NON-JOINER: allowed after a virama or between joining letters
            default:
                guard let scalar = Unicode.Scalar(c) else { return false }
                switch scalar.properties.generalCategory {
                case .control, .format, .spaceSeparator, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned, .uppercaseLetter:
                    return false
                default:
                    if c < 0x80, !(FormatChecker.isAlphaNumeric(UInt8(c)) || c == 0x2D) { return false }
                }
            }
        }
        return true
    }

    private static func isGreek(_ c: UInt32) -> Bool { (0x0370...0x03FF).contains(c) || (0x1F00...0x1FFF).contains(c) }
    private static func isHebrew(_ c: UInt32) -> Bool { (0x0590...0x05FF).contains(c) || (0xFB1D...0xFB4F).contains(c) }
    private static func isJapanese(_ c: UInt32) -> Bool {
        (0x3040...0x309F).contains(c) || (0x30A0...0x30FF).contains(c) || (0x31F0...0x31FF).contains(c) || (0xFF66...0xFF9F).contains(c)
            || (0x4E00...0x9FFF).contains(c) || (0x3400...0x4DBF).contains(c) || (0xF900...0xFAFF).contains(c) || (0x20000...0x2FFFF).contains(c)
            || c == 0x3005 || c == 0x3007
    }
}
