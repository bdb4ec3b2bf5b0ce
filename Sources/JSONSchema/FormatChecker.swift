/// The `format` values this validator asserts: `date-time`, `date`, `time`, `duration`, `email`,
/// `hostname`, `ipv4`, `ipv6`, `uri`, `uri-reference`, `uuid`, `regex`, `json-pointer`.
/// Other formats are not checked.
public enum FormatChecker {
    /// The formats checked.
    public static let supported: Set<String> = Set(StringFormat.allCases.map(\.rawValue))

    /// Whether `string` is a valid `format`.
    static func check(_ format: StringFormat, _ string: String) -> Bool {
        if format == .hostname {
            var string = string
            return string.withUTF8 { isHostname($0) }
        }
        let s = Array(string.utf8)
        switch format {
        case .dateTime: return isDateTime(s)
        case .date: return isDate(s[...])
        case .time: return isTime(s[...])
        case .duration: return isDuration(s)
        case .email: return isEmail(s)
        case .hostname: return isHostname(s[...])
        case .ipv4: return isIPv4(s[...])
        case .ipv6: return isIPv6(s[...])
        case .uri: return URIGrammar.isURI(s)
        case .uriReference: return URIGrammar.isURIReference(s)
        case .uuid: return isUUID(s)
        case .regex: return (try? ECMARegex(string)) != nil
        case .jsonPointer: return isJSONPointer(s)
        }
    }

    static func digits(_ s: ArraySlice<UInt8>) -> Int? {
        guard !s.isEmpty, s.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return s.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    static func isDate(_ s: ArraySlice<UInt8>) -> Bool {
        guard s.count == 10 else { return false }
        let b = s.startIndex
        guard s[b + 4] == 0x2D, s[b + 7] == 0x2D,
            let year = digits(s[b..<(b + 4)]), let month = digits(s[(b + 5)..<(b + 7)]), let day = digits(s[(b + 8)..<(b + 10)])
        else { return false }
        guard month >= 1, month <= 12, day >= 1 else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return day <= days
    }

    /// `HH:MM:SS[.frac](Z|±HH:MM)`; a leap second must fall on 23:59:60 UTC.
    static func isTime(_ s: ArraySlice<UInt8>) -> Bool {
        guard s.count >= 9 else { return false }
        let b = s.startIndex
        guard s[b + 2] == 0x3A, s[b + 5] == 0x3A,
            let hour = digits(s[b..<(b + 2)]), let minute = digits(s[(b + 3)..<(b + 5)]), let second = digits(s[(b + 6)..<(b + 8)])
        else { return false }
        var i = b + 8
        if s[i] == 0x2E {
            i += 1
            let start = i
            while i < s.endIndex, s[i] >= 0x30, s[i] <= 0x39 { i += 1 }
            if i == start { return false }
        }
        guard i < s.endIndex else { return false }
        var offsetMinutes = 0
        if s[i] == 0x5A || s[i] == 0x7A {
            guard i + 1 == s.endIndex else { return false }
        } else if s[i] == 0x2B || s[i] == 0x2D {
            guard s.endIndex - i == 6, s[i + 3] == 0x3A, let oh = digits(s[(i + 1)..<(i + 3)]), let om = digits(s[(i + 4)..<(i + 6)]), oh <= 23, om <= 59 else {
                return false
            }
            offsetMinutes = (oh * 60 + om) * (s[i] == 0x2B ? 1 : -1)
        } else {
            return false
        }
        guard hour <= 23, minute <= 59, second <= 60 else { return false }
        if second == 60 {
            let utc = ((hour * 60 + minute - offsetMinutes) % 1440 + 1440) % 1440
            return utc == 23 * 60 + 59
        }
        return true
    }

    static func isDateTime(_ s: [UInt8]) -> Bool {
        guard s.count > 11, s[10] == 0x54 || s[10] == 0x74 else { return false }
        return isDate(s[0..<10]) && isTime(s[11...])
    }

    /// ISO 8601 durations as RFC 3339 appendix A writes them: `P1Y2M3DT4H5M6S`, `PT1M`, `P2W`.
    static func isDuration(_ s: [UInt8]) -> Bool {
        guard s.first == 0x50, s.count > 1 else { return false }
        var units: [UInt8] = []
        var inTime = false
        var i = 1
        var timeUnits: [UInt8] = []
        while i < s.count {
            if s[i] == 0x54 {
                guard !inTime else { return false }
                inTime = true
                i += 1
                continue
            }
            let start = i
            while i < s.count, s[i] >= 0x30, s[i] <= 0x39 { i += 1 }
            guard i > start, i < s.count else { return false }
            if inTime { timeUnits.append(s[i]) } else { units.append(s[i]) }
            i += 1
        }
        if inTime, timeUnits.isEmpty { return false }
        if units == [0x57] { return !inTime }  // weeks stand alone
        func contiguous(_ found: [UInt8], in order: [UInt8]) -> Bool {
            guard let first = found.first, let start = order.firstIndex(of: first) else { return found.isEmpty }
            return start + found.count <= order.count && Array(order[start..<(start + found.count)]) == found
        }
        guard contiguous(units, in: Array("YMD".utf8)), contiguous(timeUnits, in: Array("HMS".utf8)) else { return false }
        return !(units.isEmpty && timeUnits.isEmpty)
    }

    static func isHostname(_ s: ArraySlice<UInt8>) -> Bool {
        s.withUnsafeBufferPointer { isHostname($0) }
    }

    /// Labels of letters, digits and inner hyphens, at most 63 bytes each and 253 in all.
    static func isHostname(_ s: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !s.isEmpty, s.count <= 253 else { return false }
        let allowed = labelCharacters
        var start = 0
        while true {
            var end = start
            while end < s.count, allowed.contains(s[end]) { end += 1 }
            if end < s.count, s[end] != 0x2E { return false }
            guard end > start, end - start <= 63, s[start] != 0x2D, s[end - 1] != 0x2D else { return false }
            // "--" in the third and fourth places is reserved for IDNA A-labels ("xn--"), which must
            // decode from Punycode to a label IDNA2008 allows.
            if end - start >= 4, s[start + 2] == 0x2D, s[start + 3] == 0x2D {
                guard s[start] | 0x20 == 0x78, s[start + 1] | 0x20 == 0x6E,
                    let decoded = IDNALabel.decodePunycode(Array(s[(start + 4)..<end])[...]), IDNALabel.isValidULabel(decoded)
                else { return false }
            }
            if end == s.count { return true }
            start = end + 1
        }
    }

    /// Letters, digits and `-`.
    private static let labelCharacters = ASCIISet(
        (UInt8(ascii: "0")...UInt8(ascii: "9")).map { $0 } + (UInt8(ascii: "a")...UInt8(ascii: "z")).map { $0 }
            + (UInt8(ascii: "A")...UInt8(ascii: "Z")).map { $0 } + [UInt8(ascii: "-")])

    static func isAlphaNumeric(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
    }

    static func isHex(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)
    }

    static func isIPv4(_ s: ArraySlice<UInt8>) -> Bool {
        let parts = s.split(separator: 0x2E, omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        for part in parts {
            guard part.count <= 3, let value = digits(part), value <= 255 else { return false }
            if part.count > 1, part.first == 0x30 { return false }
        }
        return true
    }

    static func isIPv6(_ s: ArraySlice<UInt8>) -> Bool {
        guard !s.isEmpty, s.count <= 45 else { return false }
        let bytes = Array(s)
        // Split at the one "::" if present; each side is colon-separated groups with no empty group.
        var head = bytes[...]
        var tail: ArraySlice<UInt8> = []
        var compressed = false
        if let at = (0..<max(0, bytes.count - 1)).first(where: { bytes[$0] == 0x3A && bytes[$0 + 1] == 0x3A }) {
            compressed = true
            head = bytes[..<at]
            tail = bytes[(at + 2)...]
            if tail.starts(with: [0x3A]) { return false }
        }
        var groups = 0
        func count(_ side: ArraySlice<UInt8>, last: Bool) -> Bool {
            if side.isEmpty { return true }
            let parts = side.split(separator: 0x3A, omittingEmptySubsequences: false)
            for (i, part) in parts.enumerated() {
                if last, i == parts.count - 1, part.contains(0x2E) {
                    guard isIPv4(part) else { return false }
                    groups += 2
                    continue
                }
                guard !part.isEmpty, part.count <= 4, part.allSatisfy(isHex) else { return false }
                groups += 1
            }
            return true
        }
        guard count(head, last: !compressed), count(tail, last: true) else { return false }
        return compressed ? groups <= 7 : groups == 8
    }

    static func isUUID(_ s: [UInt8]) -> Bool {
        guard s.count == 36 else { return false }
        for (i, c) in s.enumerated() {
            if [8, 13, 18, 23].contains(i) {
                guard c == 0x2D else { return false }
            } else if !isHex(c) {
                return false
            }
        }
        return true
    }

    static func isJSONPointer(_ s: [UInt8]) -> Bool {
        if s.isEmpty { return true }
        guard s[0] == 0x2F else { return false }
        for (i, c) in s.enumerated() where c == 0x7E {
            guard i + 1 < s.count, s[i + 1] == 0x30 || s[i + 1] == 0x31 else { return false }
        }
        return true
    }

    /// RFC 5321 mailbox: dot-atom or quoted local part, `@`, a hostname or an address literal.
    static func isEmail(_ s: [UInt8]) -> Bool {
        guard let at = s.lastIndex(of: 0x40), at > 0, at < s.count - 1 else { return false }
        let local = s[..<at]
        let domain = s[(at + 1)...]
        if local.first == 0x22 {
            guard local.count >= 2, local.last == 0x22 else { return false }
            var escaped = false
            for c in local.dropFirst().dropLast() {
                if escaped { escaped = false; continue }
                if c == 0x5C { escaped = true; continue }
                if c == 0x22 || c < 0x20 || c == 0x7F { return false }
            }
            if escaped { return false }
        } else {
            guard local.count <= 64, local.first != 0x2E, local.last != 0x2E else { return false }
            var previousDot = false
            for c in local {
                if c == 0x2E {
                    if previousDot { return false }
                    previousDot = true
                    continue
                }
                previousDot = false
                guard isAlphaNumeric(c) || c >= 0x80 || "!#$%&'*+-/=?^_`{|}~".utf8.contains(c) else { return false }
            }
        }
        if domain.first == 0x5B {
            guard domain.last == 0x5D else { return false }
            let literal = domain.dropFirst().dropLast()
            let tag = Array("IPv6:".utf8)
            if literal.starts(with: tag) { return isIPv6(literal.dropFirst(tag.count)) }
            return isIPv4(literal)
        }
        return isHostname(domain)
    }
}

/// A `format` this validator asserts, read once when a schema is built.
enum StringFormat: String, Sendable, CaseIterable {
    case dateTime = "date-time"
    case date, time, duration, email, hostname, ipv4, ipv6, uri
    case uriReference = "uri-reference"
    case uuid, regex
    case jsonPointer = "json-pointer"
}
