#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A JSON object: members in document order, looked up by key in constant time (a small
/// object, of at most ``linearLimit`` slots, by comparing its few keys, which costs less than
/// hashing one; a larger one through an index of its keys).
///
/// Keys are unique: the parser rejects a duplicate key by default (see
/// ``JSONParser/Options/duplicateKeys``). Two objects are equal when they hold the same keys
/// with equal values, whatever the order.
///
/// Removing a member costs constant time (amortized): it leaves a gap that later members do not
/// shift into, and the gaps are closed in one pass once they are half the slots. Removing the
/// members one by one from the front of a large object (a JSON Patch can ask for that) is
/// therefore linear, not quadratic.
public struct JSONObject: Sendable, Hashable, Sequence {
    /// One slot per member in order; nil where a member was removed.
    private var slots: [(key: String, value: JSONValue)?]
    /// Where each key's slot is, once the object has had more than ``linearLimit`` slots.
    private var index: [ExactKey: Int]
    /// Whether ``index`` is kept.
    private var indexed: Bool
    /// The nil slots.
    private var gaps: Int

    /// An empty object.
    public init() {
        slots = []
        index = [:]
        indexed = false
        gaps = 0
    }

    /// The most slots an object keeps without an index.
    static let linearLimit = 8

    /// The slot of `key`, or nil.
    private func slot(of key: String) -> Int? {
        if indexed { return index[ExactKey(key)] }
        for position in slots.indices {
            if let member = slots[position], member.key.isExactly(key) { return position }
        }
        return nil
    }

    /// Starts keeping the index: the object has grown past ``linearLimit`` slots.
    private mutating func buildIndex() {
        index.reserveCapacity(slots.count * 2)
        for (position, slot) in slots.enumerated() {
            if let slot { index[ExactKey(slot.key)] = position }
        }
        indexed = true
    }

    /// An object from members; a later duplicate key replaces the earlier value in its place.
    public init(_ members: [(key: String, value: JSONValue)]) {
        self.init()
        for member in members { self[member.key] = member.value }
    }

    /// The members in the order they were written or inserted.
    public var members: [(key: String, value: JSONValue)] {
        gaps == 0 ? slots.map { $0! } : slots.compactMap { $0 }
    }

    /// The number of members.
    public var count: Int { slots.count - gaps }

    /// True when the object has no members.
    public var isEmpty: Bool { count == 0 }

    /// The keys in order.
    public var keys: [String] { map(\.key) }

    /// The value of `key`, or nil. Setting nil removes the member.
    public subscript(key: String) -> JSONValue? {
        get { slot(of: key).map { slots[$0]!.value } }
        set {
            if let newValue {
                updateValue(newValue, forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// Whether the object has a member named `key`.
    public func contains(_ key: String) -> Bool { slot(of: key) != nil }

    /// Sets the member `key` to `value` and returns its previous value, or nil when it was new.
    ///
    /// A member that exists keeps its place; a new one is appended.
    @discardableResult
    public mutating func updateValue(_ value: JSONValue, forKey key: String) -> JSONValue? {
        let end = slots.count
        guard indexed else {
            if let position = slot(of: key) { return exchangeValue(at: position, with: value) }
            slots.append((key, value))
            if slots.count > Self.linearLimit { buildIndex() }
            return nil
        }
        // One look into the index: a new key is entered at the end's position as it is found absent.
        let position = Self.claim(&index[ExactKey(key), default: end])
        guard position == end else { return exchangeValue(at: position, with: value) }
        slots.append((key, value))
        return nil
    }

    private static func claim(_ position: inout Int) -> Int { position }

    /// Removes the member `key` and returns its value, or nil when there was none; the others keep their order.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        guard let position = indexed ? index.removeValue(forKey: ExactKey(key)) : slot(of: key) else { return nil }
        let value = slots[position]!.value
        slots[position] = nil
        gaps += 1
        if gaps == slots.count {
            slots.removeAll(keepingCapacity: true)
            gaps = 0
        } else if gaps > 16, gaps * 2 > slots.count {
            closeGaps()
        }
        return value
    }

    /// Where the member `key` is (a position to pass to ``exchangeValue(at:with:)``), or nil.
    ///
    /// Positions stay valid until a member is removed.
    func position(forKey key: String) -> Int? { slot(of: key) }

    /// The member at `position` (from ``position(forKey:)``).
    func member(at position: Int) -> (key: String, value: JSONValue) { slots[position]! }

    /// Puts `value` in the member at `position` and returns the value that was there.
    ///
    /// Taking a member's value out (exchanging it for null) and putting it back after editing lets
    /// callers change nested values in place: the taken value is then the only reference to its storage.
    mutating func exchangeValue(at position: Int, with value: JSONValue) -> JSONValue {
        var value = value
        swap(&slots[position]!.value, &value)
        return value
    }

    /// Moves the members down over the gaps and renumbers the index.
    private mutating func closeGaps() {
        slots.removeAll { $0 == nil }
        if indexed {
            for (position, slot) in slots.enumerated() { index[ExactKey(slot!.key)] = position }
        }
        gaps = 0
    }

    public func makeIterator() -> Iterator {
        Iterator(slots: slots.makeIterator())
    }

    /// The members in order.
    public struct Iterator: IteratorProtocol {
        var slots: IndexingIterator<[(key: String, value: JSONValue)?]>

        public mutating func next() -> (key: String, value: JSONValue)? {
            while let slot = slots.next() {
                if let member = slot { return member }
            }
            return nil
        }
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        JSONValue.object(lhs) == JSONValue.object(rhs)
    }

    public func hash(into hasher: inout Hasher) {
        JSONValue.object(self).hash(into: &hasher)
    }
}

/// A key compared scalar by scalar: JSON keys `"é"` and `"e\u0301"` are different members, though
/// Swift's `String` equality (canonical equivalence) would call them one.
package struct ExactKey: Hashable, Sendable {
    let string: String

    package init(_ string: String) {
        self.string = string
    }

    package static func == (lhs: ExactKey, rhs: ExactKey) -> Bool {
        lhs.string.isExactly(rhs.string)
    }

    package func hash(into hasher: inout Hasher) {
        var copy = string
        copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

extension String {
    /// Equality of the UTF-8 bytes (no canonical equivalence), on contiguous storage.
    func isExactly(_ other: String) -> Bool {
        var lhs = self
        var rhs = other
        return lhs.withUTF8 { a in
            rhs.withUTF8 { b in a.count == b.count && (a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0) }
        }
    }
}
