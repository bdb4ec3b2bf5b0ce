import DiscfgCore
import Foundation
import Synchronization

/// Column lists, row decoding and the statements shared by the store's queries.
enum SQLiteRows {
    static let itemColumns = "key, value, content_type, version, create_revision, mod_revision, modified_at, expires_at"

    static let eventColumns = """
    revision, kind, key, at, value, content_type, version, create_revision, expires_at, \
    prev_value, prev_content_type, prev_version, prev_create_revision, prev_mod_revision, prev_modified_at, prev_expires_at, \
    by_kind, by_id, by_description, message
    """
    /// How many columns ``eventColumns`` names: a query's columns after them start here.
    static let eventColumnCount: Int32 = 20

    static let configColumns = "name, revision, compacted_revision, created_at, modified_at, settings, key_count, byte_count"

    /// A key's stored item.
    static let itemByKey = SQLiteStatement("SELECT \(itemColumns) FROM kv WHERE config = ? AND key = ?")
    /// A config's keys from a key (inclusive) to a key (exclusive), in key order.
    static let itemsInRange = SQLiteStatement("SELECT \(itemColumns) FROM kv WHERE config = ? AND key >= ? AND key < ? ORDER BY key")
    /// A config's row.
    static let configByName = SQLiteStatement("SELECT \(configColumns) FROM configs WHERE name = ?")

    /// Decodes a row selected with ``itemColumns``.
    static func item(_ row: SQLiteRow) -> Item {
        Item(
            key: Key(stored: row.text(0)), value: row.blob(1), contentType: row.optionalText(2),
            version: UInt64(clamping: row.integer(3)), createRevision: Revision(UInt64(clamping: row.integer(4))),
            modRevision: Revision(UInt64(clamping: row.integer(5))), modifiedAt: Date(milliseconds: row.integer(6)),
            expiresAt: row.optionalInteger(7).map(Date.init(milliseconds:))
        )
    }

    /// Decodes a row selected with ``eventColumns``.
    static func event(_ row: SQLiteRow) -> Event {
        let revision = Revision(UInt64(clamping: row.integer(0)))
        let key = Key(stored: row.text(2))
        let at = Date(milliseconds: row.integer(3))
        let item = row.optionalBlob(4).map { value in
            Item(
                key: key, value: value, contentType: row.optionalText(5), version: UInt64(clamping: row.integer(6)),
                createRevision: Revision(UInt64(clamping: row.integer(7))), modRevision: revision, modifiedAt: at,
                expiresAt: row.optionalInteger(8).map(Date.init(milliseconds:))
            )
        }
        let prevItem = row.optionalBlob(9).map { value in
            Item(
                key: key, value: value, contentType: row.optionalText(10), version: UInt64(clamping: row.integer(11)),
                createRevision: Revision(UInt64(clamping: row.integer(12))), modRevision: Revision(UInt64(clamping: row.integer(13))),
                modifiedAt: Date(milliseconds: row.integer(14)), expiresAt: row.optionalInteger(15).map(Date.init(milliseconds:))
            )
        }
        return Event(kind: Event.Kind(rawValue: row.text(1)) ?? .put, revision: revision, key: key, at: at, item: item, prevItem: prevItem, attribution: attribution(row, from: 16))
    }

    /// The attribution in `row`'s columns from `first` (`by_kind, by_id, by_description,
    /// message`); nil for a row written before attribution was recorded.
    static func attribution(_ row: SQLiteRow, from first: Int32) -> Attribution? {
        guard let kind = row.optionalText(first).flatMap(Principal.Kind.init(rawValue:)), let id = row.optionalText(first + 1) else { return nil }
        return Attribution(principal: Principal(kind: kind, id: id, description: row.optionalText(first + 2)), message: row.optionalText(first + 3))
    }

    /// Decodes a row selected with ``configColumns``.
    static func config(_ row: SQLiteRow) throws -> ConfigInfo {
        let settings = try settings(row.text(5))
        return ConfigInfo(
            name: try ConfigName(row.text(0)), revision: Revision(UInt64(clamping: row.integer(1))),
            compactedRevision: Revision(UInt64(clamping: row.integer(2))), createdAt: Date(milliseconds: row.integer(3)),
            modifiedAt: Date(milliseconds: row.integer(4)), settings: settings, keyCount: Int(clamping: row.integer(6)),
            byteCount: Int(clamping: row.integer(7))
        )
    }

    /// Settings already decoded, by their stored JSON: a config's row is read on every
    /// change and most reads, and its settings rarely change.
    private static let decodedSettings = Mutex<[String: ConfigSettings]>([:])

    /// The settings stored as `json`, decoded once per distinct text.
    static func settings(_ json: String) throws -> ConfigSettings {
        if let settings = decodedSettings.withLock({ $0[json] }) { return settings }
        let settings = try JSONDecoder().decode(ConfigSettings.self, from: Data(json.utf8))
        decodedSettings.withLock { cache in
            if cache.count >= 256 { cache.removeAll() }
            cache[json] = settings
        }
        return settings
    }

    /// The bound values for ``eventColumns`` after `config`, appended to `arguments`
    /// (a history row's, built in one array where joined ones cost a copy each).
    static func appendEventArguments(_ config: ConfigName, _ event: Event, to arguments: inout [SQLiteValue]) {
        let item = event.item
        let prev = event.prevItem
        arguments.append(.text(config.rawValue))
        arguments.append(.integer(event.revision.storageValue))
        arguments.append(.text(event.kind.rawValue))
        arguments.append(.text(event.key.path))
        arguments.append(.integer(event.at.milliseconds))
        arguments.append(.optional(item?.value))
        arguments.append(.optional(item?.contentType))
        arguments.append(.optional(item.map { Int64(clamping: $0.version) }))
        arguments.append(.optional(item.map { $0.createRevision.storageValue }))
        arguments.append(.optional(item?.expiresAt?.milliseconds))
        arguments.append(.optional(prev?.value))
        arguments.append(.optional(prev?.contentType))
        arguments.append(.optional(prev.map { Int64(clamping: $0.version) }))
        arguments.append(.optional(prev.map { $0.createRevision.storageValue }))
        arguments.append(.optional(prev.map { $0.modRevision.storageValue }))
        arguments.append(.optional(prev?.modifiedAt.milliseconds))
        arguments.append(.optional(prev?.expiresAt?.milliseconds))
        arguments.append(.optional(event.attribution?.principal.kind.rawValue))
        arguments.append(.optional(event.attribution?.principal.id))
        arguments.append(.optional(event.attribution?.principal.description))
        arguments.append(.optional(event.attribution?.message))
    }
}
