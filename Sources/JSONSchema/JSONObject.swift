#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A JSON object: members in document order, looked up by key in constant time.
///
/// Keys are unique: the parser rejects a duplicate key by default (see
/// ``JSONParser/Options/duplicateKeys``). Two objects are equal when they hold the same keys
/// with equal values, whatever the order.
public struct JSONObject: Sendable, Hashable, Sequence {
    /// The members in the order they were written or inserted.
    public private(set) var members: [(key: String, value: JSONValue)]
    private var index: [ExactKey: Int]

    /// An empty object.
    public init() {
        members = []
        index = [:]
    }

    /// An object from members; a later duplicate key replaces the earlier value in its place.
    public init(_ members: [(key: String, value: JSONValue)]) {
        self.init()
        for member in members { self[member.key] = member.value }
    }

    /// The number of members.
    public var count: Int { members.count }

    /// True when the object has no members.
    public var isEmpty: Bool { members.isEmpty }

    /// The keys in order.
    public var keys: [String] { members.map(\.key) }

    /// The value of `key`, or nil. Setting nil removes the member.
    public subscript(key: String) -> JSONValue? {
        get { index[ExactKey(key)].map { members[$0].value } }
        set {
            if let newValue {
                if let position = index[ExactKey(key)] {
                    members[position].value = newValue
                } else {
                    index[ExactKey(key)] = members.count
                    members.append((key, newValue))
                }
            } else if let position = index.removeValue(forKey: ExactKey(key)) {
                members.remove(at: position)
                for i in position..<members.count { index[ExactKey(members[i].key)] = i }
            }
        }
    }

    /// Whether the object has a member named `key`.
    public func contains(_ key: String) -> Bool { index[ExactKey(key)] != nil }

    public func makeIterator() -> IndexingIterator<[(key: String, value: JSONValue)]> {
        members.makeIterator()
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
struct ExactKey: Hashable, Sendable {
    let string: String

    init(_ string: String) {
        self.string = string
    }

    static func == (lhs: ExactKey, rhs: ExactKey) -> Bool {
        lhs.string.isExactly(rhs.string)
    }

    func hash(into hasher: inout Hasher) {
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
