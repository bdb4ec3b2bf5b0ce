/// A point in a configuration's total order of changes.
///
/// Every successful change moves a config's revision up by one, starting from 0 for a
/// new config. Because the order is total, "everything after revision R" is exact:
/// watching from a revision never skips or repeats an event.
public struct Revision: RawRepresentable, Hashable, Comparable, Sendable, Codable,
    ExpressibleByIntegerLiteral, CustomStringConvertible
{
    /// The revision of a config that has never changed.
    public static let zero = Revision(0)

    public var rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }
    /// Creates a revision from its number.
    public init(_ value: UInt64) { self.rawValue = value }
    public init(integerLiteral value: UInt64) { self.rawValue = value }

    /// The revision after this one.
    public var next: Revision { Revision(rawValue + 1) }

    public var description: String { String(rawValue) }

    public static func < (lhs: Revision, rhs: Revision) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(UInt64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
