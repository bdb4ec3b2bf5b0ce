import DiscfgCore
import GRPCCore
import Synchronization

/// Who may call the etcd API: everyone it listens to, or, while the store's bearer
/// tokens are required, callers that authenticated with one, followed live.
///
/// A caller authenticates as etcd clients do, with `Auth.Authenticate`: its user name is
/// a discfg token's id and its password the whole token (`etcdctl --user ID --password
/// dcfg_…`, or `--user ID:dcfg_…`). The answer is an etcd token bound to that discfg
/// token (``EtcdAccessGate``'s sessions), which later calls carry in their `token`
/// metadata, and each is allowed by the discfg token's role and scopes (``EtcdCaller``).
/// A call without one is refused with the error etcd gives a caller that presents no
/// user ("etcdserver: user name is empty", `INVALID_ARGUMENT`). Access never fails open:
/// while the token state cannot be read, calls are refused too (`UNAVAILABLE`).
///
/// ```swift
/// // Open until the first token is created on the store, then tokens are required:
/// var etcd = EtcdServer(store: store, config: config, host: "127.0.0.1", port: 2379)
/// etcd.access = .tokensOnceIssued(tokens)
/// ```
public enum EtcdAccess: Sendable {
    /// Every call is served, and `Authenticate` answers that authentication is not
    /// enabled (no tokens are ever required: `--auth none`).
    case open
    /// Every call needs an etcd token (tokens are always required: `--auth token`).
    case tokensRequired(any TokenStore)
    /// Calls are served until a token is issued on the store, then need an etcd token,
    /// as the REST API's `--auth auto` requires tokens from then on (until `discfg token
    /// forget`).
    case tokensOnceIssued(any TokenStore)

    var tokens: (any TokenStore)? {
        switch self {
        case .open: nil
        case .tokensRequired(let tokens), .tokensOnceIssued(let tokens): tokens
        }
    }
}

/// Whom a call runs as, or why it may not run.
enum EtcdAdmission {
    /// A call on a server that requires no tokens now.
    case anonymous
    /// A call carrying a valid etcd token.
    case caller(EtcdCaller)
    /// A call that is refused, with etcd's error.
    case refused(RPCError)
}

/// The etcd API's access rule as its connections ask it, before any method runs: an
/// answer read from memory, kept current by ``follow()``. The store's valid tokens are
/// read every ``readInterval``; a session of a token revoked since is refused from the
/// next reading, and open streams of it end within ``readInterval`` after that.
final class EtcdAccessGate: Sendable {
    /// How often the token state is read.
    static let readInterval = Duration.milliseconds(500)
    /// How old a reading may be and still admit a call: past it (the store stopped
    /// answering) calls are refused until a read succeeds. The REST API trusts its token
    /// records as long (`Authenticator`'s cache lifetime).
    static let staleAfter = Duration.seconds(2)

    /// The answer while the token state cannot be read.
    static let unknown = RPCError(
        code: .unavailable,
        message: "etcdserver: cannot tell whether this server requires tokens (its store did not answer); the etcd API refuses calls until it can"
    )

    struct Reading {
        var required: Bool
        var at: ContinuousClock.Instant
        /// The store's valid tokens by id.
        var tokens: [String: AccessToken]
    }

    struct State {
        var reading: Reading?
        var sessions = EtcdSessions()
    }

    let access: EtcdAccess
    /// The config the etcd API serves: a token whose scopes miss it may authenticate,
    /// and is refused every other call.
    let config: ConfigName?
    /// Told when the rule's answer changes, in a sentence for the log.
    private let notice: @Sendable (String) -> Void
    let state = Mutex(State())

    init(_ access: EtcdAccess, config: ConfigName? = nil, notice: @escaping @Sendable (String) -> Void = { _ in }) {
        self.access = access
        self.config = config
        self.notice = notice
    }

    /// How often an open stream asks again whether it may go on: nil when the answer
    /// never changes from "yes".
    var recheckInterval: Duration? {
        if case .open = access { return nil }
        return Self.readInterval
    }

    /// Whom a call carrying `token` (its `token` metadata, nil without) runs as, or why
    /// it may not, at `now` (nil for the clock's). `needed` is the role its method needs
    /// (nil: none, `Authenticate`, which runs anonymously).
    func admission(token: String?, needs needed: Role?, at now: ContinuousClock.Instant? = nil) -> EtcdAdmission {
        if case .open = access { return .anonymous }
        let now = now ?? .now
        let admission: EtcdAdmission = state.withLock { state in
            guard let reading = state.reading, reading.at.duration(to: now) < Self.staleAfter else { return .refused(Self.unknown) }
            guard reading.required, let needed else { return .anonymous }
            guard let token else { return .refused(EtcdAuthError.userEmpty) }
            guard let caller = state.sessions.use(token, at: now, valid: reading.tokens) else { return .refused(EtcdAuthError.invalidToken) }
            guard caller.role >= needed, caller.reachesConfig else { return .refused(EtcdAuthError.permissionDenied) }
            return .caller(caller)
        }
        return admission
    }

    /// Why a call admitted as `caller` (nil: anonymously) may not go on now, or nil: a
    /// stream asks before each message and every ``readInterval``, so one whose token is
    /// revoked, or that was opened before tokens were required, ends.
    func recheck(_ caller: EtcdCaller?, at now: ContinuousClock.Instant? = nil) -> RPCError? {
        if case .open = access { return nil }
        let now = now ?? .now
        return state.withLock { state in
            guard let reading = state.reading, reading.at.duration(to: now) < Self.staleAfter else { return Self.unknown }
            guard reading.required else { return nil }
            guard let caller else { return EtcdAuthError.userEmpty }
            return state.sessions.use(caller.session, at: now, valid: reading.tokens) === caller ? nil : EtcdAuthError.invalidToken
        }
    }

    /// Reads the token state once; a failed read leaves calls refused.
    func read() async {
        guard let tokens = access.tokens else { return }
        let now = ContinuousClock.now
        let reading: Reading?
        do {
            let valid = Dictionary(try await tokens.listTokens().map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            let required: Bool = switch access {
            case .tokensRequired: true
            case .tokensOnceIssued: valid.isEmpty ? try await tokens.tokensWereIssued() : true
            case .open: false
            }
            reading = Reading(required: required, at: now, tokens: valid)
        } catch {
            reading = nil
        }
        let before = state.withLock { state in
            defer {
                state.reading = reading
                state.sessions.sweep(at: now, valid: reading?.tokens ?? [:])
            }
            return state.reading?.required
        }
        switch (before, reading?.required) {
        case (false, true?), (nil, true?):
            notice("tokens are required: etcd calls need a token from Auth.Authenticate, with a discfg token's id as user name and the token as password")
        case (true, false?): notice("tokens are no longer required: the etcd API serves calls without them")
        case (_?, nil): notice("the token state could not be read: the etcd API refuses every call until it can")
        default: break
        }
    }

    /// Reads the token state every ``readInterval`` until the task is cancelled.
    func follow() async {
        guard access.tokens != nil else { return }
        while !Task.isCancelled {
            try? await Task.sleep(for: Self.readInterval)
            await read()
        }
    }
}
