import DiscfgCore
import GRPCCore
import Synchronization

/// Who may call the etcd API, which has no authentication of its own yet: everyone it
/// listens to, or nobody while the store's bearer tokens are required, followed live.
///
/// A server whose REST API requires tokens must not leave the same config open to
/// anonymous etcd clients, so with tokens required every call is refused, unary and
/// streaming, new and already open, with the error etcd gives a caller that presents no
/// user ("etcdserver: user name is empty", `INVALID_ARGUMENT`). Access never fails
/// open: while the token state cannot be read, calls are refused too (`UNAVAILABLE`).
///
/// ```swift
/// // Open until the first token is created on the store, then closed:
/// let etcd = EtcdServer(store: store, config: config, host: "127.0.0.1", port: 2379, access: .closedOnceTokensIssued(tokens))
/// ```
public enum EtcdAccess: Sendable {
    /// Every call is served (no tokens are ever required: `--auth none`, or `--insecure`).
    case open
    /// Every call is refused (tokens are always required: `--auth token`).
    case closed
    /// Calls are served until a token is issued on `tokens`, then refused, as the REST
    /// API's `--auth auto` requires tokens from then on (until `discfg token forget`).
    /// The store is read every ``EtcdAccessGate/readInterval``; a refusal starts within
    /// that and the time of a read, as the REST API's token cache follows the store.
    case closedOnceTokensIssued(any TokenStore)
}

/// The etcd API's access rule as its connections ask it, before any method runs: an
/// answer read from memory, kept current by ``follow()``.
final class EtcdAccessGate: Sendable {
    /// How often the token state is read.
    static let readInterval = Duration.milliseconds(500)
    /// How old a reading may be and still admit a call: past it (the store stopped
    /// answering) calls are refused until a read succeeds. The REST API trusts its token
    /// records as long (`Authenticator`'s cache lifetime).
    static let staleAfter = Duration.seconds(2)

    /// etcd's answer to a call without a user while authentication is on.
    static let userEmpty = RPCError(code: .invalidArgument, message: "etcdserver: user name is empty")
    /// The answer while the token state cannot be read.
    static let unknown = RPCError(
        code: .unavailable,
        message: "etcdserver: cannot tell whether this server requires tokens (its store did not answer); the etcd API refuses calls until it can"
    )

    private struct Reading {
        var required: Bool
        var at: ContinuousClock.Instant
    }

    let access: EtcdAccess
    /// Told when the rule's answer changes, in a sentence for the log.
    private let notice: @Sendable (String) -> Void
    private let reading = Mutex<Reading?>(nil)

    init(_ access: EtcdAccess, notice: @escaping @Sendable (String) -> Void = { _ in }) {
        self.access = access
        self.notice = notice
    }

    /// How often an open stream asks again whether it may go on: nil when the answer
    /// never changes from "yes".
    var recheckInterval: Duration? {
        if case .open = access { return nil }
        return Self.readInterval
    }

    /// Why a call may not run now (`now`, nil for the clock's), or nil when it may.
    /// Every call asks, twice: only the rule that follows the store reads the clock.
    func refusal(at now: ContinuousClock.Instant? = nil) -> RPCError? {
        switch access {
        case .open: return nil
        case .closed: return Self.userEmpty
        case .closedOnceTokensIssued:
            guard let reading = reading.withLock({ $0 }), reading.at.duration(to: now ?? .now) < Self.staleAfter else { return Self.unknown }
            return reading.required ? Self.userEmpty : nil
        }
    }

    /// Reads the token state once; a failed read leaves calls refused.
    func read() async {
        guard case .closedOnceTokensIssued(let tokens) = access else { return }
        let now = ContinuousClock.now
        let required: Bool?
        do {
            let issued = try await tokens.tokensWereIssued()
            required = issued ? true : try await !tokens.listTokens().isEmpty
        } catch {
            required = nil
        }
        let before = reading.withLock { reading in
            defer { reading = required.map { Reading(required: $0, at: now) } }
            return reading?.required
        }
        switch (before, required) {
        case (false, true?), (nil, true?): notice("tokens are required: the etcd API has no authentication yet and refuses every call")
        case (true, false?): notice("tokens are no longer required: the etcd API serves calls again")
        case (_?, nil): notice("the token state could not be read: the etcd API refuses every call until it can")
        default: break
        }
    }

    /// Reads the token state every ``readInterval`` until the task is cancelled.
    func follow() async {
        guard case .closedOnceTokensIssued = access else { return }
        while !Task.isCancelled {
            try? await Task.sleep(for: Self.readInterval)
            await read()
        }
    }
}
