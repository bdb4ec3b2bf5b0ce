import DiscfgJSON
import Foundation

/// How one key differs between two sets of keys (a config at two revisions, a config and
/// a file, two files): what `discfg diff` reports.
///
/// Values are compared byte for byte, except that two JSON objects or arrays are compared
/// as JSON (member order, spacing and `1` against `1.0` do not count) and, when they
/// differ, by the members that changed (``members``). Content types count only where both
/// sides name one: a plain file mapping or an env file names none. A sealed value
/// (``SecretMarker``) equals only the same sealed bytes, and its values are never shown
/// (``isSecret``).
///
/// ```swift
/// let differences = KeyDifference.between(before.items, after.items)
/// for difference in differences { print(difference.key, difference.kind) }
/// ```
public struct KeyDifference: Sendable, Hashable {
    /// What happened to the key.
    public typealias Kind = JSONDifference.Kind

    /// The key.
    public var key: Key
    /// Added (only in the new set), removed (only in the old) or changed.
    public var kind: Kind
    /// The key in the old set; nil when added.
    public var old: ConfigSnapshot.Entry?
    /// The key in the new set; nil when removed.
    public var new: ConfigSnapshot.Entry?
    /// For a changed key holding a JSON object or array on both sides, the members that
    /// changed (empty when only the content type did); nil when the values are compared whole.
    public var members: [JSONDifference]?

    /// Creates a difference.
    public init(key: Key, kind: Kind, old: ConfigSnapshot.Entry?, new: ConfigSnapshot.Entry?, members: [JSONDifference]? = nil) {
        self.key = key
        self.kind = kind
        self.old = old
        self.new = new
        self.members = members
    }

    /// Whether either side is sealed: its values must not be shown.
    public var isSecret: Bool {
        old?.contentType == SecretMarker.contentType || new?.contentType == SecretMarker.contentType
    }

    /// Whether both sides name a content type and they differ.
    public var contentTypeChanged: Bool {
        guard let before = old?.contentType, let after = new?.contentType else { return false }
        return before != after
    }

    /// The differences from `old` to `new`, in key order; none when they hold the same
    /// keys with the same values. Each list names a key at most once (as
    /// ``ConfigSnapshot/validate()`` checks).
    public static func between(_ old: [ConfigSnapshot.Entry], _ new: [ConfigSnapshot.Entry]) -> [KeyDifference] {
        let before = Dictionary(old.map { ($0.key, $0) }, uniquingKeysWith: { _, last in last })
        let after = Dictionary(new.map { ($0.key, $0) }, uniquingKeysWith: { _, last in last })
        return Set(before.keys).union(after.keys).sorted().compactMap { key in
            switch (before[key], after[key]) {
            case (let old?, let new?): compare(old, new)
            case (let old?, nil): KeyDifference(key: key, kind: .removed, old: old, new: nil)
            case (nil, let new?): KeyDifference(key: key, kind: .added, old: nil, new: new)
            case (nil, nil): nil
            }
        }
    }

    /// The difference between two entries for the same key, or nil when they are the same.
    static func compare(_ old: ConfigSnapshot.Entry, _ new: ConfigSnapshot.Entry) -> KeyDifference? {
        var difference = KeyDifference(key: old.key, kind: .changed, old: old, new: new)
        if difference.isSecret {
            return old.contentType == new.contentType && old.value == new.value ? nil : difference
        }
        if old.value == new.value {
            return difference.contentTypeChanged ? difference.with(members: []) : nil
        }
        guard let before = container(old.value), let after = container(new.value) else { return difference }
        let members = JSONDifference.between(before, after)
        if members.isEmpty, !difference.contentTypeChanged { return nil }
        difference.members = members
        return difference
    }

    private func with(members: [JSONDifference]) -> KeyDifference {
        var copy = self
        copy.members = members
        return copy
    }

    /// The value as JSON when it is an object or an array; scalars are compared as the
    /// text they are (`1.0` and `1` are different settings).
    private static func container(_ value: Data) -> JSONValue? {
        guard let first = value.first(where: { !" \t\r\n".utf8.contains($0) }), first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else {
            return nil
        }
        switch try? JSONParser.parse(Array(value)) {
        case .object(let object): return .object(object)
        case .array(let array): return .array(array)
        default: return nil
        }
    }
}

extension EnvFile {
    /// The entries named as an env file names them (`/db/host` as `/DB_HOST`), to be
    /// compared with one: discfg's own records (the schemas under `/.discfg/`) are left
    /// out, as `export --to env` leaves them out.
    /// - Throws: `notRepresentable` when two keys become one variable.
    public static func variables(of entries: [ConfigSnapshot.Entry]) throws -> [ConfigSnapshot.Entry] {
        var owners: [String: Key] = [:]
        return try entries.filter { !SchemaTarget.isReserved($0.key) }.map { entry in
            let name = variableName(for: entry.key)
            if let other = owners[name] {
                throw DiscfgError(.notRepresentable, "keys \(other) and \(entry.key) both become \(name) in env format, so they cannot be compared with an env file", field: "format")
            }
            owners[name] = entry.key
            var renamed = entry
            renamed.key = try Key("/" + name)
            return renamed
        }
    }

    /// The variables an env file holds for the keys under `prefix`: those whose names
    /// start with the prefix's variable name and `_` (`/db/` is `DB_`); all for the root.
    public static func variablePrefix(of prefix: KeyPrefix) throws -> String? {
        guard prefix != .root else { return nil }
        return variableName(for: try Key(String(prefix.path.dropLast()))) + "_"
    }
}
