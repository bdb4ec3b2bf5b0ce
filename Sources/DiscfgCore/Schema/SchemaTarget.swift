import Foundation

/// What a JSON Schema is attached to: one key's value, or a prefix's document (the keys
/// under it as one JSON object, see ``KeyDocument``).
///
/// Schemas are part of their config: each is kept as a key under `/.discfg/schema/`, its
/// target's path escaped into one segment (`%` as `%25`, `/` as `%2F`), so a schema
/// changes at a revision, has history, is exported and imported with the keys, and is
/// read by every server sharing the store. `/.discfg/` is reserved: only schemas are
/// written there, and prefix documents leave it out.
public enum SchemaTarget: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// One key's value.
    case key(Key)
    /// The document of every key under a prefix.
    case prefix(KeyPrefix)

    /// Where discfg keeps what is not a config's own keys.
    public static let reserved = KeyPrefix(validated: "/.discfg/")
    /// Where schemas are kept.
    public static let namespace = KeyPrefix(validated: "/.discfg/schema/")
    /// The keys of ``namespace``, made once: every change reads them.
    public static let namespaceRange = namespace.range

    /// Reads a target: a path ending in `/` (or `/` alone) is a prefix, any other a key.
    /// - Throws: `invalidArgument` for a bad path, or one under `/.discfg/`.
    public init(_ text: String) throws {
        let target: SchemaTarget = text.hasSuffix("/") || text.isEmpty ? .prefix(try KeyPrefix(text)) : .key(try Key(text))
        let reserved = switch target {
        case .key(let key): Self.isReserved(key)
        case .prefix(let prefix): prefix.path.hasPrefix(Self.reserved.path)
        }
        if reserved {
            throw DiscfgError.invalid("key", "\(target.path) is reserved for discfg's own records; a schema is attached to a key or prefix of the config")
        }
        guard Self.escape(target.path).utf8.count + Self.namespace.path.utf8.count <= Key.maxBytes else {
            throw DiscfgError.invalid("key", "a schema cannot be attached to \(target.path): the path is too long to name its schema")
        }
        self = target
    }

    /// The target of a schema kept at `storageKey`, or nil for a key that is not a schema's.
    public init?(storageKey: Key) {
        guard Self.namespace.contains(storageKey) else { return nil }
        let escaped = storageKey.path.dropFirst(Self.namespace.path.count)
        guard !escaped.contains("/"), let path = Self.unescape(escaped) else { return nil }
        if path.hasSuffix("/") {
            guard let prefix = try? KeyPrefix(path), prefix.path == path else { return nil }
            self = .prefix(prefix)
        } else {
            guard let key = try? Key(path), key.path == path else { return nil }
            self = .key(key)
        }
    }

    /// Whether `key` is discfg's own: under `/.discfg/`, or `/.discfg` itself (which a
    /// schema makes a directory).
    public static func isReserved(_ key: Key) -> Bool {
        reserved.contains(key) || key.path.utf8.count == reserved.path.utf8.count - 1 && reserved.path.hasPrefix(key.path)
    }

    /// Refuses a delete of a key under `/.discfg/`: a schema is removed with
    /// ``ChangeTransaction/setSchema(_:to:force:)``, never as a key, so no delete meant for
    /// values takes one with it.
    static func refuseDeleting(_ key: Key) throws {
        guard isReserved(key) else { return }
        throw DiscfgError.invalid("key", "\(key) is discfg's own record; remove a schema with `discfg schema rm` (DELETE /v1/{config}/schema?target=…)")
    }

    /// Refuses a delete of a prefix inside `/.discfg/`. A wider prefix (`/` itself) deletes
    /// the config's keys and leaves its schemas.
    static func refuseDeleting(_ prefix: KeyPrefix) throws {
        guard prefix.path.hasPrefix(reserved.path) else { return }
        throw DiscfgError.invalid("prefix", "\(prefix) holds discfg's own records; remove a schema with `discfg schema rm` (DELETE /v1/{config}/schema?target=…)")
    }

    /// The key or prefix path.
    public var path: String {
        switch self {
        case .key(let key): key.path
        case .prefix(let prefix): prefix.path
        }
    }

    /// The key the schema is kept at.
    public var storageKey: Key { Key(stored: Self.namespace.path + Self.escape(path)) }

    /// Whether a change of `key` may change what this schema checks.
    public func covers(_ key: Key) -> Bool {
        switch self {
        case .key(let target): target == key
        case .prefix(let prefix): prefix.contains(key) && !Self.isReserved(key)
        }
    }

    public var description: String { path }

    public static func < (lhs: SchemaTarget, rhs: SchemaTarget) -> Bool { lhs.path.utf8.lexicographicallyPrecedes(rhs.path.utf8) }

    private static func escape(_ path: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(path.utf8.count + 8)
        for character in path.unicodeScalars {
            switch character {
            case "%": escaped += "%25"
            case "/": escaped += "%2F"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    private static func unescape(_ escaped: Substring) -> String? {
        var path = ""
        var scalars = escaped.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            guard scalar == "%" else { path.unicodeScalars.append(scalar); continue }
            switch (scalars.next(), scalars.next()) {
            case ("2", "5"): path += "%"
            case ("2", "F"): path += "/"
            default: return nil
            }
        }
        return path
    }
}

/// One way a value, or a prefix's document, breaks its schema.
public struct SchemaViolation: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The key at fault (for a prefix's document, the key the failing member belongs to,
    /// or the prefix itself for a member that is missing); empty for the one entry that
    /// counts the violations outside a caller's scopes.
    public var key: String
    /// Where in that key's value (RFC 6901; empty for the whole value).
    public var pointer: String
    /// The schema keyword that failed, e.g. `maximum`, `required`.
    public var keyword: String
    /// What is wrong, e.g. `must be ≤ 65535`.
    public var message: String
    /// The key or prefix whose schema refused the value (`/app/`), so a refusal can name
    /// it; nil where no one schema of the config did (the count of violations outside a
    /// caller's scopes, a document checked against a schema file).
    public var schema: String?

    /// Creates a violation.
    public init(key: String, pointer: String, keyword: String, message: String, schema: String? = nil) {
        self.key = key
        self.pointer = pointer
        self.keyword = keyword
        self.message = message
        self.schema = schema
    }

    /// `KEY: POINTER: message (keyword)`, the pointer left out when it is the whole value,
    /// and the message alone for an entry that names no key (the count of violations
    /// outside a caller's scopes, see ``DiscfgError/shown(to:on:)``).
    public var description: String {
        if key.isEmpty { return message }
        return pointer.isEmpty ? "\(key): \(message) (\(keyword))" : "\(key): \(pointer): \(message) (\(keyword))"
    }
}
