import DiscfgJSON
import Foundation
import Yams

/// The file formats `export` writes and `import` reads.
///
/// - `json` / `yaml`: `{config, revision, exportedAt, items: [{key, value, encoding?,
///   contentType?, expiresAt?}]}`, lossless. For import, a plain mapping of keys to
///   values (`{"/db/host": "db1", "port": 5432}`) is accepted too; a non-string value is
///   stored as its JSON text with content type `application/json`.
/// - `env`: `NAME=value` lines for handing configuration to a process. Export turns
///   `/db/host` into `DB_HOST`; import makes one key per variable (`DB_HOST` →
///   `/DB_HOST`). Binary values cannot be written as env.
public enum SnapshotFormat: String, CaseIterable, Sendable {
    case json, yaml, env

    /// The format a file name's extension implies, if any.
    public init?(fileExtension path: String) {
        switch (path as NSString).pathExtension.lowercased() {
        case "json": self = .json
        case "yaml", "yml": self = .yaml
        case "env": self = .env
        default:
            if (path as NSString).lastPathComponent.hasPrefix(".env") { self = .env } else { return nil }
        }
    }

    /// Parses `json`, `yaml`/`yml` or `env`.
    public init(parsing text: String, field: String) throws {
        let lowered = text.lowercased()
        guard let format = SnapshotFormat(rawValue: lowered == "yml" ? "yaml" : lowered) else {
            throw DiscfgError.invalid(field, "unknown format \"\(text.debugEscaped)\"; use json, yaml or env")
        }
        self = format
    }

    /// Writes a snapshot in this format.
    public func encode(_ snapshot: ConfigSnapshot) throws -> Data {
        switch self {
        case .json:
            var data = try JSONEncoder.discfg().encode(SnapshotDocument(snapshot))
            data.append(UInt8(ascii: "\n"))
            return data
        case .yaml:
            let document = SnapshotDocument(snapshot)
            var root: Node.Mapping = [:]
            if let config = document.config { root["config"] = Node(config, Tag(.str), .doubleQuoted) }
            if let revision = document.revision { root["revision"] = Node(String(revision.rawValue), Tag(.int)) }
            if let exportedAt = document.exportedAt { root["exportedAt"] = Node(TimestampFormat.string(from: exportedAt), Tag(.str), .doubleQuoted) }
            root["items"] = Node.sequence(Node.Sequence(document.items.map(Self.yamlNode)))
            return Data(try Yams.serialize(node: .mapping(root), sortKeys: false).utf8)
        case .env:
            return Data(try EnvFile.encode(snapshot).utf8)
        }
    }

    /// One item of a YAML snapshot.
    static func yamlNode(_ entry: SnapshotDocument.Entry) -> Node {
        var mapping: Node.Mapping = ["key": Node(entry.key, Tag(.str), .doubleQuoted)]
        mapping["value"] = Node(entry.value, Tag(.str), entry.value.contains("\n") ? .literal : .doubleQuoted)
        if let encoding = entry.encoding { mapping["encoding"] = Node(encoding) }
        if let contentType = entry.contentType { mapping["contentType"] = Node(contentType, Tag(.str), .doubleQuoted) }
        if let expiresAt = entry.expiresAt { mapping["expiresAt"] = Node(TimestampFormat.string(from: expiresAt), Tag(.str), .doubleQuoted) }
        return Node.mapping(mapping)
    }

    /// Reads a snapshot in this format.
    /// - Parameter nested: whether a JSON or YAML mapping whose member names are all plain
    ///   words (none holds a `/`) is a nested document, imported as key paths the way
    ///   `set / --document` writes it (`{"db": {"host": "x"}}` is `/db/host`). A file the
    ///   CLI imports is read so; the REST API's import body keeps one meaning per shape, as
    ///   its OpenAPI document describes it.
    /// - Throws: `invalidArgument` naming what in the file is wrong.
    public func decode(_ data: Data, nested: Bool = false) throws -> ConfigSnapshot {
        switch self {
        case .json:
            let object: Any
            do {
                object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            } catch {
                throw DiscfgError.invalid("file", "the file is not valid JSON (\(Self.reason(error)))")
            }
            return try SnapshotDocument.snapshot(from: object, nested: nested)
        case .yaml:
            guard let text = String(validating: data, as: UTF8.self) else {
                throw DiscfgError.invalid("file", "the file is not UTF-8 text")
            }
            return try SnapshotDocument.snapshot(from: try BoundedYAML.load(text) as Any, nested: nested)
        case .env:
            guard let text = String(validating: data, as: UTF8.self) else {
                throw DiscfgError.invalid("file", "the file is not UTF-8 text")
            }
            return try EnvFile.decode(text)
        }
    }

    private static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        return (nsError.userInfo[NSDebugDescriptionErrorKey] as? String) ?? nsError.localizedDescription
    }
}

/// The lossless JSON and YAML shape of a snapshot.
struct SnapshotDocument: Codable {
    struct Entry: Codable {
        var key: String
        var value: String
        var encoding: String?
        var contentType: String?
        var expiresAt: Date?
    }

    var config: String?
    var revision: Revision?
    var exportedAt: Date?
    var items: [Entry]

    init(_ snapshot: ConfigSnapshot) {
        config = snapshot.config?.rawValue
        revision = snapshot.revision
        exportedAt = snapshot.exportedAt
        items = snapshot.items.map(Entry.init)
    }

    /// Reads either the full document (with `items`) or a plain key → value mapping (a
    /// nested document when `nested` and no member name holds a `/`).
    static func snapshot(from object: Any, nested: Bool = false) throws -> ConfigSnapshot {
        guard let root = object as? [String: Any] else {
            throw DiscfgError.invalid("file", "the file must hold a mapping: either {\"items\": [...]} as export writes it, or {\"/key\": value, ...}")
        }
        guard let rawItems = root["items"] else {
            if nested, !root.isEmpty, !root.keys.contains(where: { $0.contains("/") }) { return try nestedMapping(root) }
            return try plainMapping(root)
        }
        guard let list = rawItems as? [Any] else {
            throw DiscfgError.invalid("items", "\"items\" must be a list of {key, value} entries")
        }
        var entries: [ConfigSnapshot.Entry] = []
        for (index, raw) in list.enumerated() {
            guard let fields = raw as? [String: Any] else {
                throw DiscfgError.invalid("items", "items[\(index)] is not a mapping with key and value")
            }
            guard let key = fields["key"] as? String else {
                throw DiscfgError.invalid("items", "items[\(index)] has no \"key\" string")
            }
            guard let value = fields["value"] as? String else {
                throw DiscfgError.invalid("items", "items[\(index)] (\(key)) has no \"value\" string")
            }
            var expiresAt: Date?
            if let text = fields["expiresAt"] {
                guard let text = text as? String, let date = TimestampFormat.date(from: text) else {
                    throw DiscfgError.invalid("items", "items[\(index)] (\(key)) has an expiresAt that is not an ISO 8601 time")
                }
                expiresAt = date
            }
            if let encoding = fields["encoding"], !(encoding is String) {
                throw DiscfgError.invalid("items", "items[\(index)] (\(key)) has an encoding that is not a string")
            }
            if let contentType = fields["contentType"], !(contentType is String) {
                throw DiscfgError.invalid("items", "items[\(index)] (\(key)) has a contentType that is not a string")
            }
            entries.append(ConfigSnapshot.Entry(
                key: try itemKey(key, index: index),
                value: try ValueEncoding.decode(value, encoding: fields["encoding"] as? String),
                contentType: fields["contentType"] as? String, expiresAt: expiresAt
            ))
        }
        var revision: Revision?
        if let number = root["revision"] as? Int, number >= 0 { revision = Revision(UInt64(number)) }
        var message: String?
        if let raw = root["message"] {
            guard let text = raw as? String else { throw DiscfgError.invalid("message", "\"message\" must be a string: why, recorded with the import") }
            try Attribution.validate(message: text)
            message = text
        }
        return ConfigSnapshot(
            config: (root["config"] as? String).flatMap { try? ConfigName($0) }, revision: revision,
            exportedAt: (root["exportedAt"] as? String).flatMap(TimestampFormat.date(from:)), items: entries, message: message
        )
    }

    private static func itemKey(_ raw: String, index: Int) throws -> Key {
        do {
            return try Key(raw)
        } catch let error as DiscfgError {
            throw DiscfgError.invalid("items", "items[\(index)]: \(error.message)")
        }
    }

    private static func plainMapping(_ root: [String: Any]) throws -> ConfigSnapshot {
        var entries: [ConfigSnapshot.Entry] = []
        for (rawKey, value) in root.sorted(by: { $0.key < $1.key }) {
            let key = try Key(rawKey)
            if let text = value as? String {
                entries.append(ConfigSnapshot.Entry(key: key, value: Data(text.utf8)))
            } else {
                let json = try JSONSerialization.data(withJSONObject: jsonCompatible(value, key: key), options: [.fragmentsAllowed, .sortedKeys, .withoutEscapingSlashes])
                entries.append(ConfigSnapshot.Entry(key: key, value: json, contentType: "application/json"))
            }
        }
        return ConfigSnapshot(items: entries)
    }

    /// A nested mapping as the keys ``KeyDocument`` makes of it under the root: an object
    /// member is a directory, a string a text value, any other value JSON.
    private static func nestedMapping(_ root: [String: Any]) throws -> ConfigSnapshot {
        var safe: [String: Any] = [:]
        for (name, value) in root { safe[name] = try jsonCompatible(value, key: Key(stored: "/" + name)) }
        let json = try JSONSerialization.data(withJSONObject: safe, options: [.sortedKeys, .withoutEscapingSlashes])
        let document = try JSONParser.parse(Array(json))
        let (changes, _) = try KeyDocument.changes(document, under: .root, current: [], replace: false)
        let entries = changes.compactMap { change -> ConfigSnapshot.Entry? in
            guard case .put(let key, let value, let contentType, _) = change else { return nil }
            return ConfigSnapshot.Entry(key: key, value: value, contentType: contentType)
        }
        return ConfigSnapshot(items: entries)
    }

    /// YAML gives dates and other non-JSON scalars; turn them into JSON-safe values.
    /// - Throws: `invalidArgument` for numbers JSON cannot hold (`.nan`, `.inf`).
    private static func jsonCompatible(_ value: Any, key: Key) throws -> Any {
        switch value {
        case let dictionary as [String: Any]: try dictionary.mapValues { try jsonCompatible($0, key: key) }
        case let array as [Any]: try array.map { try jsonCompatible($0, key: key) }
        case let date as Date: TimestampFormat.string(from: date)
        case let number as Double where !number.isFinite:
            throw DiscfgError.invalid("file", "the value of \(key) holds \(number), which JSON cannot represent; quote it to keep it as text")
        case is String, is NSNumber, is Int, is Double, is Bool, is NSNull: value
        case Optional<Any>.none: NSNull()
        default: String(describing: value)
        }
    }
}

