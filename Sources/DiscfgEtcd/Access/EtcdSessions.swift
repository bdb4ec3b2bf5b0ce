import Crypto
import DiscfgCore
import Foundation
import GRPCCore

/// The etcd tokens `Auth.Authenticate` gave out, each bound to the discfg token it was
/// given for, as etcd's simple tokens are: a random string the server maps to its
/// caller, which lives ``ttl`` after its last use (etcd's `--auth-token-ttl`, 300 s),
/// and ends with its discfg token: a call whose discfg token is no longer among the
/// store's valid ones is refused with etcd's "invalid auth token", and the session is
/// dropped at the next reading of the store.
///
/// One discfg token holds at most ``maxPerToken`` sessions: past them its own least
/// recently used goes, so a client that authenticates in a loop, with any token, ends
/// only its own sessions, never another token's. The server holds ``maxSessions`` in
/// all; reaching that takes more than 150 tokens, each at its cap.
///
/// Nothing about a session leaves the server's memory: a restart ends them all, and
/// clients authenticate again (etcd clients do so by themselves on "invalid auth token").
struct EtcdSessions {
    /// How long a session lives after its last use.
    static let ttl = Duration.seconds(300)
    /// The most sessions kept; past them the least recently used goes first.
    static let maxSessions = 10_000
    /// The most sessions one discfg token holds; past them its own least recently used
    /// goes. A client keeps one per connection; 64 leaves room for many processes of
    /// one deployment sharing a token.
    static let maxPerToken = 64

    private struct Session {
        let caller: EtcdCaller
        let tokenID: String
        var lastUsed: ContinuousClock.Instant
    }

    private var sessions: [String: Session] = [:]
    /// Each discfg token's sessions, by token id.
    private var byToken: [String: Set<String>] = [:]

    var count: Int { sessions.count }

    /// How many sessions the discfg token `id` holds.
    func count(of id: String) -> Int { byToken[id]?.count ?? 0 }

    /// The caller of session `token`, its last use now, when it is live and its discfg
    /// token is among `valid`; nil otherwise (and it is dropped).
    mutating func use(_ token: String, at now: ContinuousClock.Instant, valid: [String: AccessToken]) -> EtcdCaller? {
        guard let index = sessions.index(forKey: token) else { return nil }
        let session = sessions.values[index]
        guard session.lastUsed.duration(to: now) < Self.ttl, valid[session.tokenID] != nil else {
            remove(token)
            return nil
        }
        sessions.values[index].lastUsed = now
        return session.caller
    }

    /// Keeps `caller`'s session (a token's caller; a certificate's has none), making room
    /// past its token's ``maxPerToken`` from that token's own sessions, and past
    /// ``maxSessions`` from all.
    mutating func add(_ caller: EtcdCaller, at now: ContinuousClock.Instant, valid: [String: AccessToken]) {
        guard let token = caller.session, let tokenID = caller.tokenID else { return }
        if let own = byToken[tokenID], own.count >= Self.maxPerToken,
           let oldest = own.min(by: { (sessions[$0]?.lastUsed ?? now) < (sessions[$1]?.lastUsed ?? now) }) {
            remove(oldest)
        }
        if sessions.count >= Self.maxSessions {
            sweep(at: now, valid: valid)
            if sessions.count >= Self.maxSessions, let oldest = sessions.min(by: { $0.value.lastUsed < $1.value.lastUsed })?.key {
                remove(oldest)
            }
        }
        sessions[token] = Session(caller: caller, tokenID: tokenID, lastUsed: now)
        byToken[tokenID, default: []].insert(token)
    }

    /// Drops the sessions past their lifetime or of tokens no longer valid.
    mutating func sweep(at now: ContinuousClock.Instant, valid: [String: AccessToken]) {
        guard !sessions.isEmpty else { return }
        for (token, session) in sessions where session.lastUsed.duration(to: now) >= Self.ttl || valid[session.tokenID] == nil {
            remove(token)
        }
    }

    private mutating func remove(_ token: String) {
        guard let session = sessions.removeValue(forKey: token) else { return }
        byToken[session.tokenID]?.remove(token)
        if byToken[session.tokenID]?.isEmpty == true { byToken[session.tokenID] = nil }
    }

    /// A new session token: 32 random letters, as etcd's simple tokens are letters.
    static func newToken() -> String {
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        var generator = SystemRandomNumberGenerator()
        return String(decoding: (0..<32).map { _ in letters[Int.random(in: 0..<letters.count, using: &generator)] }, as: UTF8.self)
    }
}

extension EtcdAccessGate {
    /// `Auth.Authenticate`: the caller of the discfg token `password` whose id is `name`,
    /// under a new etcd token, at `now` (nil for the clock's).
    /// - Throws: etcd's "authentication is not enabled" while no tokens are required,
    ///   "authentication failed, invalid user ID or password" for anything but a valid
    ///   token and its id, and ``unknown`` while the token state cannot be read.
    func authenticate(name: String, password: String, at now: ContinuousClock.Instant? = nil) throws(RPCError) -> EtcdCaller {
        guard access.tokens != nil else { throw EtcdAuthError.notEnabled }
        let now = now ?? .now
        // Hashed before the lock: the presented token is compared with the record's hash
        // in constant time.
        let presented = Self.hash(password)
        let wellFormed = !name.isEmpty && password.hasPrefix("dcfg_\(name)_")
        let reading = current(at: now)
        let result: Result<EtcdCaller, RPCError> = state.withLock { state in
            guard let reading else { return .failure(Self.unknown) }
            guard reading.required else { return .failure(EtcdAuthError.notEnabled) }
            guard let record = reading.tokens[name], wellFormed, Self.constantTimeEqual(presented, record.hash) else {
                return .failure(EtcdAuthError.authFailed)
            }
            let caller = EtcdCaller(session: EtcdSessions.newToken(), token: record)
            state.sessions.add(caller, at: now, valid: reading.tokens)
            return .success(caller)
        }
        return try result.get()
    }

    /// SHA-256 of a token's text, as the store keeps it.
    static func hash(_ token: String) -> Data {
        Data(SHA256.hash(data: Data(token.utf8)))
    }

    private static func constantTimeEqual(_ lhs: Data, _ rhs: Data) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(lhs, rhs) { difference |= left ^ right }
        return difference == 0
    }
}
