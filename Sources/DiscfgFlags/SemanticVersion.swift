/// A semantic version (semver 2.0.0) and flagd's `sem_ver` operator.
///
/// `{"sem_ver": [version, op, version]}` with `op` one of `=`, `!=`, `<`, `<=`, `>`, `>=`,
/// `^` (same major) and `~` (same major and minor). As flagd's reference does, a leading `v`
/// or `V` is dropped and a missing minor or patch counts as 0 (`v1.2` is `1.2.0`); a version
/// that is not semver, or an unknown operator, gives null.
struct SemanticVersion: Sendable {
    var major: [UInt8]
    var minor: [UInt8]
    var patch: [UInt8]
    var prerelease: [String]

    static func evaluate(_ args: [LogicValue]) -> LogicValue {
        guard args.count == 3, let lhs = SemanticVersion(loose: args[0].pythonText),
            let rhs = SemanticVersion(loose: args[2].pythonText), case .string(let op) = args[1]
        else { return .null }
        let order = lhs.compare(rhs)
        switch op {
        case "=": return .bool(order == 0)
        case "!=": return .bool(order != 0)
        case "<": return .bool(order < 0)
        case "<=": return .bool(order <= 0)
        case ">": return .bool(order > 0)
        case ">=": return .bool(order >= 0)
        case "^": return .bool(lhs.major == rhs.major)
        case "~": return .bool(lhs.major == rhs.major && lhs.minor == rhs.minor)
        default: return .null
        }
    }

    /// Reads a version as flagd's reference does: `v` prefix dropped, minor and patch padded.
    init?(loose text: String) {
        var version = Substring(text)
        if version.hasPrefix("v") || version.hasPrefix("V") { version = version.dropFirst() }
        let numericEnd = version.firstIndex { $0 == "-" || $0 == "+" } ?? version.endIndex
        let numeric = version[..<numericEnd]
        let dots = numeric.filter { $0 == "." }.count
        let padded = dots < 2 ? String(numeric) + String(repeating: ".0", count: 2 - dots) + version[numericEnd...] : String(version)
        self.init(strict: padded)
    }

    /// Reads `MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]` exactly as semver 2.0.0 spells it.
    init?(strict text: String) {
        var rest = Substring(text)
        var build: Substring?
        if let plus = rest.firstIndex(of: "+") {
            build = rest[rest.index(after: plus)...]
            rest = rest[..<plus]
        }
        var prerelease: Substring?
        if let dash = rest.firstIndex(of: "-") {
            prerelease = rest[rest.index(after: dash)...]
            rest = rest[..<dash]
        }
        let core = rest.split(separator: ".", omittingEmptySubsequences: false)
        guard core.count == 3, core.allSatisfy(Self.isNumber) else { return nil }
        major = Array(core[0].utf8)
        minor = Array(core[1].utf8)
        patch = Array(core[2].utf8)
        if let build {
            let parts = build.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(Self.isIdentifierByte) }) else { return nil }
        }
        self.prerelease = []
        if let prerelease {
            let parts = prerelease.split(separator: ".", omittingEmptySubsequences: false)
            for part in parts {
                guard !part.isEmpty, part.utf8.allSatisfy(Self.isIdentifierByte) else { return nil }
                if part.utf8.allSatisfy(Self.isDigit), !Self.isNumber(part) { return nil }
                self.prerelease.append(String(part))
            }
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7a) || byte == UInt8(ascii: "-")
    }

    /// Digits with no leading zero (or `0`).
    private static func isNumber(_ part: Substring) -> Bool {
        !part.isEmpty && part.utf8.allSatisfy(isDigit) && (part == "0" || part.first != "0")
    }

    /// -1, 0 or 1; build metadata does not count, a prerelease comes before its release.
    func compare(_ other: SemanticVersion) -> Int {
        for (a, b) in [(major, other.major), (minor, other.minor), (patch, other.patch)] {
            let order = Self.compareNumbers(a[...], b[...])
            if order != 0 { return order }
        }
        if prerelease == other.prerelease { return 0 }
        if prerelease.isEmpty { return 1 }
        if other.prerelease.isEmpty { return -1 }
        for (a, b) in zip(prerelease, other.prerelease) {
            let order = Self.compareIdentifiers(a, b)
            if order != 0 { return order }
        }
        return prerelease.count == other.prerelease.count ? 0 : (prerelease.count < other.prerelease.count ? -1 : 1)
    }

    private static func compareNumbers(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Int {
        let x = a.drop { $0 == 0x30 }, y = b.drop { $0 == 0x30 }
        if x.count != y.count { return x.count < y.count ? -1 : 1 }
        return x.elementsEqual(y) ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
    }

    /// Numeric identifiers come before alphanumeric ones and compare by value; others by ASCII.
    private static func compareIdentifiers(_ a: String, _ b: String) -> Int {
        let aNumeric = a.utf8.allSatisfy(isDigit), bNumeric = b.utf8.allSatisfy(isDigit)
        switch (aNumeric, bNumeric) {
        case (true, true): return compareNumbers(Array(a.utf8)[...], Array(b.utf8)[...])
        case (true, false): return -1
        case (false, true): return 1
        case (false, false): return a == b ? 0 : (Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)) ? -1 : 1)
        }
    }
}
