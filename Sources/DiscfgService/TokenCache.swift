import DiscfgCore
import Synchronization

/// The store's valid tokens as every face reads them: one cache per server, which the REST
/// API's bearer tokens, the event loops and the etcd API's sessions all answer from, so a
/// token issued or revoked through one face holds for the others at the same moment.
///
/// A reading is trusted for ``lifetime``; whoever asks after that reads the store again.
/// A change made through this server (``issued(_:)``, ``revoked(id:)``) holds at once for
/// every face: it drops the reading, and any read already under way when it was made, so
/// the next question reads the store; and it is applied to ``latest()``, the reading a face
/// answers from where it cannot wait for the store (the etcd API's calls), so a token
/// revoked through the REST API is refused on the etcd API by the next call.
///
/// ```swift
/// let cache = TokenCache(store: tokens)
/// let authenticator = Authenticator(mode: .required, tokens: cache)
/// etcd.tokenCache = cache          // the etcd API's sessions follow the same tokens
/// ```
public final class TokenCache: Sendable {
    /// One reading of the store's tokens.
    public struct Reading: Sendable {
        /// The valid tokens by id.
        public var tokens: [String: AccessToken]
        /// Whether any token was ever issued (revoking them all does not undo it).
        public var issued: Bool
        /// When the read began: a reading is as old as that.
        public var at: ContinuousClock.Instant
    }

    private struct State {
        /// The last reading whatever its age, with the changes made through this server
        /// since applied.
        var latest: Reading?
        /// Whether a change was made through this server since ``latest`` was read: then
        /// the next question reads the store.
        var changed = false
        /// Counts changes made through this server: a read begun before one is not kept.
        var generation = 0
    }

    /// Where the tokens are.
    public let store: any TokenStore
    /// How long a reading answers before the store is read again.
    public let lifetime: Duration
    private let state = Mutex(State())

    public init(store: any TokenStore, lifetime: Duration = .seconds(2)) {
        self.store = store
        self.lifetime = lifetime
    }

    /// The last reading, if it began within ``lifetime`` of `now`; nil otherwise (the
    /// question a face asks where it cannot wait for the store: the event loops).
    public func fresh(at now: ContinuousClock.Instant = .now) -> Reading? {
        state.withLock { state in
            guard !state.changed, let reading = state.latest, now - reading.at < lifetime else { return nil }
            return reading
        }
    }

    /// The last reading whatever its age, with every change made through this server since
    /// applied; nil before the first. Its ``Reading/at`` says how old it is, for a face
    /// that answers from it while the store cannot be read (the etcd API's gate).
    public func latest() -> Reading? {
        state.withLock(\.latest)
    }

    /// A reading within ``lifetime``: the last one, or a new one read now.
    public func current() async throws -> Reading {
        if let fresh = fresh() { return fresh }
        return try await read()
    }

    /// Reads the store now, whatever the age of the last reading, as of `start` (nil for
    /// the clock's), and keeps it unless a change made through this server, or a read begun
    /// later, came since.
    @discardableResult
    public func read(at start: ContinuousClock.Instant? = nil) async throws -> Reading {
        let now = start ?? .now
        let generation = state.withLock(\.generation)
        let tokens = Dictionary(try await store.listTokens().map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let reading = Reading(tokens: tokens, issued: tokens.isEmpty ? try await store.tokensWereIssued() : true, at: now)
        state.withLock { state in
            guard state.generation == generation, state.latest.map({ $0.at <= now }) ?? true else { return }
            state.latest = reading
            state.changed = false
        }
        return reading
    }

    /// A token issued through this server: valid at once on every face.
    public func issued(_ token: AccessToken) {
        changed { reading in
            reading.tokens[token.id] = token
            reading.issued = true
        }
    }

    /// A token revoked through this server: refused at once on every face.
    public func revoked(id: String) {
        changed { $0.tokens[id] = nil }
    }

    /// Drops the reading after a change made through this server, and any read under way,
    /// so the next question reads the store; and applies `change` to ``latest()``.
    private func changed(_ change: (inout Reading) -> Void) {
        state.withLock { state in
            state.changed = true
            state.generation &+= 1
            if var latest = state.latest {
                change(&latest)
                state.latest = latest
            }
        }
    }
}
