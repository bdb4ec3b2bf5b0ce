/// The keys whose paths lie in `[lower, upper)` in byte order: a prefix is one
/// (``KeyPrefix/range``); etcd's `key`/`range_end` intervals are others.
///
/// ```swift
/// let range = KeyRange(lower: "/a", upper: "/c")   // /a, /b/x, but not /c
/// ```
public struct KeyRange: Hashable, Sendable, CustomStringConvertible {
    /// The first path in the range (inclusive).
    public var lower: String
    /// The first path after the range (exclusive); nil for every path from `lower` on.
    public var upper: String?

    /// A range of paths.
    public init(lower: String, upper: String?) {
        self.lower = lower
        self.upper = upper
    }

    /// Every key.
    public static let all = KeyRange(lower: "/", upper: nil)

    /// Whether `key` lies in the range.
    public func contains(_ key: Key) -> Bool {
        !key.path.utf8.lexicographicallyPrecedes(lower.utf8) && (upper.map { key.path.utf8.lexicographicallyPrecedes($0.utf8) } ?? true)
    }

    /// Whether every key of `other` lies in this range.
    public func covers(_ other: KeyRange) -> Bool {
        guard !other.lower.utf8.lexicographicallyPrecedes(lower.utf8) else { return false }
        guard let upper else { return true }
        guard let otherUpper = other.upper else { return false }
        return !upper.utf8.lexicographicallyPrecedes(otherUpper.utf8)
    }

    /// The upper bound as stores scan it: past every key when there is none (keys start
    /// with `/`, and `0` is the byte after it).
    public var scanUpper: String { upper ?? "0" }

    /// The upper bound as a document writes it (`to`): nil when it lies past every key,
    /// as the root prefix's `0` does, which is no path a reader would take.
    public var upperPath: String? { upper == "0" ? nil : upper }

    /// Whether the range holds no path at all.
    public var isEmpty: Bool { upper.map { !lower.utf8.lexicographicallyPrecedes($0.utf8) } ?? false }

    public var description: String { "[\(lower), \(upper ?? "end"))" }
}

extension KeyPrefix {
    /// The keys under this prefix as a range.
    public var range: KeyRange { KeyRange(lower: path, upper: upperBound) }
}
