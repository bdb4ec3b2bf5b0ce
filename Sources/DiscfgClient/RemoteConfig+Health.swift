import DiscfgCore

/// Health that the application sees, for staged deployments that roll back on it
/// (`--rollback-on health`): after serving requests with what it read, the application
/// says how they went, and the client counts them against the version its entity sees of
/// each running deployment covering a key this handle has read — the candidate or the
/// stable revision, computed here as reads compute it. A deployment of keys the
/// application never read through this handle is not charged.
///
/// Recording never waits and never touches the network: counts are kept in memory and
/// sent to the server the client was made for (`POST /v1/{config}/health`, one report per
/// deployment and version) every `healthInterval` (5 s by default, see
/// ``ConfigClient/config(_:maxAge:flagTelemetry:entity:healthInterval:)``) and on
/// ``flushHealth()``. A send the server does not answer keeps its counts for the next; once
/// a deployment has ended its counts are dropped, without an error. Requests recorded
/// while no running deployment covers what the handle read count nothing.
///
/// ```swift
/// let cfg = try await client.config("myapp", entity: user.id)
/// let timeout = try await cfg.int("/api/timeout") ?? 30
/// do {
///     try await callUpstream(timeout: timeout)
///     cfg.recordRequest(failed: false)
/// } catch {
///     cfg.recordRequest(failed: true)
/// }
/// try cfg.recordRequests(120, failed: 3)   // or a batch the application counted itself
/// ```
extension RemoteConfig {
    /// Counts one request served as ``entity`` reads the config, failed or not.
    public nonisolated func recordRequest(failed: Bool) {
        recordRequest(failed: failed, as: entity)
    }

    /// Counts one request served as `entity` reads the config (the one given to
    /// ``item(_:as:)``; nil for plain reads), failed or not.
    public nonisolated func recordRequest(failed: Bool, as entity: String?) {
        health.record(HealthTally.Counts(requests: 1, errors: failed ? 1 : 0), entity: entity)
    }

    /// Counts `count` requests served as ``entity`` reads the config, `failed` of them failed.
    /// - Throws: `invalidArgument` for a negative number, more failed requests than
    ///   requests, or more than ``HealthObservation/maxCount`` at once; nothing is counted then.
    public nonisolated func recordRequests(_ count: Int, failed: Int) throws {
        try recordRequests(count, failed: failed, as: entity)
    }

    /// Counts `count` requests served as `entity` reads the config, `failed` of them failed.
    /// - Throws: as ``recordRequests(_:failed:)``.
    public nonisolated func recordRequests(_ count: Int, failed: Int, as entity: String?) throws {
        guard count >= 0 else { throw DiscfgError.invalid("count", "a request count is zero or more, not \(count)") }
        guard failed >= 0 else { throw DiscfgError.invalid("failed", "a failed request count is zero or more, not \(failed)") }
        guard failed <= count else {
            throw DiscfgError.invalid("failed", "\(failed) failed requests are more than the \(count) requests; count every request, failed or not")
        }
        guard UInt64(count) <= HealthObservation.maxCount else {
            throw DiscfgError.invalid("count", "at most \(HealthObservation.maxCount) requests are counted at once, not \(count)")
        }
        health.record(HealthTally.Counts(requests: UInt64(count), errors: UInt64(failed)), entity: entity)
    }

    /// Sends every request counted so far now, rather than at the next interval, and
    /// returns once the server has them (or they were dropped for a deployment that ended).
    /// - Throws: `unavailable` when the server did not answer: the counts are kept for the
    ///   next send; a refusal the next try would meet again (a token that may not report,
    ///   a server with nowhere to pass reports): those counts are dropped.
    public func flushHealth() async throws {
        try await health.flush()
    }
}
