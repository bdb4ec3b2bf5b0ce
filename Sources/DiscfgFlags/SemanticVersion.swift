/// A semantic version (semver 2.0.0) and flagd's `sem_ver` operator.
///
/// `{"sem_ver": [version, op, version]}` with `op` one of `=`, `!=`, `<`, `<=`, `>`, `>=`,
/// `^` (same major) and `~` (same major and minor). As flagd's reference does, a leading `v`
/// or `V` is dropped and a missing minor or patch counts as 0 (`v1.2` is `1.2.0`); a version
/// that is not semver, or an unknown operator, gives null.
struct SemanticVersion: Sendable {
    var major: ArraySlice<UInt8>
    var minor: ArraySlice<UInt8>
    var patch: ArraySlice<UInt8>
    var prerelease: [ArraySlice<UInt8>]

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
        var bytes = Array(text.utf8)[...]
        if let first = bytes.first, first == UInt8(ascii: "v") || first == UInt8(ascii: "V") { bytes = bytes.dropFirst() }
        self.init(bytes, padded: true)
    }

    /// Reads `MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]` exactly as semver 2.0.0 spells it.
    init?(strict text: String) {
        self.init(Array(text.utf8)[...], padded: false)
    }

    /// Reads the version's bytes; `padded` counts a missing minor or patch as 0.
    private init?(_ bytes: ArraySlice<UInt8>, padded: Bool) {
        var rest = bytes
        if let plus = rest.firstIndex(of: UInt8(ascii: "+")) {
            let build = rest[(plus + 1)...]
            rest = rest[..<plus]
            let parts = build.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            guard parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(Self.isIdentifierByte) }) else { return nil }
        }
        var prerelease: ArraySlice<UInt8>?
        if let dash = rest.firstIndex(of: UInt8(ascii: "-")) {
            prerelease = rest[(dash + 1)...]
            rest = rest[..<dash]
        }
        // MAJOR.MINOR.PATCH, read in place; padded, a missing minor or patch is `0`.
        var parts = (rest[rest.startIndex..<rest.startIndex], Self.zero, Self.zero)
        var count = 0
        var start = rest.startIndex
        for index in rest.indices where rest[index] == UInt8(ascii: ".") {
            guard count < 2 else { return nil }
            if count == 0 { parts.0 = rest[start..<index] } else { parts.1 = rest[start..<index] }
            count += 1
            start = index + 1
        }
        switch count {
        case 0: parts.0 = rest[start...]
        case 1: parts.1 = rest[start...]
        default: parts.2 = rest[start...]
        }
        guard count == 2 || padded, Self.isNumber(parts.0), Self.isNumber(parts.1), Self.isNumber(parts.2) else { return nil }
        (major, minor, patch) = parts
        self.prerelease = []
        if let prerelease {
            for part in prerelease.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
                guard !part.isEmpty, part.allSatisfy(Self.isIdentifierByte) else { return nil }
                if part.allSatisfy(Self.isDigit), !Self.isNumber(part) { return nil }
                self.prerelease.append(part)
            }
        }
    }

    /// `0`, for a missing minor or patch.
    private static let zero: ArraySlice<UInt8> = [UInt8(ascii: "0")][...]

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7a) || byte == UInt8(ascii: "-")
    }

    /// Digits with no leading zero (or `0`).
    private static func isNumber(_ part: ArraySlice<UInt8>) -> Bool {
        !part.isEmpty && part.allSatisfy(isDigit) && (part.count == 1 || part.first != UInt8(ascii: "0"))
    }

    /// -1, 0 or 1; build metadata does not count, a prerelease comes before its release.
    func compare(_ other: SemanticVersion) -> Int {
        var order = Self.compareNumbers(major, other.major)
        if order == 0 { order = Self.compareNumbers(minor, other.minor) }
        if order == 0 { order = Self.compareNumbers(patch, other.patch) }
        if order != 0 { return order }
        if prerelease.elementsEqual(other.prerelease, by: { $0.elementsEqual($1) }) { return 0 }
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
    private static func compareIdentifiers(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Int {
        let aNumeric = a.allSatisfy(isDigit), bNumeric = b.allSatisfy(isDigit)
        switch (aNumeric, bNumeric) {
        case (true, true): return compareNumbers(a, b)
        case (true, false): return -1
        case (false, true): return 1
        case (false, false): return a.elementsEqual(b) ? 0 : (a.lexicographicallyPrecedes(b) ? -1 : 1)
        }
    }
}
