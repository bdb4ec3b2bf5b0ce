import Foundation

/// How long a config keeps its history of changes.
///
/// History is what answers reads at a past revision, a key's past versions and watches
/// that resume from an old revision; older events are dropped ("compacted").
public enum HistoryRetention: Hashable, Sendable {
    /// Keep events younger than this many days.
    case days(Int)
    /// Keep the newest N events of the config.
    case last(Int)
    /// Never drop history.
    case forever

    /// Days of history kept: up to a hundred years.
    static let days = NumberField("history", 1...36_500)
    /// Changes of history kept: up to a billion.
    static let changes = NumberField("history", 1...999_999_999)

    /// Thirty days, the default.
    public static let `default` = HistoryRetention.days(30)

    /// Parses `30d`, `500` (the last 500 changes) or `forever`, exactly as written.
    public init(parsing text: String) throws {
        let trimmed = text
        if trimmed == "forever" {
            self = .forever
        } else if trimmed.hasSuffix("d"), let days = try? Self.days.parse(trimmed.dropLast()) {
            self = .days(Int(days))
        } else if let count = try? Self.changes.parse(trimmed) {
            self = .last(Int(count))
        } else {
            throw DiscfgError.invalid("history", "history retention \"\(text.debugEscaped)\" is not one of: Nd (1 to 36500 days, e.g. 30d), N (the last 1 to 999999999 changes), forever")
        }
    }

    /// The text form accepted by ``init(parsing:)``.
    public var text: String {
        switch self {
        case .days(let days): "\(days)d"
        case .last(let count): String(count)
        case .forever: "forever"
        }
    }
}

extension HistoryRetention: Codable {
    public init(from decoder: any Decoder) throws {
        try self.init(parsing: decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}

/// A config's settings, set at creation and changed with `update`.
public struct ConfigSettings: Hashable, Sendable, Codable {
    /// How long history is kept.
    public var history: HistoryRetention
    /// What the config is for, shown by `info`.
    public var description: String?
    /// Where changes are announced when the config lives on AWS (the stream handler).
    public var notify: [NotificationTarget]
    /// How secret values are encrypted; nil until the config is given a key.
    public var encryption: EncryptionSettings?
    /// The most bytes of key paths and values the config may hold (etcd's
    /// `--quota-backend-bytes`, for one config); nil for no quota. A change that would
    /// take ``ConfigInfo/byteCount`` past it is refused with
    /// ``DiscfgError/Code/quotaExceeded``; deletes and changes that shrink always pass.
    /// From 1 to ``Limits/maxQuotaBytes``.
    public var quotaBytes: Int?
    /// Where the stream function publishes the config's snapshot after each change
    /// (`discfg update CFG --publish s3://BUCKET/PREFIX`); nil for nowhere.
    public var publish: SnapshotDestination?
    /// The alarms raised on the config, each under the etcd member it was raised for
    /// (``RaisedAlarm``): raised by etcd's `Alarm` ACTIVATE, cleared by its DEACTIVATE or
    /// an update; empty when none is. Any member's NOSPACE refuses writes of keys.
    public var alarms: Set<RaisedAlarm>

    /// Creates settings; the defaults keep 30 days of history, notify nobody, encrypt
    /// nothing, set no quota, publish nowhere and raise no alarm.
    public init(
        history: HistoryRetention = .default, description: String? = nil, notify: [NotificationTarget] = [],
        encryption: EncryptionSettings? = nil, quotaBytes: Int? = nil, publish: SnapshotDestination? = nil,
        alarms: Set<RaisedAlarm> = []
    ) {
        self.history = history
        self.description = description
        self.notify = notify
        self.encryption = encryption
        self.quotaBytes = quotaBytes
        self.publish = publish
        self.alarms = alarms
    }

    private enum CodingKeys: String, CodingKey {
        case history, description, notify, encryption, quotaBytes, publish, alarms
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        history = try container.decodeIfPresent(HistoryRetention.self, forKey: .history) ?? .default
        description = try container.decodeIfPresent(String.self, forKey: .description)
        notify = try container.decodeIfPresent([NotificationTarget].self, forKey: .notify) ?? []
        encryption = try container.decodeIfPresent(EncryptionSettings.self, forKey: .encryption)
        quotaBytes = try container.decodeIfPresent(Int64.self, forKey: .quotaBytes).map { Int(try NumberField.quotaBytes.check($0)) }
        // An empty string publishes nowhere, as in a patch.
        let location = try container.decodeIfPresent(String.self, forKey: .publish) ?? ""
        publish = location.isEmpty ? nil : try SnapshotDestination(parsing: location)
        alarms = try RaisedAlarm.decode(container, forKey: .alarms) ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(history, forKey: .history)
        try container.encodeIfPresent(description, forKey: .description)
        if !notify.isEmpty { try container.encode(notify, forKey: .notify) }
        try container.encodeIfPresent(encryption, forKey: .encryption)
        try container.encodeIfPresent(quotaBytes, forKey: .quotaBytes)
        try container.encodeIfPresent(publish, forKey: .publish)
        if !alarms.isEmpty { try container.encode(RaisedAlarm.names(alarms), forKey: .alarms) }
    }

    /// Checks a change of `change` bytes to a config `config` holding `size` bytes of key
    /// paths and values against ``quotaBytes``. A change that does not grow the config
    /// always passes, so a config over its quota (the quota was lowered) can still be
    /// cleaned up.
    /// - Throws: ``DiscfgError/Code/quotaExceeded`` naming the quota and the size.
    public func checkQuota(_ config: ConfigName, size: Int, change: Int) throws {
        guard let quotaBytes, change > 0, size + change > quotaBytes else { return }
        throw DiscfgError.quotaExceeded(config, quota: quotaBytes, size: size + change)
    }

    /// These settings with webhook secrets hidden, for callers who may not see them.
    public var redacted: ConfigSettings {
        var copy = self
        copy.notify = notify.map(\.redacted)
        return copy
    }
}

/// A change to some of a config's settings; nil fields stay as they are.
public struct ConfigSettingsPatch: Hashable, Sendable, Codable {
    /// New history retention.
    public var history: HistoryRetention?
    /// New description; an empty string clears it.
    public var description: String?
    /// New notification targets, replacing the old ones; an empty list clears them.
    public var notify: [NotificationTarget]?
    /// New encryption settings, replacing the old ones whole.
    public var encryption: EncryptionSettings?
    /// A new quota in bytes (1 to ``Limits/maxQuotaBytes``), or ``removeQuota`` (0) to
    /// remove the quota, as an empty description clears the description. In JSON, as for
    /// every field of a patch, `null` leaves it as it is.
    public var quotaBytes: Int?
    /// A new place to publish snapshots (`s3://BUCKET/PREFIX`), or an empty string to
    /// publish nowhere; checked with ``SnapshotDestination/init(parsing:field:)``.
    public var publish: String?
    /// The alarms raised, replacing the old ones whole; an empty set disarms them all.
    public var alarms: Set<RaisedAlarm>?
    /// Alarms raised beside those the config has, added to its settings as the store
    /// holds them, in the write that changes them: concurrent raises all stay raised.
    public var raiseAlarms: Set<RaisedAlarm>?
    /// Alarms disarmed, the others staying raised, as for ``raiseAlarms``; disarming
    /// an alarm that is not raised changes nothing.
    public var disarmAlarms: Set<RaisedAlarm>?

    /// The ``quotaBytes`` that removes a config's quota.
    public static let removeQuota = 0

    /// Creates a patch.
    public init(
        history: HistoryRetention? = nil, description: String? = nil, notify: [NotificationTarget]? = nil,
        encryption: EncryptionSettings? = nil, quotaBytes: Int? = nil, publish: String? = nil, alarms: Set<RaisedAlarm>? = nil,
        raiseAlarms: Set<RaisedAlarm>? = nil, disarmAlarms: Set<RaisedAlarm>? = nil
    ) {
        self.history = history
        self.description = description
        self.notify = notify
        self.encryption = encryption
        self.quotaBytes = quotaBytes
        self.publish = publish
        self.alarms = alarms
        self.raiseAlarms = raiseAlarms
        self.disarmAlarms = disarmAlarms
    }

    private enum CodingKeys: String, CodingKey {
        case history, description, notify, encryption, quotaBytes, publish, alarms, raiseAlarms, disarmAlarms
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        history = try container.decodeIfPresent(HistoryRetention.self, forKey: .history)
        description = try container.decodeIfPresent(String.self, forKey: .description)
        notify = try container.decodeIfPresent([NotificationTarget].self, forKey: .notify)
        encryption = try container.decodeIfPresent(EncryptionSettings.self, forKey: .encryption)
        if container.contains(.quotaBytes), !(try container.decodeNil(forKey: .quotaBytes)) {
            let value = try? container.decode(Int64.self, forKey: .quotaBytes)
            guard let value, value == 0 || NumberField.quotaBytes.range.contains(value) else {
                throw DiscfgError.invalid(
                    "quotaBytes", "quotaBytes must be a whole number of bytes from 1 to \(Limits.maxQuotaBytes), or 0 to remove the quota"
                )
            }
            quotaBytes = Int(value)
        }
        publish = try container.decodeIfPresent(String.self, forKey: .publish)
        if let publish, !publish.isEmpty { _ = try SnapshotDestination(parsing: publish) }
        alarms = try RaisedAlarm.decode(container, forKey: .alarms)
        raiseAlarms = try RaisedAlarm.decode(container, forKey: .raiseAlarms)
        disarmAlarms = try RaisedAlarm.decode(container, forKey: .disarmAlarms)
        try checkAlarms()
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(history, forKey: .history)
        try container.encodeIfPresent(description, forKey: .description)
        try container.encodeIfPresent(notify, forKey: .notify)
        try container.encodeIfPresent(encryption, forKey: .encryption)
        try container.encodeIfPresent(quotaBytes, forKey: .quotaBytes)
        try container.encodeIfPresent(publish, forKey: .publish)
        try container.encodeIfPresent(alarms.map(RaisedAlarm.names), forKey: .alarms)
        try container.encodeIfPresent(raiseAlarms.map(RaisedAlarm.names), forKey: .raiseAlarms)
        try container.encodeIfPresent(disarmAlarms.map(RaisedAlarm.names), forKey: .disarmAlarms)
    }

    /// Refuses a patch that replaces ``alarms`` and raises or disarms some too, or that
    /// raises and disarms one alarm: what it means would hang on the order they apply in.
    /// Stores check every patch (one decoded from JSON was checked then).
    /// - Throws: `invalidArgument`, field `alarms` or `raiseAlarms`.
    public func checkAlarms() throws {
        if alarms != nil, raiseAlarms != nil || disarmAlarms != nil {
            throw DiscfgError.invalid(
                "alarms", "a patch replaces alarms whole or raises and disarms some (raiseAlarms, disarmAlarms), not both"
            )
        }
        if let raiseAlarms, let disarmAlarms, let both = raiseAlarms.intersection(disarmAlarms).min() {
            throw DiscfgError.invalid("raiseAlarms", "\(both) is both raised and disarmed by one patch")
        }
    }

    /// Whether the patch changes nothing.
    public var isEmpty: Bool {
        history == nil && description == nil && notify == nil && encryption == nil && quotaBytes == nil && publish == nil && alarms == nil
            && raiseAlarms == nil && disarmAlarms == nil
    }

    /// `settings` with this patch applied: what every store does to the settings it
    /// holds, in the write that changes them (``raiseAlarms`` and ``disarmAlarms`` are
    /// relative to them). A patch that ``checkAlarms()`` refuses replaces the alarms,
    /// then disarms, then raises.
    public func applied(to settings: ConfigSettings) -> ConfigSettings {
        var result = settings
        if let history { result.history = history }
        if let description { result.description = description.isEmpty ? nil : description }
        if let notify { result.notify = notify }
        if let encryption { result.encryption = encryption }
        if let quotaBytes { result.quotaBytes = quotaBytes == Self.removeQuota ? nil : quotaBytes }
        // A patch from JSON was checked as it was decoded; one built in code is checked here.
        if let publish { result.publish = publish.isEmpty ? nil : try? SnapshotDestination(parsing: publish) }
        if let alarms { result.alarms = alarms }
        if let disarmAlarms { result.alarms.subtract(disarmAlarms) }
        if let raiseAlarms { result.alarms.formUnion(raiseAlarms) }
        return result
    }
}

/// What a store knows about one configuration.
public struct ConfigInfo: Hashable, Sendable {
    /// The config's name.
    public var name: ConfigName
    /// The revision of its latest change (0 when it never changed).
    public var revision: Revision
    /// History at or below this revision has been dropped.
    public var compactedRevision: Revision
    /// When the config was created.
    public var createdAt: Date
    /// When it last changed (a key or its settings).
    public var modifiedAt: Date
    /// Its settings.
    public var settings: ConfigSettings
    /// How many keys it holds (keys whose TTL ran out count until they are swept,
    /// within a second); nil when the store does not know (a DynamoDB config created
    /// before discfg counted keys).
    public var keyCount: Int?
    /// The bytes of its live keys' paths and values, what ``ConfigSettings/quotaBytes``
    /// bounds (keys whose TTL ran out count until swept, as for ``keyCount``); nil when
    /// the store does not know yet (a DynamoDB config from before discfg counted bytes,
    /// until its count is taken).
    ///
    /// History is not counted: it is bounded by the config's retention instead, and it
    /// is dropped in the background (compaction, DynamoDB's expiry), where a count kept in
    /// the same transaction as each change could not follow it. A config's storage is
    /// therefore at most its quota plus the history its retention keeps.
    public var byteCount: Int?

    /// Creates a config description.
    public init(
        name: ConfigName, revision: Revision, compactedRevision: Revision = .zero,
        createdAt: Date, modifiedAt: Date, settings: ConfigSettings, keyCount: Int? = 0, byteCount: Int? = 0
    ) {
        self.name = name
        self.revision = revision
        self.compactedRevision = compactedRevision
        self.createdAt = createdAt
        self.modifiedAt = modifiedAt
        self.settings = settings
        self.keyCount = keyCount
        self.byteCount = byteCount
    }
}

extension Event {
    /// What this change does to its config's key count: +1 for a key created, -1 for
    /// one deleted or expired, 0 for a key changed.
    public var keyCountChange: Int {
        switch (prevItem, item) {
        case (nil, _?): 1
        case (_?, nil): -1
        default: 0
        }
    }

    /// What this change does to its config's byte count (``ConfigInfo/byteCount``): the
    /// new item's key path and value less the previous item's.
    public var byteCountChange: Int {
        (item.map(PageBudget.size) ?? 0) - (prevItem.map(PageBudget.size) ?? 0)
    }
}

extension Sequence<Event> {
    /// What these changes together do to their config's byte count: what a quota is
    /// checked against, so a change that deletes as much as it writes passes.
    public var byteCountChange: Int { reduce(0) { $0 + $1.byteCountChange } }
}

extension ConfigInfo {
    /// This description with webhook secrets hidden.
    public var redacted: ConfigInfo {
        var copy = self
        copy.settings = settings.redacted
        return copy
    }
}

extension HistoryRetention {
    /// Events older than this may be dropped; nil when age is not the rule.
    public func cutoff(now: Date) -> Date? {
        guard case .days(let days) = self else { return nil }
        return Date(milliseconds: now.milliseconds - Int64(days) * 86_400_000)
    }

    /// Events at or below this revision may be dropped; nil when count is not the rule.
    public func lastDroppable(revision: Revision) -> Revision? {
        guard case .last(let count) = self, revision.rawValue > UInt64(count) else { return nil }
        return Revision(revision.rawValue - UInt64(count))
    }
}
