import DiscfgCore

/// A transport's hold over a request it may cut short before its answer is due: the
/// REST router's ticker that abandons a request past its timeout, a gRPC call answered
/// `DEADLINE_EXCEEDED` when the client's `grpc-timeout` passes. The pipeline tells it
/// when the request's write begins (``Pipeline/commit(_:)``), and from then on the
/// transport leaves the request to run to its end: a change is never abandoned half-way.
///
/// A transport binds its hold around the request (``Pipeline/cutoff``); a request with
/// none (the event loops' writes) is cut short by nothing but its store.
public protocol RequestCutoff: Sendable {
    /// Takes the request out of the transport's reach for good, as its write begins.
    /// - Throws: `unavailable` (field `timeout`) when the transport has already cut the
    ///   request off; then the write does not begin, and nothing was changed.
    func writeBegins() throws(DiscfgError)
}

extension Pipeline {
    /// Where a write action's step begins to change the store.
    public enum WriteStart: Sendable {
        /// The step is the write: it begins as the step does (the event loops' PUT, an
        /// etcd call).
        case withStep
        /// The step first reads what it needs (a REST request's body) and marks where
        /// its write begins with ``Pipeline/commit(_:)``.
        case marked
    }

    /// The hold of the transport that brought the current request, if it has one that
    /// may cut the request short (``RequestCutoff``).
    @TaskLocal public static var cutoff: (any RequestCutoff)?

    /// Begins the current request's write and runs it to its end, whatever the deadline
    /// then: the caller learns what the store did. A deadline that passed before the
    /// write began fails it with `unavailable` (field `timeout`), and nothing is written.
    ///
    /// ```swift
    /// try await Pipeline.perform(action, by: caller, deadline: deadline, writeStart: .marked) {
    ///     let value = try await request.body()
    ///     return try await Pipeline.commit { try await store.set(key, to: value, in: config) }
    /// }
    /// ```
    public static func commit<T>(_ write: () async throws -> T) async throws -> T {
        try checkDeadline()
        try cutoff?.writeBegins()
        return try await write()
    }

    /// Throws `unavailable` (field `timeout`) when the current deadline has passed.
    private static func checkDeadline() throws(DiscfgError) {
        if let deadline = Deadline.current, deadline.remaining <= .zero { throw Deadline.exceeded() }
    }
}
