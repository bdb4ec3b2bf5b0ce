import DiscfgCore
import DiscfgService

/// What a route's handler performs its operations with: the caller the request was
/// admitted as, the config its path names, the reason it gives for its changes and its
/// deadline, handed to the one chain (``DiscfgService/Pipeline``) with each operation the
/// handler decodes. A handler decides nothing of who may, who did, what a refusal shows,
/// or how long it may take; it marks where its write begins (``RequestDeadlines/commit(_:)``),
/// after reading the request's body.
///
/// ```swift
/// let key = try Key(request.pathRemainder(context))
/// return try await perform(Action(.get, on: config, reaching: .key(key))) { try await store.get(key, in: config) }
/// ```
struct Performer: Sendable {
    /// Who calls.
    let caller: Caller
    /// The config the route's path names; nil for routes of the server.
    let config: ConfigName?
    /// The `Discfg-Message` of a request that changes something.
    let message: String?
    /// The request's deadline (``RequestDeadlines``); nil for a stream.
    let deadline: Deadline?

    /// Runs `step` as `operation` (``DiscfgService/Pipeline/perform(_:by:message:deadline:writeStart:_:)``);
    /// `message` (a transaction document's own) is the reason when the request's header
    /// gives none.
    func callAsFunction<T>(_ operation: Action, message: String? = nil, _ step: () async throws -> T) async throws -> T {
        try await Pipeline.perform(operation, by: caller, message: self.message ?? message, deadline: deadline, writeStart: .marked, step)
    }
}
