import Foundation

/// One DynamoDB attribute value in the service's JSON form (`{"S": "text"}`, `{"N": "42"}`,
/// `{"B": "<base64>"}` …).
///
/// ```swift
/// let item: Attributes = ["pk": .s("myapp"), "revision": .number(UInt64(7))]
/// ```
public enum AttributeValue: Hashable, Sendable, Codable {
    /// A string.
    case s(String)
    /// A number, kept as the decimal text DynamoDB sends.
    case n(String)
    /// Binary data (base64 in JSON).
    case b(Data)
    /// A boolean.
    case bool(Bool)
    /// A null.
    case null
    /// A list.
    case l([AttributeValue])
    /// A map.
    case m([String: AttributeValue])
    /// A string set.
    case ss([String])
    /// A number set.
    case ns([String])

    private enum CodingKeys: String, CodingKey {
        case s = "S", n = "N", b = "B", bool = "BOOL", null = "NULL", l = "L", m = "M", ss = "SS", ns = "NS"
    }

    /// A number attribute from an unsigned integer.
    public static func number(_ value: UInt64) -> AttributeValue { .n(String(value)) }
    /// A number attribute from a signed integer.
    public static func number(_ value: Int64) -> AttributeValue { .n(String(value)) }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let key = container.allKeys.first else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "empty attribute value"))
        }
        switch key {
        case .s: self = .s(try container.decode(String.self, forKey: .s))
        case .n: self = .n(try container.decode(String.self, forKey: .n))
        case .b: self = .b(try container.decode(Data.self, forKey: .b))
        case .bool: self = .bool(try container.decode(Bool.self, forKey: .bool))
        case .null: self = .null
        case .l: self = .l(try container.decode([AttributeValue].self, forKey: .l))
        case .m: self = .m(try container.decode([String: AttributeValue].self, forKey: .m))
        case .ss: self = .ss(try container.decode([String].self, forKey: .ss))
        case .ns: self = .ns(try container.decode([String].self, forKey: .ns))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .s(let value): try container.encode(value, forKey: .s)
        case .n(let value): try container.encode(value, forKey: .n)
        case .b(let value): try container.encode(value.base64EncodedString(), forKey: .b)
        case .bool(let value): try container.encode(value, forKey: .bool)
        case .null: try container.encode(true, forKey: .null)
        case .l(let value): try container.encode(value, forKey: .l)
        case .m(let value): try container.encode(value, forKey: .m)
        case .ss(let value): try container.encode(value, forKey: .ss)
        case .ns(let value): try container.encode(value, forKey: .ns)
        }
    }

    /// The text of a string attribute.
    public var string: String? {
        if case .s(let value) = self { value } else { nil }
    }

    /// The bytes of a binary attribute.
    public var data: Data? {
        if case .b(let value) = self { value } else { nil }
    }

    /// A number attribute as an unsigned integer.
    public var uint64: UInt64? {
        if case .n(let value) = self { UInt64(value) } else { nil }
    }

    /// A number attribute as a signed integer.
    public var int64: Int64? {
        if case .n(let value) = self { Int64(value) } else { nil }
    }

    /// The value of a boolean attribute.
    public var boolValue: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }

    /// The members of a number set, as unsigned integers.
    public var uint64Set: [UInt64] {
        if case .ns(let values) = self { values.compactMap(UInt64.init) } else { [] }
    }

    /// Roughly how many bytes DynamoDB counts for this value (for item-size and capacity
    /// estimates; see "Item sizes and formats" in the DynamoDB developer guide).
    public var estimatedSize: Int {
        switch self {
        case .s(let value): value.utf8.count
        case .n(let value): (value.count + 1) / 2 + 1
        case .b(let value): value.count
        case .bool, .null: 1
        case .l(let values): 3 + values.reduce(0) { $0 + 1 + $1.estimatedSize }
        case .m(let values): 3 + values.reduce(0) { $0 + 1 + $1.key.utf8.count + $1.value.estimatedSize }
        case .ss(let values): values.reduce(0) { $0 + $1.utf8.count }
        case .ns(let values): values.reduce(0) { $0 + ($1.count + 1) / 2 + 1 }
        }
    }
}

/// A DynamoDB item or key: attribute names to values.
public typealias Attributes = [String: AttributeValue]

extension Dictionary where Key == String, Value == AttributeValue {
    /// Roughly how many bytes DynamoDB counts for this item: names plus values.
    public var estimatedSize: Int {
        reduce(0) { $0 + $1.key.utf8.count + $1.value.estimatedSize }
    }
}
