import Foundation

/// One change of a config, as `discfg log` lists it: the revision it made, when, who made
/// it and why, and the keys it changed.
public struct ChangeLogEntry: Hashable, Sendable {
    /// The revision the change made.
    public var revision: Revision
    /// When it was made.
    public var at: Date
    /// Who made it and why; nil when it was recorded without (unknown).
    public var attribution: Attribution?
    /// What it did to each key (under the prefix asked for), in order.
    public var events: [Event]
}

/// Which changes a change log lists.
public struct ChangeLogQuery: Hashable, Sendable {
    /// Only changes to keys under this prefix (and only those keys of each change).
    public var prefix: KeyPrefix
    /// Only changes by this principal: its id, its description, `kind:id`, or `unknown`
    /// for changes recorded without attribution; compared without case.
    public var by: String?
    /// Only changes made at or after this time.
    public var since: Date?
    /// Only the change that made this revision.
    public var revision: Revision?
    /// The most changes listed.
    public var limit: Int

    /// Creates a query.
    public init(prefix: KeyPrefix = .root, by: String? = nil, since: Date? = nil, revision: Revision? = nil, limit: Int = Limits.defaultPageSize) {
        self.prefix = prefix
        self.by = by
        self.since = since
        self.revision = revision
        self.limit = limit
    }

    /// Whether a change attributed `attribution` is one `by` names.
    public func admits(_ attribution: Attribution?) -> Bool {
        guard let by = by?.lowercased() else { return true }
        guard let principal = attribution?.principal else { return by == "unknown" }
        return [principal.id, principal.qualifiedID, principal.description ?? "", principal.displayName].contains { $0.lowercased() == by }
    }
}

extension ConfigStore {
    /// The config's changes that `query` admits, newest first, read from its retained
    /// history through ``events(in:scope:from:limit:maxBytes:)``: a window of recent
    /// revisions first, reaching further back only while fewer than `limit` changes were
    /// found (and, with `since`, while the window is not older than it).
    public func changeLog(in config: ConfigName, _ query: ChangeLogQuery) async throws -> [ChangeLogEntry] {
        try Limits.validatePageSize(query.limit)
        let info = try await configInfo(config)
        let oldest = info.compactedRevision.next
        if let revision = query.revision {
            guard revision <= info.revision, revision >= oldest else {
                throw DiscfgError.invalid(
                    "revision",
                    "config \"\(config)\" keeps the history of revisions \(oldest) to \(info.revision); revision \(revision) is not among them"
                )
            }
            let entries = try await entries(in: config, query, from: revision, through: revision)
            return entries.filter { query.admits($0.attribution) }
        }
        var found: [ChangeLogEntry] = []
        var through = info.revision
        var window: UInt64 = UInt64(max(query.limit * 4, 64))
        while through >= oldest, through > .zero, found.count < query.limit {
            let from = through.rawValue >= oldest.rawValue + window ? Revision(through.rawValue - window + 1) : oldest
            let entries = try await entries(in: config, query, from: from, through: through)
            found += entries.filter { entry in query.admits(entry.attribution) && query.since.map { entry.at >= $0 } ?? true }
            if let since = query.since, let first = entries.last, first.at < since { break }
            through = from.previous
            window = window.multipliedReportingOverflow(by: 4).overflow ? window : window * 4
        }
        return Array(found.prefix(query.limit))
    }

    /// The changes from `from` through `through` under the query's prefix, newest first.
    private func entries(in config: ConfigName, _ query: ChangeLogQuery, from: Revision, through: Revision) async throws -> [ChangeLogEntry] {
        var events: [Event] = []
        var next = from
        while next <= through {
            let batch = try await self.events(in: config, scope: .prefix(query.prefix), from: next, limit: Limits.maxPageSize)
            events += batch.events.filter { $0.revision <= through }
            guard batch.hasMore, batch.through >= next else { break }
            next = batch.through.next
        }
        var entries: [ChangeLogEntry] = []
        for event in events {
            if let last = entries.indices.last, entries[last].revision == event.revision {
                entries[last].events.append(event)
            } else {
                entries.append(ChangeLogEntry(revision: event.revision, at: event.at, attribution: event.attribution, events: [event]))
            }
        }
        return entries.reversed()
    }
}
