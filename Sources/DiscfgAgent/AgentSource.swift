import DiscfgCore
import Foundation
import Synchronization

/// Where a read-only copy gets its configs: a store (``StoreSource``), or a published
/// snapshot (an S3 object). The follower asks for the revision each interval, and only
/// when it moved for the changes or the whole state.
public protocol AgentSource: Sendable {
    /// The source as refusals and logs name it, e.g. `dynamodb:///discfg`.
    var description: String { get }
    /// The config's current revision, by the cheapest read the source has.
    /// - Throws: `configNotFound`, `unavailable`.
    func revision(of config: ConfigName) async throws -> Revision
    /// The changes after `revision`, oldest first, and the last revision they account for;
    /// nil when the source cannot tell them (its history was compacted past `revision`,
    /// or it keeps none): the follower then loads the whole config.
    func changes(in config: ConfigName, after revision: Revision) async throws -> (events: [Event], through: Revision)?
    /// The config's whole state at one revision.
    func load(_ config: ConfigName) async throws -> PublishedSnapshot
    /// Told of a copy served without the source (the agent's cache, at start), so a source
    /// that refuses to go back in revision starts from it. Does nothing by default.
    func resume(from copy: PublishedSnapshot)
}

extension AgentSource {
    public func resume(from copy: PublishedSnapshot) {}
}

/// A source that can list its configs, so an agent can hold every config whose name
/// starts with a prefix (`discfg agent --prefix`), re-listed each interval.
public protocol ConfigListingSource: AgentSource {
    /// The names of the configs the source has now, one request (or a few pages).
    func configNames() async throws -> [ConfigName]
}

/// A ``ConfigStore`` as an agent's source: the revision from ``ConfigReading/configInfo(_:)``
/// (on DynamoDB one GetItem of the config's meta item), changes from its event history,
/// page by page; on a store that is ``EventRangeReading``, bounded by the info the check
/// just read, so the store need not read it again (on DynamoDB one `Query` a change).
public struct StoreSource: AgentSource {
    /// The store.
    public let store: any ConfigStore
    public let description: String
    /// The most events read in one page.
    public var pageSize: Int
    /// The info each config's last check read.
    private let checked = CheckedInfo()

    /// A source reading `store`, named `description` (its location).
    public init(_ store: any ConfigStore, description: String, pageSize: Int = Limits.maxPageSize) {
        self.store = store
        self.description = description
        self.pageSize = pageSize
    }

    public func revision(of config: ConfigName) async throws -> Revision {
        let info = try await store.configInfo(config)
        checked.infos.withLock { $0[config] = info }
        return info.revision
    }

    public func changes(in config: ConfigName, after revision: Revision) async throws -> (events: [Event], through: Revision)? {
        var events: [Event] = []
        var through = revision
        // Any info a check read is committed, so it bounds the read; one older than the
        // copy's revision bounds nothing.
        let known = checked.infos.withLock { $0[config] }.flatMap { $0.revision > revision ? $0 : nil }
        let ranged = store as? any EventRangeReading
        while true {
            let batch: EventBatch
            do {
                if let ranged, let known {
                    batch = try await ranged.events(in: config, from: through.next, upTo: known, limit: pageSize, maxBytes: Limits.maxPageBytes)
                } else {
                    batch = try await store.events(in: config, scope: .prefix(.root), from: through.next, limit: pageSize, maxBytes: Limits.maxPageBytes)
                }
            } catch let error as DiscfgError where error.code == .compacted {
                return nil
            }
            events += batch.events
            let moved = batch.through > through
            through = max(through, batch.through)
            guard batch.hasMore, moved, events.count < Limits.maxTransactionChanges else { break }
        }
        return (events, through)
    }

    public func load(_ config: ConfigName) async throws -> PublishedSnapshot {
        try await PublishedSnapshot.read(from: store, config: config)
    }
}

/// The info each config's last check read, shared by the copies of a ``StoreSource``.
private final class CheckedInfo: Sendable {
    let infos = Mutex<[ConfigName: ConfigInfo]>([:])
}

extension StoreSource: ConfigListingSource {
    /// The store's configs (on DynamoDB a Query of its registry and a BatchGetItem of the metas).
    public func configNames() async throws -> [ConfigName] {
        try await store.listConfigs().map(\.name)
    }
}
