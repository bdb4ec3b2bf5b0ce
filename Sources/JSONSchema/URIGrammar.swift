/// RFC 3986 syntax checks for the `uri` and `uri-reference` formats.
enum URIGrammar {
    static func isUnreserved(_ c: UInt8) -> Bool {
        FormatChecker.isAlphaNumeric(c) || c == 0x2D || c == 0x2E || c == 0x5F || c == 0x7E
    }

    static func isSubDelim(_ c: UInt8) -> Bool { "!$&'()*+,;=".utf8.contains(c) }

    /// Checks `s` as a run of allowed characters and `%HH` escapes.
    static func isEncoded(_ s: ArraySlice<UInt8>, allowing extra: String) -> Bool {
        var i = s.startIndex
        while i < s.endIndex {
            let c = s[i]
            if c == 0x25 {
                guard i + 2 < s.endIndex, FormatChecker.isHex(s[i + 1]), FormatChecker.isHex(s[i + 2]) else { return false }
                i += 3
                continue
            }
            guard isUnreserved(c) || isSubDelim(c) || extra.utf8.contains(c) else { return false }
            i += 1
        }
        return true
    }

    static func isURI(_ s: [UInt8]) -> Bool {
        guard let colon = s.firstIndex(of: 0x3A), colon > 0, s[0] >= 0x41, s[0] | 0x20 >= 0x61, s[0] | 0x20 <= 0x7A,
            s[1..<colon].allSatisfy({ FormatChecker.isAlphaNumeric($0) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E })
        else { return false }
        return isRelative(s[(colon + 1)...], allowColonInFirstSegment: true)
    }

    static func isURIReference(_ s: [UInt8]) -> Bool {
        isURI(s) || isRelative(s[...], allowColonInFirstSegment: false)
    }

    /// hier-part / relative-part, then `?query` and `#fragment`.
    private static func isRelative(_ s: ArraySlice<UInt8>, allowColonInFirstSegment: Bool) -> Bool {
        var rest = s
        if let hash = rest.firstIndex(of: 0x23) {
            guard isEncoded(rest[(hash + 1)...], allowing: ":@/?") else { return false }
            rest = rest[..<hash]
        }
        if let question = rest.firstIndex(of: 0x3F) {
            guard isEncoded(rest[(question + 1)...], allowing: ":@/?") else { return false }
            rest = rest[..<question]
        }
        if rest.starts(with: [0x2F, 0x2F]) {
            rest = rest.dropFirst(2)
            let end = rest.firstIndex(of: 0x2F) ?? rest.endIndex
            guard isAuthority(rest[..<end]) else { return false }
            rest = rest[end...]
        } else if !allowColonInFirstSegment {
            let firstSegment = rest.prefix { $0 != 0x2F }
            if firstSegment.contains(0x3A) { return false }
        }
        return isEncoded(rest, allowing: ":@/")
    }

    private static func isAuthority(_ s: ArraySlice<UInt8>) -> Bool {
        var host = s
        if let at = s.lastIndex(of: 0x40) {
            guard isEncoded(s[..<at], allowing: ":") else { return false }
            host = s[(at + 1)...]
        }
        if host.first == 0x5B {
            guard let close = host.firstIndex(of: 0x5D) else { return false }
            let literal = host[(host.startIndex + 1)..<close]
            guard FormatChecker.isIPv6(literal) || (literal.first | 0x20 == 0x76 && literal.count > 1) else { return false }
            let after = host[(close + 1)...]
            if after.isEmpty { return true }
            return after.first == 0x3A && after.dropFirst().allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
        }
        if let colon = host.lastIndex(of: 0x3A) {
            guard host[(colon + 1)...].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return false }
            host = host[..<colon]
        }
        return isEncoded(host, allowing: "")
    }
}

extension Optional where Wrapped == UInt8 {
    fileprivate static func | (lhs: UInt8?, rhs: UInt8) -> UInt8? { lhs.map { $0 | rhs } }
}
