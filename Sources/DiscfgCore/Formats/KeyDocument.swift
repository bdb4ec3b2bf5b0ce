import Foundation
import DiscfgJSON

/// The keys under a prefix as one nested JSON object, and back.
///
/// Reading (``read(_:under:)``): each key's path below the prefix is a path of members
/// (`/app/db/host` under `/app/` is `{"db": {"host": …}}`); a value whose content type is
/// JSON is embedded as JSON, any other UTF-8 value is a string, and a value that is not
/// UTF-8 is `{"$base64": "…"}`. `/.discfg/` (schemas) is never part of a document. A key
/// that is also a directory (`/app/db` beside `/app/db/host`) cannot be one document and
/// is refused with its path.
///
/// Writing (``changes(_:under:current:replace:)``): a member that names an existing key is
/// that key's value (any JSON for a JSON key; a string, `{"$base64": …}` or other JSON,
/// then written as `application/json`, for any other); a member that names no key is a
/// directory when it is an object and a new key otherwise (a string as text, other JSON
/// as `application/json`). Only keys whose value changes are written; with `replace`,
/// keys under the prefix the document lacks are deleted.
public enum KeyDocument {
    /// The member that marks a binary value.
    public static let binaryMember = "$base64"

    /// The document of `items` (live items under `prefix`, in any order); `parsed` holds
    /// JSON values already parsed, by key, so they are not parsed again.
    /// - Throws: `notRepresentable` naming a key that is also a directory.
    public static func read(_ items: [Item], under prefix: KeyPrefix, parsed: [Key: JSONValue] = [:]) throws -> JSONValue {
        var root = Node.directory([:])
        for item in items.sorted(by: { $0.key < $1.key }) where prefix.contains(item.key) && !SchemaTarget.isReserved(item.key) {
            let segments = item.key.path.dropFirst(prefix.path.count).split(separator: "/").map(String.init)
            let value = JSONContent.isJSON(item.contentType) ? parsed[item.key] ?? embedded(item) : embedded(item)
            try root.insert(segments[...], value: value, key: item.key, prefix: prefix)
        }
        return root.json
    }

    /// A value as its document member.
    public static func embedded(_ item: Item) -> JSONValue {
        if JSONContent.isJSON(item.contentType), let value = try? JSONParser.parse(Array(item.value)) { return value }
        if let text = item.text { return .string(text) }
        return .object(JSONObject([(binaryMember, .string(item.value.base64EncodedString()))]))
    }

    /// One change a document makes.
    public enum Change: Hashable, Sendable {
        /// Write `value` (with its content type) at the key, over what is there.
        case put(Key, Data, contentType: String?, over: Item?)
        /// Delete the item.
        case delete(Item)
    }

    /// The changes that make the keys under `prefix` hold `document`, given the live items
    /// under it now, in key order; and how many named keys already held their value.
    /// - Throws: `invalidArgument` for a document that is not an object, a member that is
    ///   not a key segment, or a member that would be both a key and a directory.
    public static func changes(_ document: JSONValue, under prefix: KeyPrefix, current: [Item], replace: Bool) throws -> (changes: [Change], unchanged: Int) {
        let (writer, live) = try written(document, under: prefix, current: current, replace: replace)
        var changes = writer.changes
        if replace {
            changes += live.filter { !writer.named.contains($0.key) }.map { .delete($0) }
        }
        return (changes.sorted { key(of: $0) < key(of: $1) }, writer.unchanged)
    }

    /// `document` as an import that makes the same change as
    /// ``changes(_:under:current:replace:)``: a snapshot of each key the document names as
    /// the document makes it (one it leaves alone as it is, so it counts as unchanged),
    /// and options bound to `prefix` that, with `replace`, delete the keys under it the
    /// document lacks (never a schema). A document write can then be planned
    /// (``ImportOptions/dryRun``) and bound to the revision `current` was read at
    /// (``ImportOptions/ifRevision``) as any import can.
    public static func importable(_ document: JSONValue, under prefix: KeyPrefix, current: [Item], replace: Bool) throws -> (snapshot: ConfigSnapshot, options: ImportOptions) {
        let (writer, _) = try written(document, under: prefix, current: current, replace: replace)
        var entries: [Key: ConfigSnapshot.Entry] = [:]
        for key in writer.named {
            if let item = writer.byKey[key] { entries[key] = ConfigSnapshot.Entry(item) }
        }
        for case .put(let key, let value, let contentType, let over) in writer.changes {
            entries[key] = ConfigSnapshot.Entry(key: key, value: value, contentType: contentType, expiresAt: over?.expiresAt)
        }
        let snapshot = ConfigSnapshot(items: entries.values.sorted { $0.key < $1.key })
        return (snapshot, ImportOptions(replace: replace, prefix: prefix))
    }

    /// The document walked over the live items under `prefix`; without `replace`, a
    /// member that would be a key where a directory is live is refused.
    private static func written(_ document: JSONValue, under prefix: KeyPrefix, current: [Item], replace: Bool) throws -> (Writer, live: [Item]) {
        guard case .object(let members) = document else {
            throw DiscfgError.invalid("document", "a document for \(prefix) must be a JSON object, not \(document.typeName)")
        }
        let live = current.filter { prefix.contains($0.key) && !SchemaTarget.isReserved($0.key) }
        let byKey = Dictionary(live.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        var writer = Writer(byKey: byKey, live: live)
        try writer.walk(members, at: prefix.path)
        if !replace, let clash = writer.leaves.first(where: { leaf in live.contains { $0.key.path.hasPrefix(leaf.path + "/") } }) {
            throw conflict(clash.path)
        }
        return (writer, live)
    }

    private static func key(of change: Change) -> Key {
        switch change {
        case .put(let key, _, _, _): key
        case .delete(let item): item.key
        }
    }

    static func conflict(_ path: String) -> DiscfgError {
        DiscfgError.invalid("document", "\(path) would be both a key and a directory; a document holds one or the other at each path")
    }

    private struct Writer {
        let byKey: [Key: Item]
        let live: [Item]
        var changes: [Change] = []
        var named = Set<Key>()
        var leaves: [Key] = []
        var unchanged = 0

        mutating func walk(_ members: JSONObject, at directory: String) throws {
            for (name, value) in members {
                guard !name.isEmpty, name != ".", name != "..", !name.contains("/") else {
                    throw DiscfgError.invalid("document", "member \"\(name.debugEscaped)\" under \(directory) cannot name a key: a member is one path segment (no '/', not empty, '.' or '..')")
                }
                let path = directory + name
                let key = try Key(path)
                if SchemaTarget.isReserved(key) {
                    throw DiscfgError.invalid("document", "\(key) is reserved for discfg's own records")
                }
                if let existing = byKey[key] {
                    try put(key, value, over: existing)
                } else if case .object(let children) = value, !KeyDocument.isBinary(value) {
                    try walk(children, at: key.path + "/")
                } else {
                    try put(key, value, over: nil)
                }
            }
        }

        private mutating func put(_ key: Key, _ value: JSONValue, over existing: Item?) throws {
            named.insert(key)
            leaves.append(key)
            let (data, contentType) = try KeyDocument.stored(value, over: existing)
            if let existing, existing.value == data || (JSONContent.isJSON(existing.contentType) && JSONContent.isJSON(contentType) && KeyDocument.embedded(existing) == value) {
                unchanged += 1
                return
            }
            changes.append(.put(key, data, contentType: contentType, over: existing))
        }
    }

    static func isBinary(_ value: JSONValue) -> Bool {
        guard case .object(let object) = value, object.count == 1, case .string? = object[binaryMember] else { return false }
        return true
    }

    /// The bytes and content type a member is stored as.
    private static func stored(_ value: JSONValue, over existing: Item?) throws -> (Data, String?) {
        if let existing, JSONContent.isJSON(existing.contentType) {
            return (try JSONContent.bytes(value), existing.contentType)
        }
        switch value {
        case .string(let text):
            return (Data(text.utf8), existing?.contentType)
        case .object(let object) where isBinary(value):
            guard case .string(let encoded)? = object[binaryMember], let data = Data(base64Encoded: encoded) else {
                throw DiscfgError.invalid("document", "\(binaryMember) must hold base64")
            }
            return (data, existing?.contentType)
        default:
            return (try JSONContent.bytes(value), JSONContent.mediaType)
        }
    }

    /// The error for a document read where `path` is both a key and a directory.
    static func clash(_ path: String, _ prefix: KeyPrefix) -> DiscfgError {
        DiscfgError(.notRepresentable, "\(path) is both a key and a directory, so the keys under \(prefix) are not one document", field: "document")
    }

    /// A document being built: a value, or a directory of members.
    private enum Node {
        case leaf(JSONValue)
        case directory([String: Node])

        mutating func insert(_ segments: ArraySlice<String>, value: JSONValue, key: Key, prefix: KeyPrefix) throws {
            guard case .directory(var members) = self, let first = segments.first else { throw KeyDocument.clash(key.path, prefix) }
            self = .leaf(.null)  // `members` is then the dictionary's only reference, changed in place
            defer { self = .directory(members) }
            if segments.count == 1 {
                guard members[first] == nil else { throw KeyDocument.clash(key.path, prefix) }
                members[first] = .leaf(value)
                return
            }
            var child = members.removeValue(forKey: first) ?? .directory([:])
            defer { members[first] = child }
            guard case .directory = child else {
                // The key stops at `first`, where this key goes on below it.
                let path = "/" + key.segments.dropLast(segments.count - 1).joined(separator: "/")
                throw KeyDocument.clash(path, prefix)
            }
            try child.insert(segments.dropFirst(), value: value, key: key, prefix: prefix)
        }

        var json: JSONValue {
            switch self {
            case .leaf(let value): value
            case .directory(let members):
                .object(JSONObject(members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { ($0.key, $0.value.json) }))
            }
        }
    }
}
