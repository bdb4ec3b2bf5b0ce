import DiscfgCore

/// Who makes a request and what they may do, whichever credential named them: a bearer
/// token, an etcd session's token, an IAM principal behind API Gateway or a verified
/// client certificate. Every face hands the gate (``Gate``) one of these.
public struct Caller: Sendable, Hashable {
    /// How the caller is named in logs: `token:ab12…`, `iam:arn:…`, `anonymous`.
    public var name: String
    /// What the caller may do.
    public var role: Role
    /// Where the caller reaches (``AccessScope``); nil for every key of every config.
    public var scopes: [AccessScope]?
    /// Who the caller is, as every change it makes records it: resolved where the request
    /// was authenticated, never from what the request says.
    public var principal: Principal

    /// Creates a caller.
    /// - Parameter principal: who the caller is (a token, an IAM ARN, a certificate's
    ///   subject); by default an anonymous principal named `name`.
    public init(name: String, role: Role, scopes: [AccessScope]?, principal: Principal? = nil) {
        self.name = name
        self.role = role
        self.scopes = scopes
        self.principal = principal ?? Principal(kind: .anonymous, id: name)
    }

    /// Creates a caller over whole configs (nil for all).
    public init(name: String, role: Role, configs: [ConfigName]? = nil, principal: Principal? = nil) {
        self.init(name: name, role: role, scopes: configs?.map { AccessScope(config: $0) }, principal: principal)
    }

    /// The configs the caller reaches at all; nil for all.
    public var configs: [ConfigName]? { grant.configs }

    /// What the caller may do.
    public var grant: AccessGrant { AccessGrant(role: role, scopes: scopes) }

    /// A caller on a server without authentication: may do anything.
    public static let anonymous = Caller(name: "anonymous", role: .admin)

    /// Whoever calls what is open to everyone: not identified, so may read nothing.
    public static let unidentified = Caller(name: "unidentified", role: .read, configs: [])

    /// Whether the caller may act with `needed` on the whole of `config` (nil: the list
    /// of configs).
    public func allows(_ needed: Role, on config: ConfigName?) -> Bool {
        grant.allows(needed, on: config)
    }

    /// Whom its changes are recorded as, with the reason the request gives.
    public func attribution(message: String? = nil) -> Attribution {
        Attribution(principal: principal, message: message)
    }
}
