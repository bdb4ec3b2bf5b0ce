import Foundation

/// What a bearer token may do.
public enum Role: String, Codable, Hashable, Sendable, CaseIterable, Comparable {
    /// Read keys, history, watch and export.
    case read
    /// Also set, delete and import keys.
    case write
    /// Also create, update and delete configs.
    case admin

    private var rank: Int {
        switch self {
        case .read: 0
        case .write: 1
        case .admin: 2
        }
    }

    public static func < (lhs: Role, rhs: Role) -> Bool { lhs.rank < rhs.rank }
}

/// A bearer token's record. The token itself is shown once when created; only its
/// SHA-256 hash is stored, so a copy of the store reveals no usable token.
public struct AccessToken: Hashable, Sendable, Codable {
    /// The public part of the token, used to name it in `token list` and `token revoke`.
    public var id: String
    /// SHA-256 of the whole token.
    public var hash: Data
    /// What the token may do.
    public var role: Role
    /// Where it reaches (``AccessScope``); nil for every key of every config. Stores keep
    /// them as their text, where a whole config is its bare name, so a record written
    /// before prefix scopes (a list of config names) reads back as whole-config scopes.
    public var scopes: [AccessScope]?
    /// A note about who holds it.
    public var description: String?
    /// When it was created.
    public var createdAt: Date

    /// Creates a token record.
    public init(id: String, hash: Data, role: Role, scopes: [AccessScope]?, description: String? = nil, createdAt: Date) {
        self.id = id
        self.hash = hash
        self.role = role
        self.scopes = scopes
        self.description = description
        self.createdAt = createdAt
    }

    /// Creates a token record over whole configs (nil for all).
    public init(id: String, hash: Data, role: Role, configs: [ConfigName]? = nil, description: String? = nil, createdAt: Date) {
        self.init(id: id, hash: hash, role: role, scopes: configs?.map { AccessScope(config: $0) }, description: description, createdAt: createdAt)
    }

    /// The configs it reaches at all; nil for all.
    public var configs: [ConfigName]? { grant.configs }

    /// What it may do.
    public var grant: AccessGrant { AccessGrant(role: role, scopes: scopes) }

    /// Whether this token may act with `role` on the whole of `config` (nil: on the list
    /// of configs).
    public func allows(_ needed: Role, on config: ConfigName?) -> Bool {
        grant.allows(needed, on: config)
    }
}

/// Where bearer tokens are kept: the same store as the configuration they guard.
public protocol TokenStore: Sendable {
    /// Saves a new token; throws `configExists`-style `invalidArgument` if the id is taken.
    func saveToken(_ token: AccessToken) async throws
    /// The token with this id, or nil.
    func token(id: String) async throws -> AccessToken?
    /// Every token, oldest first.
    func listTokens() async throws -> [AccessToken]
    /// Deletes a token; throws `invalidArgument` naming the id when there is none.
    func revokeToken(id: String) async throws
    /// Whether a token was ever saved here, revoked or not. A server that is open
    /// until the first token exists stays closed once this is true: revoking the last
    /// token is a rotation, not a way to open the server.
    func tokensWereIssued() async throws -> Bool
    /// Forgets that tokens were issued, so a loopback server in `--auth auto` is open
    /// again; throws `invalidArgument` while any token is still valid.
    func forgetIssuedTokens() async throws
}

extension TokenStore {
    /// The error for forgetting tokens while some are still valid.
    public static func tokensRemain(_ count: Int) -> DiscfgError {
        DiscfgError.invalid("token", "\(count) token(s) are still valid; revoke them first ('discfg token list', 'discfg token revoke ID')")
    }
}
