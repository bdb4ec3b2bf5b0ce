/// Any field's name, to find the fields a record does not define.
private struct AnyFieldName: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension Decoder {
    /// The object's fields as `Keys`, refusing a field that is not one of them and a field
    /// given as `null`, so nothing a stored record says is ignored or guessed.
    /// - Throws: `invalidArgument` with field `path` naming the unknown field.
    func strictFields<Keys: CodingKey & CaseIterable>(_ keys: Keys.Type, of what: String, at path: String) throws -> KeyedDecodingContainer<Keys> {
        let any: KeyedDecodingContainer<AnyFieldName>
        do {
            any = try container(keyedBy: AnyFieldName.self)
        } catch {
            throw DiscfgError.invalid(path, "\(what) must be a JSON object")
        }
        for field in any.allKeys {
            guard Keys(stringValue: field.stringValue) != nil else {
                let known = Keys.allCases.map(\.stringValue).joined(separator: ", ")
                throw DiscfgError.invalid(path, "\(what) has no field \"\(field.stringValue.debugEscaped)\"; its fields are \(known)")
            }
            if (try? any.decodeNil(forKey: field)) == true {
                throw DiscfgError.invalid("\(path).\(field.stringValue)", "\(path).\(field.stringValue) is null; leave it out instead")
            }
        }
        return try container(keyedBy: Keys.self)
    }
}

extension KeyedDecodingContainer {
    /// The field `key`, which must be there and of type `T`.
    /// - Throws: `invalidArgument` with field `path.key` saying it is missing or of the wrong type.
    func required<T: Decodable>(_ type: T.Type, _ key: Key, at path: String) throws -> T {
        guard contains(key) else {
            throw DiscfgError.invalid("\(path).\(key.stringValue)", "\(path).\(key.stringValue) is missing")
        }
        return try decodeField(type, key, at: path)
    }

    /// The field `key` when it is there, of type `T`.
    func optional<T: Decodable>(_ type: T.Type, _ key: Key, at path: String) throws -> T? {
        contains(key) ? try decodeField(type, key, at: path) : nil
    }

    private func decodeField<T: Decodable>(_ type: T.Type, _ key: Key, at path: String) throws -> T {
        do {
            return try decode(type, forKey: key)
        } catch let error as DiscfgError {
            throw error
        } catch {
            throw DiscfgError.invalid("\(path).\(key.stringValue)", "\(path).\(key.stringValue) is not \(Self.kind(of: type))")
        }
    }

    private static func kind<T>(of type: T.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type, is UInt64.Type, is Revision.Type: "a whole number in range"
        case is [String].Type: "a list of strings"
        case is DeploymentStrategy.Growth.Type: "linear or exponential"
        default: "of the right form (\(T.self))"
        }
    }
}
