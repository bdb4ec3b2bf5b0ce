import DiscfgCore
import Foundation

/// Items and the envelope of one change, written for ``EnvelopeJSON``.
extension EnvelopeJSON {
    /// The envelope of one change (``Envelope/init(action:config:change:)``) as compact
    /// JSON, lent to `body`: byte for byte what that envelope writes, written from the
    /// event without building it (every write's answer).
    public static func withBytes<R>(
        action: String, config: ConfigName, change: Event, _ body: (UnsafeRawBufferPointer) throws -> R
    ) rethrows -> R {
        var buffer = JSONBytes()
        var object = JSONObjectWriter(&buffer)
        object.key("action", &buffer); buffer.writeJSONString(action)
        object.key("at", &buffer); buffer.writeJSONTimestamp(change.at)
        if let by = change.attribution?.principal { object.key("by", &buffer); write(by, to: &buffer) }
        object.key("config", &buffer); buffer.writeJSONString(config.rawValue)
        if let item = change.item { object.key("item", &buffer); write(item, to: &buffer) }
        if let message = change.attribution?.message { object.key("message", &buffer); buffer.writeJSONString(message) }
        if let prevItem = change.prevItem { object.key("prevItem", &buffer); write(prevItem, to: &buffer) }
        object.key("revision", &buffer); buffer.writeJSONNumber(change.revision.rawValue)
        object.close(&buffer)
        return try buffer.withBytes(body)
    }

    /// An item document.
    static func write(_ item: ItemDocument, to buffer: inout JSONBytes) {
        writeItem(
            contentType: item.contentType, createRevision: item.createRevision, encoding: item.encoding, expiresAt: item.expiresAt,
            key: item.key, modRevision: item.modRevision, modified: item.modified, value: item.value, version: item.version, to: &buffer
        )
    }

    /// An item as its ``ItemDocument`` writes it.
    private static func write(_ item: Item, to buffer: inout JSONBytes) {
        let (value, encoding) = ValueEncoding.encode(item.value)
        writeItem(
            contentType: item.contentType, createRevision: item.createRevision, encoding: encoding, expiresAt: item.expiresAt,
            key: item.key.path, modRevision: item.modRevision, modified: item.modifiedAt, value: value, version: item.version, to: &buffer
        )
    }

    private static func writeItem(
        contentType: String?, createRevision: Revision, encoding: String?, expiresAt: Date?, key: String, modRevision: Revision, modified: Date,
        value: String, version: UInt64, to buffer: inout JSONBytes
    ) {
        var object = JSONObjectWriter(&buffer)
        if let contentType { object.key("contentType", &buffer); buffer.writeJSONString(contentType) }
        object.key("createRevision", &buffer); buffer.writeJSONNumber(createRevision.rawValue)
        if let encoding { object.key("encoding", &buffer); buffer.writeJSONString(encoding) }
        if let expiresAt { object.key("expiresAt", &buffer); buffer.writeJSONTimestamp(expiresAt) }
        object.key("key", &buffer); buffer.writeJSONString(key)
        object.key("modRevision", &buffer); buffer.writeJSONNumber(modRevision.rawValue)
        object.key("modified", &buffer); buffer.writeJSONTimestamp(modified)
        object.key("value", &buffer); buffer.writeJSONString(value)
        object.key("version", &buffer); buffer.writeJSONNumber(version)
        object.close(&buffer)
    }
}
