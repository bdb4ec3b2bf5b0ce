import DiscfgCore
import DiscfgService
import DiscfgNetwork
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
/// answer read from memory, the server's one ``DiscfgService/TokenCache``'s latest
/// reading, which ``follow()`` reads again every ``readInterval``. A token revoked through
/// this server (its REST API) is refused by the next call, the cache holding the change at
/// once; one revoked elsewhere (another server, the command line on the store) from the
/// next reading. Open streams of it end within ``readInterval`` after that.
///
/// A read that fails or is slow (a store answering one request at a time, busy with
/// the clients' own calls) leaves the last reading in force for ``staleAfter``: calls
/// are answered as it says, so a slow store slows calls rather than refusing them. Past
/// it, with the token state unknown, every call is refused (`UNAVAILABLE`) until a read
/// succeeds.
///
/// A call that carries no etcd token, on a connection whose client certificate has a
/// role (``certificates``, `--tls-client-roles`), runs as that certificate, as the REST
/// API takes a certificate's caller when no bearer token is sent; a call with a token
/// is decided by the token alone.
final class EtcdAccessGate: Sendable {
    /// How often the token state is read.
    static let readInterval = Duration.milliseconds(500)
    /// How old the last successful reading may be and still answer calls: while reads
    /// fail or take long, calls are answered as it says; past it (the store stopped
    /// answering for that long) they are refused until a read succeeds.
    static let staleAfter = Duration.seconds(30)

    /// The answer while the token state cannot be read.
    static let unknown = RPCError(
        code: .unavailable,
        message: "etcdserver: cannot tell whether this server requires tokens (its store did not answer); the etcd API refuses calls until it can"
    )

    /// The token state a call is answered by.
    struct Reading {
        /// Whether calls need a token.
        var required: Bool
        /// When the reading it comes from began.
        var at: ContinuousClock.Instant
        /// The store's valid tokens by id.
        var tokens: [String: AccessToken]
    }

    /// How the reads of the token state go, for the log.
    enum Health {
        /// The last read succeeded.
        case reading
        /// Reads fail; calls are answered with the last reading, younger than ``staleAfter``.
        case failing
        /// Reads fail and the last reading is older than ``staleAfter`` (or there is
        /// none): calls are refused.
        case refusing
    }

    struct State {
        /// Whether the last successful reading required tokens, for the log's notices.
        var required: Bool?
        var health = Health.reading
        var sessions = EtcdSessions()
    }

    let access: EtcdAccess
    /// The config the etcd API serves: a token whose scopes miss it may authenticate,
    /// and is refused every other call.
    let config: ConfigName?
    /// The roles of client certificates, as the REST API gives them; none when
    /// certificates are no credential.
    let certificates: ClientCertificateRoles
    /// Told when the rule's answer changes, in a sentence for the log.
    private let notice: @Sendable (String) -> Void
    let state = Mutex(State())
    /// Certificate callers made so far, by subject: a connection's calls share one.
    private let certificateCallers = Mutex<[CertificateSubject: EtcdCaller]>([:])
    /// Where the token state is read: the cache the server's REST API answers from too,
    /// when it runs one (``EtcdServer/tokenCache``), so both faces follow one reading.
    let tokens: TokenCache?

    init(
        _ access: EtcdAccess, config: ConfigName? = nil, notice: @escaping @Sendable (String) -> Void = { _ in },
        certificates: ClientCertificateRoles = .none, tokens: TokenCache? = nil
    ) {
        self.access = access
        self.config = config
        self.certificates = certificates
        // The shared cache reads the same store `access` names (the server's own).
        self.tokens = access.tokens.map { store in tokens ?? TokenCache(store: store) }
        self.notice = notice
    }

    /// How often an open stream asks again whether it may go on: nil when the answer
    /// never changes from "yes".
    var recheckInterval: Duration? {
        if case .open = access { return nil }
        return Self.readInterval
    }

    /// Whom a call carrying `token` (its `token` metadata, nil without) on a connection
    /// of the client certificate `certificate` (nil without) runs as, or why it may not,
    /// at `now` (nil for the clock's). `action` is what its method does (nil, or a kind
    /// that needs no role: `Authenticate`, which runs anonymously): the gate judges it on
    /// the served config before the request is read, and the service judges the keys it
    /// names once it is.
    func admission(token: String?, certificate: CertificateSubject? = nil, for action: Action.Kind?, at now: ContinuousClock.Instant? = nil) -> EtcdAdmission {
        let needsRole = action?.role != nil
        if token == nil, let certificate, let caller = caller(of: certificate) {
            guard let action, needsRole else { return .caller(caller) }
            return admits(caller, action) ? .caller(caller) : .refused(EtcdAuthError.permissionDenied)
        }
        if case .open = access { return .anonymous }
        let now = now ?? .now
        let reading = current(at: now)
        let admission: EtcdAdmission = state.withLock { state in
            guard let reading else { return .refused(Self.unknown) }
            guard reading.required, let action, needsRole else { return .anonymous }
            guard let token else { return .refused(EtcdAuthError.userEmpty) }
            guard let caller = state.sessions.use(token, at: now, valid: reading.tokens) else { return .refused(EtcdAuthError.invalidToken) }
            return admits(caller, action) ? .caller(caller) : .refused(EtcdAuthError.permissionDenied)
        }
        return admission
    }

    /// Whether the gate lets `caller` make a call of `action` on the served config at
    /// all. A call reaching keys is let in by any scope on the config, and its keys are
    /// judged as the service reads them; but a caller none of whose scopes reaches an
    /// etcd key (only discfg key prefixes, `demo:/app/`) has nothing to do here.
    private func admits(_ caller: EtcdCaller, _ action: Action.Kind) -> Bool {
        guard Gate.admits(Action(action, on: config), for: caller.caller) else { return false }
        guard action.reach == .keys, let config, let scopes = caller.grant.scopes else { return true }
        return scopes.contains { scope in
            guard scope.config == config else { return false }
            switch scope.reach {
            case .config, .etcdKeys: return true
            case .keys: return false
            }
        }
    }

    /// The caller of a connection whose client certificate is `subject`, when its grant
    /// makes it one.
    func caller(of subject: CertificateSubject) -> EtcdCaller? {
        if let known = certificateCallers.withLock({ $0[subject] }) { return known }
        guard let granted = certificates.caller(for: subject) else { return nil }
        let caller = EtcdCaller(certificate: granted)
        certificateCallers.withLock { callers in
            // Bounded: a CA may sign many subjects; the few in use are made again.
            if callers.count >= 1024 { callers.removeAll() }
            callers[subject] = caller
        }
        return caller
    }

    /// Why a call admitted as `caller` (nil: anonymously) may not go on now, or nil: a
    /// stream asks before each message and every ``readInterval``, so one whose token is
    /// revoked, or that was opened before tokens were required, ends. A certificate's
    /// caller goes on as long as its connection.
    func recheck(_ caller: EtcdCaller?, at now: ContinuousClock.Instant? = nil) -> RPCError? {
        if case .open = access { return nil }
        if let caller, caller.session == nil { return nil }
        let now = now ?? .now
        let reading = current(at: now)
        return state.withLock { state in
            guard let reading else { return Self.unknown }
            guard reading.required else { return nil }
            guard let caller, let session = caller.session else { return EtcdAuthError.userEmpty }
            return state.sessions.use(session, at: now, valid: reading.tokens) === caller ? nil : EtcdAuthError.invalidToken
        }
    }

    /// The token state calls are answered by at `now`: the cache's latest reading, with
    /// the changes made through this server since, while it is younger than
    /// ``staleAfter``; nil past it, or before the first.
    func current(at now: ContinuousClock.Instant) -> Reading? {
        guard let latest = tokens?.latest(), latest.at.duration(to: now) < Self.staleAfter else { return nil }
        return Reading(required: required(issued: latest.issued), at: latest.at, tokens: latest.tokens)
    }

    /// Whether calls need a token, once any was issued or not.
    private func required(issued: Bool) -> Bool {
        switch access {
        case .tokensRequired: true
        case .tokensOnceIssued: issued
        case .open: false
        }
    }

    /// Reads the token state once, into the shared cache, as of `start` (nil for the
    /// clock's): a reading is as old as the moment its read began. A failed read keeps
    /// the last reading, which answers calls until it is ``staleAfter`` old.
    func read(at start: ContinuousClock.Instant? = nil) async {
        guard let tokens else { return }
        let now = start ?? .now
        let read = try? await tokens.read(at: now)
        let current = current(at: now)
        let (before, health) = state.withLock { state in
            let before = (required: state.required, health: state.health)
            if let read {
                if let current { state.sessions.sweep(at: now, valid: current.tokens) }
                state.required = required(issued: read.issued)
                state.health = .reading
            } else {
                state.health = current == nil ? .refusing : .failing
            }
            return (before, state.health)
        }
        let reading = read.map { Reading(required: required(issued: $0.issued), at: $0.at, tokens: $0.tokens) }
        switch (before.required, reading?.required) {
        case (false, true?), (nil, true?):
            notice("tokens are required: etcd calls need a token from Auth.Authenticate, with a discfg token's id as user name and the token as password")
        case (true, false?): notice("tokens are no longer required: the etcd API serves calls without them")
        default: break
        }
        switch (before.health, health) {
        case (.reading, .failing):
            notice("the token state could not be read: the etcd API answers calls with the state read last, for at most \(Self.staleAfter.components.seconds) s, then refuses every call until it can read it")
        case (.reading, .refusing), (.failing, .refusing):
            notice("the token state could not be read: the etcd API refuses every call until it can")
        case (.failing, .reading), (.refusing, .reading):
            notice("the token state is read again")
        default: break
        }
    }

    /// Reads the token state every ``readInterval`` until the task is cancelled.
    func follow() async {
        guard tokens != nil else { return }
        while !Task.isCancelled {
            try? await Task.sleep(for: Self.readInterval)
            await read()
        }
    }
}
