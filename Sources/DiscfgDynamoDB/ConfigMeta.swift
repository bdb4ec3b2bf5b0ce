import DiscfgCore
import Foundation

/// A config's meta item (`pk=CONFIG, sk=/`): its clock, its lock and its bookkeeping.
///
/// Every write of the meta item is conditioned on `lock` and increments it, so a change
/// and a settings update can never overwrite each other (the revision alone does not move
/// when only settings change).
struct ConfigMeta: Sendable, Equatable {
    var info: ConfigInfo
    /// Bumped by every write of this item; the optimistic lock.
    var lock: UInt64
    /// History at or below this revision has been physically deleted (`.last(N)`
    /// retention deletes it in later transactions as their action budget allows).
    var purgedRevision: Revision
    /// When the oldest retained event happened, if known: lets a change tell without a
    /// read whether time-based retention has anything to compact.
    var oldestEventAt: Date?
    /// No key of the config expires before this time; nil when no key has a TTL. A lower
    /// bound, so a change looks for due keys only when one may be due.
    var expiryCheckAt: Date?
    /// Revisions whose previous value lives in an overflow item, so purging deletes it too.
    var overflowRevisions: Set<UInt64>
    /// Revisions that hold more than one event (a transaction's changes share one), with
    /// how many, so purging deletes every one of their history items.
    var sharedRevisions: [UInt64: Int]
    /// Set while the config is being deleted: it no longer exists for any reader.
    var deleting: Bool
    /// How many schemas the config holds; nil when not known yet (a config from before
    /// schemas were counted).
    var schemaCount: Int?
    /// How many deployments run in the config (records under `/.discfg/deploying/`); nil
    /// when not known yet (a config from before deployments were counted).
    var deploymentCount: Int?
    /// The change past one transaction being staged or folded, if any: while it is
    /// there, no other change commits.
    var bulk: BulkChange?
    /// The revision of the newest ``BulkChange`` committed (zero: none).
    var lastBulkRevision: Revision

    init(info: ConfigInfo) {
        self.info = info
        lock = 0
        purgedRevision = .zero
        oldestEventAt = nil
        expiryCheckAt = nil
        overflowRevisions = []
        sharedRevisions = [:]
        deleting = false
        schemaCount = 0
        deploymentCount = 0
        bulk = nil
        lastBulkRevision = .zero
    }

    init?(_ attributes: Attributes) {
        guard let pk = attributes[.pk]?.string, let name = try? ConfigName(pk),
              let revision = attributes[.revision]?.uint64,
              let created = attributes[.created]?.int64, let modified = attributes[.modified]?.int64
        else { return nil }
        let settings = attributes[.settings]?.string
            .flatMap { try? JSONDecoder().decode(ConfigSettings.self, from: Data($0.utf8)) } ?? ConfigSettings()
        info = ConfigInfo(
            name: name, revision: Revision(revision),
            compactedRevision: Revision(attributes[.compacted]?.uint64 ?? 0),
            createdAt: Date(milliseconds: created), modifiedAt: Date(milliseconds: modified), settings: settings,
            keyCount: attributes[.keyCount]?.int64.map { Int(clamping: $0) },
            byteCount: attributes[.byteCount]?.int64.map { Int(clamping: $0) }
        )
        lock = attributes[.lock]?.uint64 ?? 0
        purgedRevision = Revision(attributes[.purged]?.uint64 ?? 0)
        oldestEventAt = attributes[.oldestAt]?.int64.map { Date(milliseconds: $0) }
        expiryCheckAt = attributes[.expiryCheck]?.int64.map { Date(milliseconds: $0) }
        overflowRevisions = Set(attributes[.overflowRevisions]?.uint64Set ?? [])
        var shared: [UInt64: Int] = [:]
        if case .m(let counts)? = attributes[.sharedRevisions] {
            for (revision, count) in counts {
                if let revision = UInt64(revision), let count = count.uint64 { shared[revision] = Int(clamping: count) }
            }
        }
        sharedRevisions = shared
        deleting = attributes[.deleting]?.boolValue == true
        schemaCount = attributes[.schemaCount]?.int64.map { Int(clamping: $0) }
        deploymentCount = attributes[.deploymentCount]?.int64.map { Int(clamping: $0) }
        bulk = BulkChange(attributes)
        lastBulkRevision = Revision(attributes[.lastBulkRevision]?.uint64 ?? 0)
    }

    /// The whole meta item, with `lock` as stored.
    var attributes: Attributes {
        var attributes = DynamoDBLayout.metaKey(info.name)
        attributes[.revision] = .number(info.revision.rawValue)
        attributes[.compacted] = .number(info.compactedRevision.rawValue)
        attributes[.created] = .number(info.createdAt.milliseconds)
        attributes[.modified] = .number(info.modifiedAt.milliseconds)
        let settings = (try? JSONEncoder().encode(info.settings)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        attributes[.settings] = .s(settings)
        attributes[.lock] = .number(lock)
        if let keyCount = info.keyCount { attributes[.keyCount] = .number(Int64(keyCount)) }
        if let byteCount = info.byteCount { attributes[.byteCount] = .number(Int64(byteCount)) }
        attributes[.purged] = .number(purgedRevision.rawValue)
        if let oldestEventAt { attributes[.oldestAt] = .number(oldestEventAt.milliseconds) }
        if let expiryCheckAt { attributes[.expiryCheck] = .number(expiryCheckAt.milliseconds) }
        if !overflowRevisions.isEmpty { attributes[.overflowRevisions] = .ns(overflowRevisions.sorted().map(String.init)) }
        if !sharedRevisions.isEmpty {
            attributes[.sharedRevisions] = .m(Dictionary(uniqueKeysWithValues: sharedRevisions.map { (String($0.key), .number(UInt64($0.value))) }))
        }
        if deleting { attributes[.deleting] = .bool(true) }
        if let schemaCount { attributes[.schemaCount] = .number(Int64(schemaCount)) }
        if let deploymentCount { attributes[.deploymentCount] = .number(Int64(deploymentCount)) }
        if let bulk { attributes.merge(bulk.attributes) { $1 } }
        if lastBulkRevision > .zero { attributes[.lastBulkRevision] = .number(lastBulkRevision.rawValue) }
        return attributes
    }
}

extension HistoryRetention {
    /// How late time-based compaction may run, so a busy config pays for the extra
    /// history `Query` at most once per this interval: a hundredth of the retention,
    /// at most an hour. Native TTL deletes events only a day after that, so nothing is
    /// physically gone before `compactedRevision` says so.
    var compactionGrace: TimeInterval {
        guard case .days(let days) = self else { return 0 }
        return min(3600, Double(days) * 864)
    }

    /// The native `ttl` (epoch seconds) of an event at `at`, or nil when history is not
    /// kept by age.
    func historyTTL(at: Date) -> Int64? {
        guard case .days(let days) = self else { return nil }
        return at.milliseconds / 1000 + Int64(days) * 86_400 + Int64(compactionGrace) + 86_400
    }
}
