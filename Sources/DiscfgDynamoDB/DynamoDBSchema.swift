import DiscfgCore

// The table's layout, named once: every partition, sort-key form, attribute and index that
// discfg reads or writes. Readers and writers in this module use these names and spell none
// themselves; docs/dynamodb-layout.md describes the same layout for people. SchemaTests
// holds the three together.

/// Partitions and sort keys: where each kind of item lives.
enum DynamoDBLayout {
    /// The sort key of a config's meta item, in the config's own partition.
    static let metaSK = "/"
    /// The partition listing every config, one item per config.
    static let registryPK = "#configs"
    /// The partition of bearer tokens.
    static let tokensPK = "#tokens"
    /// In `tokensPK`: present once any token was issued, so revoking the last token does
    /// not open a server in `--auth auto` (until `discfg token forget` removes it).
    static let issuedMarkerSK = "#issued"
    /// The partition recording how far each notification target has been sent changes.
    static let deliveriesPK = "#notify"
    /// Appended to a config's name for its history partition.
    static let historySuffix = "#h"
    /// Appended to a config's name for its tombstones: one item per deleted key (sort key
    /// the key), holding where the key's chain of events ends.
    static let tombstoneSuffix = "#t"
    /// Appended to a config's name for its etcd leases: one item per lease, sort key the
    /// lease's id in decimal. Apart from the config's partition, so a keep-alive never
    /// meets a change's transaction on the meta item.
    static let leaseSuffix = "#l"
    /// Appended to a config's name for its deployments' health reports: one item per
    /// deployment and reporter, sort key `ID/REPORTER`, the report as JSON in `v`. Apart
    /// from the config's partition: a report makes no revision and meets no change.
    static let healthSuffix = "#r"
    /// How long a health report is kept after it was last written, by DynamoDB's TTL.
    static let healthRetentionSeconds: Int64 = 7 * 86_400
    /// Appended to an event's sort key for the item holding its overflowed previous value.
    static let overflowSuffix = "#prev"
    /// Separates the key from the revision in `lsk`; keys never hold control characters.
    static let keyRevisionSeparator = "\u{1}"
    /// An item larger than this is split: DynamoDB's limit is 400 KB including names.
    static let maxItemBytes = 390_000
    /// How long after a key's TTL its item may be removed by DynamoDB's own TTL, as a
    /// backstop when no sweeper ran (the store and sweeper expire it logically long before).
    static let keyBackstopSeconds: Int64 = 7 * 86_400

    static func historyPK(_ config: ConfigName) -> String { config.rawValue + historySuffix }
    static func tombstonePK(_ config: ConfigName) -> String { config.rawValue + tombstoneSuffix }
    static func tombstoneKey(_ config: ConfigName, _ key: Key) -> Attributes { Self.key(tombstonePK(config), key.path) }
    static func leasePK(_ config: ConfigName) -> String { config.rawValue + leaseSuffix }
    static func leaseKey(_ config: ConfigName, _ id: Int64) -> Attributes { key(leasePK(config), String(id)) }
    static func healthPK(_ config: ConfigName) -> String { config.rawValue + healthSuffix }
    /// The config whose health reports partition `pk` is, or nil for another partition.
    static func config(ofHealthPK pk: String) -> ConfigName? {
        guard pk.hasSuffix(healthSuffix) else { return nil }
        return try? ConfigName(String(pk.dropLast(healthSuffix.count)))
    }
    static func healthKey(_ config: ConfigName, _ id: String, _ reporter: String) -> Attributes { key(healthPK(config), id + "/" + reporter) }

    /// The config whose history partition `pk` is, or nil for any other partition.
    static func config(ofHistoryPK pk: String) -> ConfigName? {
        guard pk.hasSuffix(historySuffix) else { return nil }
        return try? ConfigName(String(pk.dropLast(historySuffix.count)))
    }

    static func revisionSK(_ revision: Revision) -> String {
        let digits = String(revision.rawValue)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits
    }

    /// Separates a revision from an event's position in it, for the second and later
    /// changes of a transaction (they share its revision).
    static let positionSeparator = "."
    /// Digits of an event's position; a transaction makes at most `Limits.maxTransactionChanges`.
    static let positionDigits = 4

    /// The sort key of the event at `position` within `revision`: the revision's 20 digits
    /// for the first (or only) event, then `.` and 4 digits for the others. Events sort by
    /// revision, then position, each followed by its overflow item.
    static func eventSK(_ revision: Revision, position: Int) -> String {
        guard position > 0 else { return revisionSK(revision) }
        let digits = String(position)
        return revisionSK(revision) + positionSeparator + String(repeating: "0", count: max(0, positionDigits - digits.count)) + digits
    }

    /// A sort key past every history item of `revision` and before those of the next.
    static func historyEndSK(_ revision: Revision) -> String { revisionSK(revision) + "~" }

    static func overflowSK(_ revision: Revision, position: Int = 0) -> String { eventSK(revision, position: position) + overflowSuffix }

    /// The overflow item's sort key for the event stored under `eventSK`.
    static func overflowSK(ofEventSK eventSK: String) -> String { eventSK + overflowSuffix }

    static func historyKeySK(_ key: Key, _ revision: Revision) -> String {
        key.path + keyRevisionSeparator + revisionSK(revision)
    }

    static func key(_ pk: String, _ sk: String) -> Attributes { [Attribute.pk.rawValue: .s(pk), Attribute.sk.rawValue: .s(sk)] }
    static func metaKey(_ config: ConfigName) -> Attributes { key(config.rawValue, metaSK) }
    static func itemKey(_ config: ConfigName, _ key: Key) -> Attributes { Self.key(config.rawValue, key.path) }
    static func eventKey(_ config: ConfigName, _ revision: Revision, position: Int = 0) -> Attributes {
        key(historyPK(config), eventSK(revision, position: position))
    }
    static func registryKey(_ config: ConfigName) -> Attributes { key(registryPK, config.rawValue) }

    /// The revision of an event's sort key, or nil for an overflow item.
    static func revision(ofHistorySK sk: String) -> Revision? {
        let utf8 = sk.utf8
        guard utf8.count == 20 || utf8.count == 21 + positionDigits, let value = UInt64(sk.prefix(20)) else { return nil }
        if utf8.count > 20 {
            let position = sk.dropFirst(20)
            guard position.hasPrefix(positionSeparator), UInt64(position.dropFirst()) != nil else { return nil }
        }
        return Revision(value)
    }
}

/// Every attribute name an item may carry. Cases are named for what they hold; the raw
/// value is the short name stored in the table (short names keep items small).
enum Attribute: String, CaseIterable, Sendable {
    // Keys of the table and of its indexes.
    /// Partition key.
    case pk
    /// Sort key.
    case sk
    /// History events of tables made before chains: key, separator, revision — the sort
    /// key of ``DynamoDBIndex/byKey``. No longer written.
    case lsk

    // A key's chain of events (``DynamoDBKeyChain``): on history events their links, on
    // key items and tombstones those of the key's newest event.
    /// The newest event's position within its revision (`mr`), absent when 0.
    case headPosition = "mp"
    /// The event's number in its key's chain, from 1 at its oldest.
    case chainSeq = "seq"
    /// Where the key's previous events are, newest first (at most 8): an event's place,
    /// revision × 10⁴ + position, as numbers.
    case chainBack = "back"
    /// On events: where the event's jump goes (Myers's rule), a place.
    case chainJump = "jump"
    /// On key items and tombstones: the newest event's jump, that event's jump, and so
    /// on to the chain's first event — places, so a change links a new event unread.
    case chainSpine = "spine"

    // An item's fields: on key items bare, on history events in a slot (``ItemSlot``).
    case value = "v"
    case version = "ver"
    case createRevision = "cr"
    case modRevision = "mr"
    case modifiedAt = "mod"
    case contentType = "ct"
    /// Expiry in epoch milliseconds; on key items the sort key of ``DynamoDBIndex/byExpiry``.
    case expiresAt = "exp"
    /// DynamoDB's TTL attribute (epoch seconds): a backstop for keys, retention for history.
    case ttl

    // History events.
    case kind
    case key
    case at
    /// The previous value moved to the event's overflow item.
    case previousOverflowed = "pov"
    /// On each event of a revision holding several (a transaction's): how many it holds.
    case revisionEvents = "of"
    /// On the first history event a transaction writes: its `ClientRequestToken`, read
    /// back when the transaction's answer was lost to learn whether it committed.
    case transactionToken = "tx"
    /// Who made the event's change: the principal's kind (`token`, `iam`, `certificate`,
    /// `local`, `anonymous`, `system`), its id and description; absent on events from
    /// before changes were attributed.
    case byKind = "bk"
    case byID = "bi"
    case byDescription = "bd"
    /// Why, when the change said (at most ``Attribution/maxMessageBytes``).
    case message = "msg"

    // Config meta (the registry item uses `created`).
    case revision
    case compacted
    case created
    case modified
    case settings
    case lock
    case purged
    case oldestAt
    case expiryCheck
    case overflowRevisions = "overflow"
    /// Revisions holding more than one event (a transaction's), with their event counts.
    case sharedRevisions = "shared"
    case deleting
    /// How many keys the config holds; absent on configs created before keys were counted.
    case keyCount = "keys"
    /// The bytes of the config's key paths and values (what its quota bounds); absent on
    /// configs created before bytes were counted, until a quota makes the store count them.
    case byteCount = "bytes"
    /// How many schemas the config holds (keys under `/.discfg/schema/`), so a change reads
    /// them only when there are some; absent on configs created before schemas, whose next
    /// change reads them once and writes the count.
    case schemaCount = "schemas"
    /// How many deployments run in the config (records under `/.discfg/deploying/`), so a
    /// change reads them only when there are some; absent on configs from before
    /// deployments, whose next change reads them once and writes the count.
    case deploymentCount = "deploying"

    // A change past one transaction (``BulkChange``): on the meta item while it is staged
    // and folded, on each key item it stages (a placeholder item for a key that has none).
    /// Meta item: the id of the change in progress.
    case bulkID = "bulk"
    /// Meta item: its first revision.
    case bulkRevision = "bulkrev"
    /// Meta item: `staging`, `committed` or `undoing`.
    case bulkState = "bulkstate"
    /// Meta item: until when its writer holds the config while staging (milliseconds).
    case bulkUntil = "bulkuntil"
    /// Meta item: the revision of the newest such change committed, so a listing that
    /// spans its commit can tell and read again.
    case lastBulkRevision = "lastbulk"
    /// Key item: the id of the staged change it takes part in.
    case pending = "pend"
    /// Key item: the place of the key's last event in that change.
    case pendingPlace = "pat"
    /// Key item: the chain head the key item or tombstone carries once folded (a map).
    case pendingHead = "phd"

    // Tokens.
    case tokenHash = "hash"
    case role
    /// The token's scopes as text (`demo`, `demo:/app/`, `demo:etcd:/registry/`); named
    /// `configs` from when a scope was a config name, which still reads as one.
    case tokenConfigs = "configs"
    case tokenDescription = "description"

    // etcd leases.
    /// The seconds the lease was granted for. Not `ttl`, DynamoDB's own TTL attribute,
    /// which would delete the item.
    case leaseTTL = "lttl"
    /// When the lease runs out unless renewed, epoch milliseconds. Not `exp`, the sort
    /// key of ``DynamoDBIndex/byExpiry``: every keep-alive would write the index too.
    case leaseExpiresAt = "lexp"
    /// Present (true) once a revocation claimed the lease: it is renewed no more.
    case revoking
    /// Who granted the lease: the principal's kind (`token`, `certificate`, `anonymous`,
    /// …) and id; absent on leases granted before owners were recorded.
    case leaseOwnerKind = "lok"
    case leaseOwnerID = "loi"
    /// The scopes' text the owner granted the lease by, when narrower than the whole
    /// config (absent: the whole config).
    case leaseOwnerScopes = "los"

    // Notification progress.
    case delivered
    case deliveredAt

    /// The name this attribute has in `slot`.
    func name(in slot: ItemSlot) -> String { slot.rawValue + rawValue }
}

/// Where an item's fields sit: bare on a key item, prefixed on a history event.
enum ItemSlot: String, Sendable {
    case key = ""
    /// The event's item (`nv`, `nver`, …).
    case event = "n"
    /// The item before the event (`pv`, `pver`, …).
    case previous = "p"
}

/// The table's local secondary indexes (strongly consistent; defined when the table is created).
enum DynamoDBIndex: String, CaseIterable, Sendable {
    /// On tables made before chains: history events ordered by key then revision
    /// (``Attribute/lsk``), keys only. No longer created; a walk of a key's chain that
    /// reaches events written before chains goes on with it.
    case byKey
    /// Only keys with a TTL, ordered by expiry (``Attribute/expiresAt``): a change or the
    /// sweeper finds due keys with one `Query`. Whole items, since a due key is expired at once.
    case byExpiry

    var sortKey: Attribute {
        switch self {
        case .byKey: .lsk
        case .byExpiry: .expiresAt
        }
    }

    var projection: String {
        switch self {
        case .byKey: "KEYS_ONLY"
        case .byExpiry: "ALL"
        }
    }
}

extension DynamoDBIndex {
    /// The indexes a new table gets, and the ones an existing table must have.
    static let created: [DynamoDBIndex] = [.byExpiry]
}

/// The table's definition, as `CreateTable` takes it and `deploy/template.yaml` repeats it.
enum DynamoDBTableDefinition {
    /// Key attributes and their DynamoDB types.
    static let keyAttributes: [(Attribute, String)] = [(.pk, "S"), (.sk, "S"), (.expiresAt, "N")]
    static let partitionKey = Attribute.pk
    static let sortKey = Attribute.sk
    static let ttlAttribute = Attribute.ttl
    /// History items reach the stream function whole.
    static let streamView = "NEW_IMAGE"
}

extension Dictionary where Key == String, Value == AttributeValue {
    /// The attribute `name` of an item (in `slot` for an item's fields on a history event).
    subscript(_ name: Attribute, in slot: ItemSlot = .key) -> AttributeValue? {
        get { self[name.name(in: slot)] }
        set { self[name.name(in: slot)] = newValue }
    }
}

/// Expression text whose attribute names are interpolated (`"\(.lock) = :lock"`): each
/// becomes a `#name` placeholder with its entry in `ExpressionAttributeNames`, so an
/// expression never spells a name and never collides with DynamoDB's reserved words.
struct ExpressionText: ExpressibleByStringInterpolation, Sendable {
    var text: String
    var names: [String: String]

    init(stringLiteral value: String) {
        text = value
        names = [:]
    }

    init(stringInterpolation: StringInterpolation) {
        text = stringInterpolation.text
        names = stringInterpolation.names
    }

    /// `names` as a comma-separated projection.
    init(projecting attributes: [Attribute]) {
        text = attributes.map { "#" + $0.rawValue }.joined(separator: ", ")
        names = Dictionary(uniqueKeysWithValues: attributes.map { ("#" + $0.rawValue, $0.rawValue) })
    }

    struct StringInterpolation: StringInterpolationProtocol {
        var text = ""
        var names: [String: String] = [:]

        init(literalCapacity: Int, interpolationCount: Int) { text.reserveCapacity(literalCapacity + 8 * interpolationCount) }
        mutating func appendLiteral(_ literal: String) { text += literal }

        mutating func appendInterpolation(_ attribute: Attribute) {
            text += "#" + attribute.rawValue
            names["#" + attribute.rawValue] = attribute.rawValue
        }
    }
}

extension Optional where Wrapped == [String: String] {
    /// These names with `more` added; nil when there are none.
    func adding(_ more: [String: String]) -> [String: String]? {
        let merged = (self ?? [:]).merging(more) { $1 }
        return merged.isEmpty ? nil : merged
    }
}
