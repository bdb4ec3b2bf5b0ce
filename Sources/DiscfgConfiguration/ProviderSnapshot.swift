import Configuration
import DiscfgCore
import DiscfgJSON
import Foundation

/// The keys of a config (under the provider's prefix) at one revision, as swift-configuration
/// reads them.
struct ProviderSnapshot: Configuration.ConfigSnapshot {
    /// One key's value: its bytes, opened when it was a secret, or why it cannot be read.
    enum Entry: Equatable, Sendable {
        /// The value's bytes; and, when the provider serves JSON members, the value parsed
        /// once when it is a JSON object or array (nil for any other value).
        case value(Data, isSecret: Bool, members: JSONValue? = nil)
        /// A secret that would not open (wrong key, tampered, no permission): reading it
        /// throws this error rather than passing on a value that is not the one set.
        case unreadable(DiscfgError)
    }

    let providerName: String
    let prefix: KeyPrefix
    let decoding: ValueDecoding
    /// Whether members of JSON values are configuration keys too (``JSONMembers``).
    let jsonMembers: Bool
    var revision: Revision
    var entries: [Key: Entry]

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        let (encoded, discfgKey) = prefix.location(of: key)
        if let discfgKey, let entry = entries[discfgKey] {
            switch entry {
            case .unreadable(let error):
                throw error
            case .value(let data, let isSecret, _):
                let content = try decoding.content(of: data, as: type, key: encoded, isSecret: isSecret)
                return LookupResult(encodedKey: encoded, value: ConfigValue(content, isSecret: isSecret))
            }
        }
        if jsonMembers, let found = try member(at: key) {
            let content = try decoding.content(of: JSONMembers.text(of: found.value), as: type, key: encoded, isSecret: found.isSecret)
            return LookupResult(encodedKey: encoded, value: ConfigValue(content, isSecret: found.isSecret))
        }
        return LookupResult(encodedKey: encoded, value: nil)
    }

    /// The member of a JSON value that `key` names: in the nearest key above it that holds
    /// one, and whether that key is secret. A JSON `null` is no value.
    private func member(at key: AbsoluteConfigKey) throws -> (value: JSONValue, isSecret: Bool)? {
        for (discfgKey, pointer) in JSONMembers.holders(of: key, under: prefix) {
            switch entries[discfgKey] {
            case .unreadable(let error)?:
                throw error
            case .value(_, let isSecret, let document?)?:
                guard let member = pointer.resolve(in: document) else { continue }
                return member == .null ? nil : (member, isSecret)
            case .value(_, _, nil)?, nil:
                continue
            }
        }
        return nil
    }
}

/// Members of JSON values as configuration keys: with them, under prefix `/app`, the key
/// `/app/settings` holding `{"db": {"port": 5433}}` gives `settings.db.port` = 5433, as
/// if `/app/settings/db/port` held `5433`.
///
/// A key that exists wins over a member at the same path; otherwise the nearest key above
/// the path whose value has that member gives it. Array elements are named by their
/// index (`servers.0.host`). A member reads as the type asked for, like a value: a string
/// as its text, a number as written, `true`/`false`, and an array or object as its JSON.
enum JSONMembers {
    /// The keys that may hold the member `key` names, nearest first, each with the pointer
    /// to the member inside its value.
    static func holders(of key: AbsoluteConfigKey, under prefix: KeyPrefix) -> [(key: Key, pointer: JSONPointer)] {
        let components = key.components
        var holders: [(key: Key, pointer: JSONPointer)] = []
        // The first component must name a key; the last is at least one member deep.
        var count = components.count - 1
        while count > 0 {
            let head = components[..<count]
            if !head.contains(where: { $0.isEmpty || $0.contains("/") }), let holder = try? Key(prefix.path + head.joined(separator: "/")) {
                holders.append((holder, JSONPointer(tokens: Array(components[count...]))))
            }
            count -= 1
        }
        return holders
    }

    /// The parsed value of a key whose members may be read: a JSON object or array.
    static func document(of value: Data) -> JSONValue? {
        let whitespace: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
        guard let first = value.first(where: { !whitespace.contains($0) }), first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else {
            return nil
        }
        return try? JSONParser.parse(Array(value))
    }

    /// A member as the bytes a value holding it would have: a string's text, and any other
    /// JSON as it is written (compact).
    static func text(of member: JSONValue) throws -> Data {
        if case .string(let text) = member { return Data(text.utf8) }
        return try JSONContent.bytes(member)
    }
}

extension KeyPrefix {
    /// Where a configuration key lives under this prefix: the discfg key path (the
    /// "encoded key" swift-configuration reports), and the key, or nil when the
    /// components cannot name one (an empty component, one holding `/`, `.` or `..`).
    ///
    /// Under `/app/`, `db.host` (components `db`, `host`) is `/app/db/host`.
    func location(of key: AbsoluteConfigKey) -> (encoded: String, key: Key?) {
        let encoded = path + key.components.joined(separator: "/")
        guard !key.components.isEmpty, !key.components.contains(where: { $0.isEmpty || $0.contains("/") }) else {
            return (encoded, nil)
        }
        return (encoded, try? Key(encoded))
    }
}

/// How stored bytes become the type a reader asks for.
///
/// - `string`: the value as UTF-8 text.
/// - `int`, `double`, `bool`: the text, as ``ValueText`` reads it.
/// - `bytes`: the value's bytes as stored (discfg values may be binary).
/// - arrays: a JSON array (`["a", "b"]`, `[1, 2]`), or else a list split at the
///   separator (`a, b`), each element read as its scalar type; byte-chunk elements are
///   decoded by the bytes decoder (base64 by default).
///
/// Errors name the key and the type asked for; they never quote a secret's value.
struct ValueDecoding: Sendable {
    var arraySeparator: Character
    var bytesDecoder: any ConfigBytesFromStringDecoder

    func content(of data: Data, as type: ConfigType, key: String, isSecret: Bool) throws -> ConfigContent {
        if type == .bytes { return .bytes([UInt8](data)) }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw DiscfgError.invalid("value", "\(key) holds binary data, not \(type.rawValue) text")
        }
        func mismatch(_ shown: String? = nil) -> DiscfgError {
            let what = isSecret ? "a secret" : "\"\((shown ?? text).prefix(64))\""
            return DiscfgError.invalid("value", "\(key) is \(what), which does not read as \(type.rawValue)")
        }
        func each<T>(_ parse: (String) -> T?) throws -> [T] {
            try elements(of: text).map { element in
                guard let value = parse(element) else { throw mismatch(element) }
                return value
            }
        }
        switch type {
        case .string: return .string(text)
        case .int:
            guard let value = ValueText.int(text) else { throw mismatch() }
            return .int(value)
        case .double:
            guard let value = ValueText.double(text) else { throw mismatch() }
            return .double(value)
        case .bool:
            guard let value = ValueText.bool(text) else { throw mismatch() }
            return .bool(value)
        case .bytes: return .bytes([UInt8](data))
        case .stringArray: return .stringArray(elements(of: text))
        case .intArray: return .intArray(try each(ValueText.int))
        case .doubleArray: return .doubleArray(try each(ValueText.double))
        case .boolArray: return .boolArray(try each(ValueText.bool))
        case .byteChunkArray: return .byteChunkArray(try each { bytesDecoder.decode($0) })
        }
    }

    /// The elements of an array value: a JSON array of scalars, or the text split at the
    /// separator with each element trimmed. An empty value is an empty array.
    func elements(of text: String) -> [String] {
        if text.drop(while: \.isWhitespace).first == "[",
           let scalars = try? JSONDecoder().decode([JSONScalar].self, from: Data(text.utf8)) {
            return scalars.map(\.text)
        }
        if text.allSatisfy(\.isWhitespace) { return [] }
        return text.split(separator: arraySeparator, omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }
}

/// One element of a JSON array value, as text: a string as it is, a number or a truth
/// value as JSON writes it. Nested arrays and objects do not decode.
private struct JSONScalar: Decodable {
    let text: String

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let integer = try? container.decode(Int.self) {
            text = String(integer)
        } else if let number = try? container.decode(Double.self) {
            text = String(number)
        } else if let truth = try? container.decode(Bool.self) {
            text = truth ? "true" : "false"
        } else {
            text = try container.decode(String.self)
        }
    }
}
