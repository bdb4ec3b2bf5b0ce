/// A JSON document in memory, parsed by ``JSONParser`` and written by ``JSONSerializer``.
///
/// Numbers keep their exact decimal value (``JSONNumber``); objects keep member order.
/// Equality is JSON equality: `1 == 1.0`, objects compare regardless of member order. Equality
/// walks with an explicit stack and hashing stops at a fixed depth, so neither can overflow the
/// call stack on a deeply nested value.
///
/// ```swift
/// let value = try JSONParser.parse(Array(#"{"port": 8080}"#.utf8))
/// value["port"]   // .number(8080)
/// ```
public enum JSONValue: Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, exact as written.
    case number(JSONNumber)
    /// A string of Unicode scalars (lone surrogates are refused by the parser).
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, members in order.
    case object(JSONObject)

    /// The member `key` of an object, or nil for anything else.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The JSON type name as JSON Schema spells it (`integer` for numbers with no fraction).
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number(let n): n.isInteger ? "integer" : "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

extension JSONValue: Hashable {
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.string(let x), .string(let y)): return x.isExactly(y)
        case (.array, .array), (.object, .object): break
        default: return false
        }
        var pending: [(JSONValue, JSONValue)] = [(lhs, rhs)]
        while let (a, b) = pending.popLast() {
            switch (a, b) {
            case (.null, .null): continue
            case (.bool(let x), .bool(let y)): if x != y { return false }
            case (.number(let x), .number(let y)): if x != y { return false }
            case (.string(let x), .string(let y)):
                // Scalar by scalar: "é" and "e\u{301}" are different JSON strings, though Swift calls them equal.
                if !x.isExactly(y) { return false }
            case (.array(let x), .array(let y)):
                guard x.count == y.count else { return false }
                for i in x.indices { pending.append((x[i], y[i])) }
            case (.object(let x), .object(let y)):
                guard x.count == y.count else { return false }
                for (key, value) in x {
                    guard let other = y[key] else { return false }
                    pending.append((value, other))
                }
            default: return false
            }
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        hash(into: &hasher, depth: 0)
    }

    /// Hashes to a bounded depth: equal values still hash equally, deeper parts only weaken the hash.
    private func hash(into hasher: inout Hasher, depth: Int) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let b): hasher.combine(b)
        case .number(let n): hasher.combine(n)
        case .string(let s): hasher.combine(s)
        case .array(let items):
            hasher.combine(items.count)
            if depth < 16 { for item in items { item.hash(into: &hasher, depth: depth + 1) } }
        case .object(let object):
            hasher.combine(object.count)
            guard depth < 16 else { return }
            // Order-independent: combine per-member hashes commutatively.
            var sum = 0
            for (key, value) in object {
                var member = Hasher()
                member.combine(key)
                value.hash(into: &member, depth: depth + 1)
                sum &+= member.finalize()
            }
            hasher.combine(sum)
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(JSONNumber(value)) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements.map { (key: $0.0, value: $0.1) }))
    }
}
