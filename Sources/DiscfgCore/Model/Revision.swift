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
    /// The largest revision any store can hold (SQLite's and DynamoDB's integers are
    /// signed 64-bit): revisions read from outside are refused above it, and a config
    /// at it takes no more changes.
    public static let max = Revision(UInt64(Int64.max))

    public var rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }
    /// Creates a revision from its number.
    public init(_ value: UInt64) { self.rawValue = value }
    public init(integerLiteral value: UInt64) { self.rawValue = value }

    /// The revision after this one, staying at ``max`` rather than passing it: "from
    /// the revision after `max`" asks for nothing, as "from `max`" does.
    public var next: Revision { self < .max ? Revision(rawValue + 1) : self }

    /// The revision before this one, or zero.
    public var previous: Revision { rawValue > 0 ? Revision(rawValue - 1) : .zero }

    /// The revision as the signed 64-bit integer stores keep and the API reads, clamped
    /// to ``max``: every revision past it asks for the same nothing.
    public var storageValue: Int64 { Int64(clamping: rawValue) }

    /// The revision after this one for a new change.
    /// - Throws: `invalidArgument` when the config has reached ``max``.
    public func successor() throws -> Revision {
        guard self < .max else {
            throw DiscfgError.invalid("revision", "the config has reached the largest revision, \(Revision.max); it takes no more changes")
        }
        return Revision(rawValue + 1)
    }

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
