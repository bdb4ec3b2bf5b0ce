/// `JSONValue` inside documents read and written with `Codable` (a patch inside a
/// transaction's JSON, say). Numbers travel as the coder gives them: integers up to 64 bits
/// exactly, others as `Double`; parse with ``JSONParser`` where every digit matters.
extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let integer = try? container.decode(Int64.self), let number = JSONNumber(String(integer)) {
            self = .number(number)
        } else if let integer = try? container.decode(UInt64.self), let number = JSONNumber(String(integer)) {
            self = .number(number)
        } else if let double = try? container.decode(Double.self) {
            guard double.isFinite, let number = JSONNumber(Self.text(double)) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(double) is not a JSON number")
            }
            self = .number(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            let object = try container.decode([String: JSONValue].self)
            self = .object(JSONObject(object.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { ($0.key, $0.value) }))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        if case .object(let object) = self {
            var members = encoder.container(keyedBy: MemberName.self)
            for (key, value) in object { try members.encode(value, forKey: MemberName(key)) }
            return
        }
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let bool): try container.encode(bool)
        case .number(let number):
            if let integer = Int64(number.text) {
                try container.encode(integer)
            } else if let integer = UInt64(number.text) {
                try container.encode(integer)
            } else {
                try container.encode(number.doubleValue)
            }
        case .string(let string): try container.encode(string)
        case .array(let array): try container.encode(array)
        case .object: break
        }
    }

    /// A double as JSON number text ("1e-05" style exponents are valid JSON).
    private static func text(_ double: Double) -> String {
        let text = "\(double)"
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }
}

private struct MemberName: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
