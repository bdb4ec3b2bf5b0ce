import Foundation

/// An alarm raised on a config, as etcd raises one on its cluster (`etcdctl alarm`).
///
/// Kept in the config's settings (``ConfigSettings/alarms``), under the etcd member it
/// was raised for (``RaisedAlarm``), so every server on the store sees it and it
/// outlives them, until it is disarmed. The store checks it in the
/// transaction of every change, where it checks the quota (``ConfigSettings/checkChange(_:size:change:writesKeys:)``),
/// so every face refuses alike.
///
/// ```swift
/// _ = try await store.updateConfig(config, ConfigSettingsPatch(alarms: [.noSpace]))
/// try await store.set("/a", "x", in: config)  // throws quotaExceeded, field "alarms"
/// ```
public enum ConfigAlarm: String, Hashable, Sendable, CaseIterable, Comparable {
    /// etcd's NOSPACE. While it is raised the config refuses every change that writes a
    /// key (a set, a patch, an import, a transaction with a put, whatever its size) and
    /// etcd lease grants, as etcd's capped applier does; deletes, reads and compaction
    /// pass, so space can be freed before it is disarmed.
    case noSpace = "NOSPACE"

    public static func < (lhs: ConfigAlarm, rhs: ConfigAlarm) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The alarm named `name` as etcd spells it (`NOSPACE`).
    /// - Throws: `invalidArgument` (field `alarms`) naming the alarms there are.
    public init(named name: String) throws {
        guard let alarm = ConfigAlarm(rawValue: name) else {
            throw DiscfgError.invalid(
                "alarms", "\"\(name.debugEscaped)\" is not an alarm; the alarms are: \(ConfigAlarm.allCases.map(\.rawValue).joined(separator: ", ")) (each as the config's own member's, or under an etcd member id after @, as in NOSPACE@0)"
            )
        }
        self = alarm
    }
}

extension ConfigSettings {
    /// Checks one change to `config`, in the store's transaction, before it commits:
    /// against the raised alarms, then against the quota (``checkQuota(_:size:change:)``).
    /// - Parameters:
    ///   - size: the config's bytes of key paths and values before the change.
    ///   - change: what the change does to them.
    ///   - writesKeys: whether the change writes any key (an event with an item), as
    ///     opposed to deleting or expiring keys only.
    /// - Throws: ``DiscfgError/alarmRaised(_:)`` for a change that writes a key while
    ///   NOSPACE is raised under any member (``RaisedAlarm``); ``DiscfgError/Code/quotaExceeded`` past the quota.
    public func checkChange(_ config: ConfigName, size: Int, change: Int, writesKeys: Bool) throws {
        if writesKeys, isRaised(.noSpace) { throw DiscfgError.alarmRaised(config) }
        try checkQuota(config, size: size, change: change)
    }

    /// Checks an etcd lease grant on `config` against the raised alarms (etcd's capped
    /// applier refuses grants too).
    /// - Throws: ``DiscfgError/alarmRaised(_:)`` while NOSPACE is raised under any member.
    public func checkLeaseGrant(_ config: ConfigName) throws {
        if isRaised(.noSpace) { throw DiscfgError.alarmRaised(config) }
    }
}

extension Sequence<Event> {
    /// Whether any of these changes writes a key (rather than deleting or expiring one):
    /// what a raised NOSPACE refuses.
    public var writesKeys: Bool { contains { $0.item != nil } }
}

extension DiscfgError {
    /// The field of a change refused because an alarm is raised.
    public static let alarmsField = "alarms"

    /// A change refused because `config` has NOSPACE raised: `quotaExceeded` (507 over
    /// REST, etcd's "database space exceeded" over the etcd API), field `alarms`.
    public static func alarmRaised(_ config: ConfigName) -> DiscfgError {
        DiscfgError(
            .quotaExceeded,
            "config \"\(config)\" has its NOSPACE alarm raised, so nothing was changed: it takes no writes of keys until the alarm is disarmed (deletes and reads pass); free space, then disarm it (`discfg update \(config) '{\"alarms\": []}'`, or `etcdctl alarm disarm`)",
            field: alarmsField
        )
    }
}
