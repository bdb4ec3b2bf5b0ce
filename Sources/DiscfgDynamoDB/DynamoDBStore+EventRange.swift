import DiscfgCore

extension DynamoDBStore: EventRangeReading {
    /// The events after a revision the caller has just read from the meta item: one
    /// strongly consistent `Query` (a page of 1 MB at most), without reading the meta
    /// item again. `info` may come from an eventually consistent read: an older revision
    /// only bounds the batch lower, and history dropped since (an older compacted
    /// revision) is caught as a hole in the revisions read, as `compacted`. History kept
    /// for some days is not trimmed here, as ``events(in:scope:from:limit:maxBytes:)``
    /// trims it: each commit trims it too, and what is read is checked whole.
    public func events(in config: ConfigName, from: Revision, upTo info: ConfigInfo, limit: Int, maxBytes: Int) async throws -> EventBatch {
        try Limits.validatePageSize(limit)
        try Limits.validatePageBytes(maxBytes)
        guard info.name == config else {
            throw DiscfgError.invalid("info", "the config info given is of \"\(info.name)\", not \"\(config)\"")
        }
        return try await events(in: config, scope: .prefix(.root), from: max(from, Revision(1)), committed: info, limit: limit, maxBytes: maxBytes, whole: true)
    }
}
