/// One HTTP header as it appears on the wire, kept in order so duplicate names survive signing.
///
/// discfg signs requests before handing them to the transport, and SigV4 must see every
/// occurrence of a repeated header in its original order; a dictionary would lose that.
public struct HTTPHeaderField: Sendable, Hashable {
    /// The header name as given; SigV4 compares names case-insensitively.
    public var name: String
    /// The raw header value, possibly with surrounding or folded whitespace.
    public var value: String

    /// Creates a header field.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

extension Array where Element == HTTPHeaderField {
    /// The first value for `name`, compared case-insensitively, because HTTP names are case-insensitive.
    public func firstValue(named name: String) -> String? {
        let lowered = name.lowercased()
        return first { $0.name.lowercased() == lowered }?.value
    }

    /// Removes every field called `name` (case-insensitively) so a fresh value can replace stale ones.
    public mutating func removeAll(named name: String) {
        let lowered = name.lowercased()
        removeAll { $0.name.lowercased() == lowered }
    }

    /// Replaces every field called `name` with a single field carrying `value`.
    public mutating func replace(named name: String, with value: String) {
        removeAll(named: name)
        append(HTTPHeaderField(name: name, value: value))
    }
}
