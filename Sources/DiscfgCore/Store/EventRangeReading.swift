/// A store that reads a config's events up to a revision the caller has just read with
/// ``ConfigReading/configInfo(_:)``, without reading the config's state again: a follower
/// that checked the revision gets the changes in one request fewer (on DynamoDB, one
/// `Query` in place of a `GetItem` of the meta item and the `Query`).
///
/// ```swift
/// let info = try await store.configInfo(config)
/// if info.revision > held, let reader = store as? any EventRangeReading {
///     let batch = try await reader.events(in: config, from: held.next, upTo: info, limit: 1000, maxBytes: Limits.maxPageBytes)
/// }
/// ```
public protocol EventRangeReading: ConfigStore {
    /// The config's events (every key) from `from` through at most `info.revision`,
    /// oldest first, paged as ``ConfigReading/events(in:scope:from:limit:maxBytes:)``.
    ///
    /// - Parameter info: the config as ``ConfigReading/configInfo(_:)`` gave it; its revision
    ///   bounds the batch, so it never runs ahead of what was committed.
    /// - Throws: `compacted` when `from` is at or below `info.compactedRevision`, or when
    ///   the history from `from` on is no longer whole (dropped since `info` was read).
    func events(in config: ConfigName, from: Revision, upTo info: ConfigInfo, limit: Int, maxBytes: Int) async throws -> EventBatch
}
