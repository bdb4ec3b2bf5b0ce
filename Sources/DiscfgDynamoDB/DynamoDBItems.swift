import DiscfgCore
import Foundation

/// Where everything lives in the table (DESIGN §3), and how items map to attributes.
///
/// | item | pk | sk |
/// |---|---|---|
/// | config meta | `CONFIG` | `/` |
/// | key | `CONFIG` | `/a/b/c` |
/// | history event | `CONFIG#h` | revision, 20 digits |
/// | overflowed previous value of an event | `CONFIG#h` | revision + `#prev` |
/// | config registry | `#configs` | `CONFIG` |
/// | bearer token | `#tokens` | token id |
///
/// Two local secondary indexes (strongly consistent, defined when the table is created):
/// `byKey` orders history events by key then revision (attribute `lsk`), so a key's
/// history and "the first event on this key after revision R" are one `Query`;
/// `byExpiry` holds only keys with a TTL, ordered by expiry time (attribute `exp`), so a
/// change or the sweeper finds due keys with one `Query`.
enum DynamoDBLayout {
    static let metaSK = "/"
    static let registryPK = "#configs"
    static let tokensPK = "#tokens"
    static let historyByKeyIndex = "byKey"
    static let expiryIndex = "byExpiry"
    /// Separates the key from the revision in `lsk`; keys never hold control characters.
    static let keyRevisionSeparator = "\u{1}"
    /// An item larger than this is split: DynamoDB's limit is 400 KB including names.
    static let maxItemBytes = 390_000
    /// How long after a key's TTL its item may be removed by DynamoDB's own TTL, as a
    /// backstop when no sweeper ran (the store and sweeper expire it logically long before).
    static let keyBackstopSeconds: Int64 = 7 * 86_400
    /// On the first history event a transaction writes: its `ClientRequestToken`, read
    /// back when the transaction's answer was lost to learn whether it committed.
    static let transactionToken = "tx"

    static func historyPK(_ config: ConfigName) -> String { config.rawValue + "#h" }

    static func revisionSK(_ revision: Revision) -> String {
        let digits = String(revision.rawValue)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits
    }

    static func overflowSK(_ revision: Revision) -> String { revisionSK(revision) + "#prev" }

    static func historyKeySK(_ key: Key, _ revision: Revision) -> String {
        key.path + keyRevisionSeparator + revisionSK(revision)
    }

    static func key(_ pk: String, _ sk: String) -> Attributes { ["pk": .s(pk), "sk": .s(sk)] }
    static func metaKey(_ config: ConfigName) -> Attributes { key(config.rawValue, metaSK) }
    static func itemKey(_ config: ConfigName, _ key: Key) -> Attributes { Self.key(config.rawValue, key.path) }
    static func eventKey(_ config: ConfigName, _ revision: Revision) -> Attributes { key(historyPK(config), revisionSK(revision)) }

    /// The revision of a history item's sort key, or nil for an overflow item.
    static func revision(ofHistorySK sk: String) -> Revision? {
        guard sk.utf8.count == 20, let value = UInt64(sk) else { return nil }
        return Revision(value)
    }
}

/// Item ⇄ attributes. Times are whole milliseconds; `ttl` is DynamoDB's epoch seconds.
enum ItemCodec {
    /// The attributes of a live key item.
    static func attributes(_ item: Item, in config: ConfigName) -> Attributes {
        var attributes = DynamoDBLayout.itemKey(config, item.key)
        attributes.merge(fields(item, prefix: "")) { $1 }
        if let expiresAt = item.expiresAt {
            attributes["exp"] = .number(expiresAt.milliseconds)
            attributes["ttl"] = .number(expiresAt.milliseconds / 1000 + DynamoDBLayout.keyBackstopSeconds)
        }
        return attributes
    }

    /// The item fields under names starting with `prefix` (`""` for key items; `n`/`p`
    /// for an event's item and previous item). `exp` is left to the caller: on a key
    /// item it feeds the expiry index, which history items must stay out of.
    static func fields(_ item: Item, prefix: String) -> Attributes {
        var attributes: Attributes = [
            prefix + "v": .b(item.value),
            prefix + "ver": .number(item.version),
            prefix + "cr": .number(item.createRevision.rawValue),
            prefix + "mr": .number(item.modRevision.rawValue),
            prefix + "mod": .number(item.modifiedAt.milliseconds),
        ]
        if let contentType = item.contentType { attributes[prefix + "ct"] = .s(contentType) }
        if !prefix.isEmpty, let expiresAt = item.expiresAt { attributes[prefix + "exp"] = .number(expiresAt.milliseconds) }
        return attributes
    }

    /// A key item read back; nil when the attributes are not a key item.
    static func item(_ attributes: Attributes) -> Item? {
        guard let path = attributes["sk"]?.string, path != DynamoDBLayout.metaSK else { return nil }
        return item(attributes, key: Key(stored: path), prefix: "", expiryName: "exp")
    }

    /// The item stored under `prefix` for `key`, or nil when absent.
    static func item(_ attributes: Attributes, key: Key, prefix: String, expiryName: String? = nil) -> Item? {
        guard let version = attributes[prefix + "ver"]?.uint64,
              let createRevision = attributes[prefix + "cr"]?.uint64,
              let modRevision = attributes[prefix + "mr"]?.uint64,
              let modified = attributes[prefix + "mod"]?.int64
        else { return nil }
        return Item(
            key: key, value: attributes[prefix + "v"]?.data ?? Data(), contentType: attributes[prefix + "ct"]?.string,
            version: version, createRevision: Revision(createRevision), modRevision: Revision(modRevision),
            modifiedAt: Date(milliseconds: modified),
            expiresAt: attributes[expiryName ?? prefix + "exp"]?.int64.map { Date(milliseconds: $0) }
        )
    }
}

/// Event ⇄ history item. The event's item goes under `n…`, the previous item under `p…`.
///
/// A history item must fit DynamoDB's 400 KB item limit even when both values are
/// 256 KiB. When they do not fit together, the previous value is written to a second
/// item (`REVISION#prev`) in the same transaction and the event records `pov = true`;
/// it sorts right after its event, so a range `Query` over history returns both, and
/// reads put the value back. Nothing is ever lost or reconstructed from older history
/// (which retention may already have dropped).
enum EventCodec {
    /// The event's history item and, when the previous value had to move out, its overflow item.
    static func attributes(_ event: Event, in config: ConfigName, ttl: Int64?) -> (event: Attributes, overflow: Attributes?) {
        var attributes = DynamoDBLayout.eventKey(config, event.revision)
        attributes["lsk"] = .s(DynamoDBLayout.historyKeySK(event.key, event.revision))
        attributes["kind"] = .s(event.kind.rawValue)
        attributes["key"] = .s(event.key.path)
        attributes["at"] = .number(event.at.milliseconds)
        if let item = event.item { attributes.merge(ItemCodec.fields(item, prefix: "n")) { $1 } }
        var overflow: Attributes?
        if let prev = event.prevItem {
            attributes.merge(ItemCodec.fields(prev, prefix: "p")) { $1 }
            if attributes.estimatedSize > DynamoDBLayout.maxItemBytes {
                attributes["pv"] = nil
                attributes["pov"] = .bool(true)
                var moved = DynamoDBLayout.key(DynamoDBLayout.historyPK(config), DynamoDBLayout.overflowSK(event.revision))
                moved["pv"] = .b(prev.value)
                overflow = moved
            }
        }
        if let ttl {
            attributes["ttl"] = .number(ttl)
            overflow?["ttl"] = .number(ttl)
        }
        return (attributes, overflow)
    }

    /// Whether the event's previous value lives in an overflow item.
    static func hasOverflow(_ attributes: Attributes) -> Bool { attributes["pov"]?.boolValue == true }

    /// The event of a history item; `overflow` supplies the previous value when it moved out.
    static func event(_ attributes: Attributes, overflow: Attributes? = nil) -> Event? {
        guard let sk = attributes["sk"]?.string, let revision = DynamoDBLayout.revision(ofHistorySK: sk),
              let kind = attributes["kind"]?.string.flatMap(Event.Kind.init(rawValue:)),
              let path = attributes["key"]?.string, let at = attributes["at"]?.int64
        else { return nil }
        let key = Key(stored: path)
        var prev = ItemCodec.item(attributes, key: key, prefix: "p")
        if hasOverflow(attributes), let value = overflow?["pv"]?.data { prev?.value = value }
        return Event(
            kind: kind, revision: revision, key: key, at: Date(milliseconds: at),
            item: ItemCodec.item(attributes, key: key, prefix: "n"), prevItem: prev
        )
    }

    /// Turns history items in sort-key order (events each followed by their overflow item,
    /// if any) into events; `missingOverflow` lists revisions whose overflow item was not
    /// among them.
    static func events(_ items: [Attributes]) -> (events: [Event], missingOverflow: [Revision]) {
        var events: [Event] = []
        var missing: [Revision] = []
        var index = 0
        while index < items.count {
            let attributes = items[index]
            index += 1
            guard let sk = attributes["sk"]?.string, let revision = DynamoDBLayout.revision(ofHistorySK: sk) else { continue }
            var overflow: Attributes?
            if hasOverflow(attributes) {
                if index < items.count, items[index]["sk"]?.string == DynamoDBLayout.overflowSK(revision) {
                    overflow = items[index]
                    index += 1
                } else {
                    missing.append(revision)
                }
            }
            if let event = event(attributes, overflow: overflow) { events.append(event) }
        }
        return (events, missing)
    }
}
