import DiscfgCore
import Foundation

/// Item ⇄ attributes. Times are whole milliseconds; `ttl` is DynamoDB's epoch seconds.
enum ItemCodec {
    /// The attributes of a live key item.
    static func attributes(_ item: Item, in config: ConfigName) -> Attributes {
        var attributes = DynamoDBLayout.itemKey(config, item.key)
        attributes.merge(fields(item, in: .key)) { $1 }
        if let expiresAt = item.expiresAt {
            attributes[.expiresAt] = .number(expiresAt.milliseconds)
            attributes[.ttl] = .number(expiresAt.milliseconds / 1000 + DynamoDBLayout.keyBackstopSeconds)
        }
        return attributes
    }

    /// The item's fields in `slot`. A key item's expiry is left to the caller: it feeds
    /// the expiry index, which history items must stay out of, so only an event's slots
    /// carry it here.
    static func fields(_ item: Item, in slot: ItemSlot) -> Attributes {
        var attributes: Attributes = [:]
        attributes[.value, in: slot] = .b(item.value)
        attributes[.version, in: slot] = .number(item.version)
        attributes[.createRevision, in: slot] = .number(item.createRevision.rawValue)
        attributes[.modRevision, in: slot] = .number(item.modRevision.rawValue)
        attributes[.modifiedAt, in: slot] = .number(item.modifiedAt.milliseconds)
        if let contentType = item.contentType { attributes[.contentType, in: slot] = .s(contentType) }
        if slot != .key, let expiresAt = item.expiresAt { attributes[.expiresAt, in: slot] = .number(expiresAt.milliseconds) }
        return attributes
    }

    /// A key item read back; nil when the attributes are not a key item.
    static func item(_ attributes: Attributes) -> Item? {
        guard let path = attributes[.sk]?.string, path != DynamoDBLayout.metaSK else { return nil }
        return item(attributes, key: Key(stored: path), in: .key)
    }

    /// The item stored in `slot` for `key`, or nil when absent.
    static func item(_ attributes: Attributes, key: Key, in slot: ItemSlot) -> Item? {
        guard let version = attributes[.version, in: slot]?.uint64,
              let createRevision = attributes[.createRevision, in: slot]?.uint64,
              let modRevision = attributes[.modRevision, in: slot]?.uint64,
              let modified = attributes[.modifiedAt, in: slot]?.int64
        else { return nil }
        return Item(
            key: key, value: attributes[.value, in: slot]?.data ?? Data(), contentType: attributes[.contentType, in: slot]?.string,
            version: version, createRevision: Revision(createRevision), modRevision: Revision(modRevision),
            modifiedAt: Date(milliseconds: modified),
            expiresAt: attributes[.expiresAt, in: slot]?.int64.map { Date(milliseconds: $0) }
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
    /// - Parameters:
    ///   - position: the event's place among its revision's events (0 for the first or
    ///     only one).
    ///   - revisionEvents: how many events the revision holds.
    ///   - links: the event's links in its key's chain (``DynamoDBKeyChain/eventLinks``).
    static func attributes(
        _ event: Event, in config: ConfigName, position: Int = 0, revisionEvents: Int = 1, links: Attributes = [:], ttl: Int64?
    ) -> (event: Attributes, overflow: Attributes?) {
        var attributes = DynamoDBLayout.eventKey(config, event.revision, position: position)
        if revisionEvents > 1 { attributes[.revisionEvents] = .number(UInt64(revisionEvents)) }
        attributes.merge(links) { $1 }
        attributes[.kind] = .s(event.kind.rawValue)
        attributes[.key] = .s(event.key.path)
        attributes[.at] = .number(event.at.milliseconds)
        if let item = event.item { attributes.merge(ItemCodec.fields(item, in: .event)) { $1 } }
        if let attribution = event.attribution {
            attributes[.byKind] = .s(attribution.principal.kind.rawValue)
            attributes[.byID] = .s(attribution.principal.id)
            if let description = attribution.principal.description { attributes[.byDescription] = .s(description) }
            if let message = attribution.message { attributes[.message] = .s(message) }
        }
        var overflow: Attributes?
        if let prev = event.prevItem {
            attributes.merge(ItemCodec.fields(prev, in: .previous)) { $1 }
            if attributes.estimatedSize > DynamoDBLayout.maxItemBytes {
                attributes[.value, in: .previous] = nil
                attributes[.previousOverflowed] = .bool(true)
                var moved = DynamoDBLayout.key(DynamoDBLayout.historyPK(config), DynamoDBLayout.overflowSK(event.revision, position: position))
                moved[.value, in: .previous] = .b(prev.value)
                overflow = moved
            }
        }
        if let ttl {
            attributes[.ttl] = .number(ttl)
            overflow?[.ttl] = .number(ttl)
        }
        return (attributes, overflow)
    }

    /// Whether the event's previous value lives in an overflow item.
    static func hasOverflow(_ attributes: Attributes) -> Bool { attributes[.previousOverflowed]?.boolValue == true }

    /// The event of a history item; `overflow` supplies the previous value when it moved out.
    static func event(_ attributes: Attributes, overflow: Attributes? = nil) -> Event? {
        guard let sk = attributes[.sk]?.string, let revision = DynamoDBLayout.revision(ofHistorySK: sk),
              let kind = attributes[.kind]?.string.flatMap(Event.Kind.init(rawValue:)),
              let path = attributes[.key]?.string, let at = attributes[.at]?.int64
        else { return nil }
        let key = Key(stored: path)
        var prev = ItemCodec.item(attributes, key: key, in: .previous)
        if hasOverflow(attributes), let value = overflow?[.value, in: .previous]?.data { prev?.value = value }
        return Event(
            kind: kind, revision: revision, key: key, at: Date(milliseconds: at),
            item: ItemCodec.item(attributes, key: key, in: .event), prevItem: prev, attribution: attribution(attributes)
        )
    }

    /// Who made an event and why; nil for an event written before they were recorded.
    static func attribution(_ attributes: Attributes) -> Attribution? {
        guard let kind = attributes[.byKind]?.string.flatMap(Principal.Kind.init(rawValue:)), let id = attributes[.byID]?.string else { return nil }
        return Attribution(
            principal: Principal(kind: kind, id: id, description: attributes[.byDescription]?.string), message: attributes[.message]?.string
        )
    }

    /// Turns history items in sort-key order (events each followed by their overflow item,
    /// if any) into events, each with its sort key; `missingOverflow` lists the sort keys
    /// of events whose overflow item was not among them.
    static func events(_ items: [Attributes]) -> (events: [(sk: String, event: Event)], missingOverflow: [String]) {
        var events: [(sk: String, event: Event)] = []
        var missing: [String] = []
        var index = 0
        while index < items.count {
            let attributes = items[index]
            index += 1
            guard let sk = attributes[.sk]?.string, DynamoDBLayout.revision(ofHistorySK: sk) != nil else { continue }
            var overflow: Attributes?
            if hasOverflow(attributes) {
                if index < items.count, items[index][.sk]?.string == DynamoDBLayout.overflowSK(ofEventSK: sk) {
                    overflow = items[index]
                    index += 1
                } else {
                    missing.append(sk)
                }
            }
            if let event = event(attributes, overflow: overflow) { events.append((sk, event)) }
        }
        return (events, missing)
    }
}
