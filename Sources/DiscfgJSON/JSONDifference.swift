/// One place where two JSON documents differ, named by JSON Pointer: a member or element
/// added, removed, or holding another value.
///
/// Objects are compared member by member (member order does not count) and arrays element
/// by element at the same index; where the two sides hold different kinds of value (a
/// string and an object, say), the place is one `changed` difference, not a difference
/// per member.
///
/// ```swift
/// let old = try JSONParser.parse(#"{"db": {"host": "db1", "port": 5432}}"#)
/// let new = try JSONParser.parse(#"{"db": {"host": "db2", "port": 5432}, "debug": true}"#)
/// JSONDifference.between(old, new)
/// // [changed /db/host "db1" → "db2", added /debug true]
/// ```
public struct JSONDifference: Sendable, Hashable, CustomStringConvertible {
    /// What happened at a place.
    public enum Kind: String, Sendable, Hashable {
        /// Present only in the new document.
        case added
        /// Present only in the old document.
        case removed
        /// Present in both, with different values.
        case changed
    }

    /// Where, in either document.
    public var pointer: JSONPointer
    /// What happened there.
    public var kind: Kind
    /// The old document's value there; nil when added.
    public var old: JSONValue?
    /// The new document's value there; nil when removed.
    public var new: JSONValue?

    /// A difference at `pointer`.
    public init(pointer: JSONPointer, kind: Kind, old: JSONValue?, new: JSONValue?) {
        self.pointer = pointer
        self.kind = kind
        self.old = old
        self.new = new
    }

    /// Every place where `new` differs from `old`, in the old document's order, each
    /// object's added members after its others; none when the two are equal as JSON
    /// (``JSONValue`` equality: `1 == 1.0`, member order aside).
    public static func between(_ old: JSONValue, _ new: JSONValue) -> [JSONDifference] {
        var differences: [JSONDifference] = []
        collect(old, new, at: .root, into: &differences)
        return differences
    }

    /// `/db/host: "db1" → "db2"`, `/debug: added true`, `/cache: removed {"ttl":60}`;
    /// values cut at 60 characters.
    public var description: String {
        let place = pointer.isRoot ? "(the whole value)" : pointer.description
        switch kind {
        case .added: return "\(place): added \(new.map(JSONSerializer.brief) ?? "")"
        case .removed: return "\(place): removed \(old.map(JSONSerializer.brief) ?? "")"
        case .changed: return "\(place): \(old.map(JSONSerializer.brief) ?? "") → \(new.map(JSONSerializer.brief) ?? "")"
        }
    }

    // Recursion is bounded by the parser's depth limit (512 levels by default), which
    // every value compared here went through.
    private static func collect(_ old: JSONValue, _ new: JSONValue, at pointer: JSONPointer, into differences: inout [JSONDifference]) {
        switch (old, new) {
        case (.object(let before), .object(let after)):
            for (name, value) in before {
                if let other = after[name] {
                    collect(value, other, at: pointer.appending(name), into: &differences)
                } else {
                    differences.append(JSONDifference(pointer: pointer.appending(name), kind: .removed, old: value, new: nil))
                }
            }
            for (name, value) in after where !before.contains(name) {
                differences.append(JSONDifference(pointer: pointer.appending(name), kind: .added, old: nil, new: value))
            }
        case (.array(let before), .array(let after)):
            let common = min(before.count, after.count)
            for index in 0..<common {
                collect(before[index], after[index], at: pointer.appending(String(index)), into: &differences)
            }
            for index in common..<before.count {
                differences.append(JSONDifference(pointer: pointer.appending(String(index)), kind: .removed, old: before[index], new: nil))
            }
            for index in common..<after.count {
                differences.append(JSONDifference(pointer: pointer.appending(String(index)), kind: .added, old: nil, new: after[index]))
            }
        default:
            if old != new {
                differences.append(JSONDifference(pointer: pointer, kind: .changed, old: old, new: new))
            }
        }
    }
}
