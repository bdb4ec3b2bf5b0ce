import DiscfgAPI
import DiscfgCore
import DiscfgService
import Foundation

/// Who may call the API behind API Gateway, read from `DISCFG_AUTH`,
/// `DISCFG_IAM_ROLES` and `DISCFG_IAM_DEFAULT_ROLE`.
///
/// With IAM auth the gateway has already checked the caller's SigV4 signature and IAM
/// policy; the function maps the principal's ARN to a role, so one API can give some
/// principals read-only access and others admin.
public struct LambdaAccess: Sendable, Equatable {
    /// Which credentials are accepted.
    public struct Modes: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// The IAM principal API Gateway authenticated.
        public static let iam = Modes(rawValue: 1)
        /// Bearer tokens kept in the store.
        public static let token = Modes(rawValue: 2)
    }

    /// One `PATTERN=ROLE[@SCOPE+SCOPE]` rule (``AccessGrant/parse(_:entry:invalid:)``: a scope is a config, `demo`,
    /// or a prefix, `demo:/app/` or `demo:etcd:/registry/`).
    public struct Rule: Sendable, Equatable {
        public var pattern: String
        public var role: Role
        /// Where the role reaches; nil for everything.
        public var scopes: [AccessScope]?

        /// A rule over `scopes` (nil for everything).
        public init(pattern: String, role: Role, scopes: [AccessScope]?) {
            self.pattern = pattern
            self.role = role
            self.scopes = scopes
        }

        /// A rule over whole `configs` (nil for all).
        public init(pattern: String, role: Role, configs: [ConfigName]? = nil) {
            self.init(pattern: pattern, role: role, scopes: configs?.map { AccessScope(config: $0) })
        }

        /// The configs it reaches at all; nil for all.
        public var configs: [ConfigName]? { AccessGrant(role: role, scopes: scopes).configs }
    }

    /// Accepted credentials; empty means no authentication at all.
    public var modes: Modes
    /// Principal patterns and their roles, first match wins.
    public var rules: [Rule]
    /// The role of an IAM principal no rule matches; nil (the default) refuses it.
    public var defaultRole: Role?

    public init(modes: Modes, rules: [Rule] = [], defaultRole: Role? = nil) {
        self.modes = modes
        self.rules = rules
        self.defaultRole = defaultRole
    }

    /// Reads the settings from the environment, naming the variable at fault.
    public init(environment: [String: String]) throws {
        // Unset means IAM; set, it must say something: an empty value never means "no auth".
        let auth = environment["DISCFG_AUTH"] ?? "iam"
        var modes: Modes = []
        let parts = auth.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        for part in parts {
            switch part {
            case "": throw DiscfgError.invalid("DISCFG_AUTH", "DISCFG_AUTH=\"\(auth)\" has an empty entry; set iam, token, iam,token or none")
            case "iam": modes.insert(.iam)
            case "token": modes.insert(.token)
            case "none": break
            default: throw DiscfgError.invalid("DISCFG_AUTH", "DISCFG_AUTH=\(auth) is not iam, token, iam,token or none")
            }
        }
        if auth.lowercased().contains("none"), !modes.isEmpty {
            throw DiscfgError.invalid("DISCFG_AUTH", "DISCFG_AUTH=none cannot be combined with iam or token")
        }
        self.modes = modes
        rules = try Self.parseRules(environment["DISCFG_IAM_ROLES"] ?? "")
        // Unset refuses principals no rule names: IAM letting a caller invoke the API
        // does not make it an administrator of every config.
        let fallback = (environment["DISCFG_IAM_DEFAULT_ROLE"] ?? "none").trimmingCharacters(in: .whitespaces).lowercased()
        if fallback == "none" {
            defaultRole = nil
        } else if let role = Role(rawValue: fallback) {
            defaultRole = role
        } else {
            throw DiscfgError.invalid("DISCFG_IAM_DEFAULT_ROLE", "DISCFG_IAM_DEFAULT_ROLE=\(fallback) is not read, write, admin or none")
        }
    }

    /// Parses `PATTERN=ROLE[@SCOPE+SCOPE],…`; IAM names may hold `=`, so the last one splits.
    static func parseRules(_ text: String) throws -> [Rule] {
        try text.split(separator: ",").compactMap { entry -> Rule? in
            let entry = entry.trimmingCharacters(in: .whitespaces)
            guard !entry.isEmpty else { return nil }
            guard let split = entry.lastIndex(of: "="), split != entry.startIndex else {
                throw DiscfgError.invalid("DISCFG_IAM_ROLES", "\"\(entry)\" in DISCFG_IAM_ROLES is not PATTERN=ROLE, e.g. arn:aws:iam::123456789012:role/ci-*=read")
            }
            let pattern = String(entry[..<split])
            let grant = try AccessGrant.parse(entry[entry.index(after: split)...], entry: entry) { message in
                DiscfgError.invalid("DISCFG_IAM_ROLES", "DISCFG_IAM_ROLES: \(message)")
            }
            return Rule(pattern: pattern, role: grant.role, scopes: grant.scopes)
        }
    }

    /// The caller for an IAM principal, or nil when it may not call at all.
    public func caller(forPrincipal arn: String) -> Caller? {
        if let rule = rules.first(where: { Self.matches(arn, pattern: $0.pattern) }) {
            return Caller(name: "iam:\(arn)", role: rule.role, scopes: rule.scopes, principal: Principal(kind: .iam, id: arn))
        }
        return defaultRole.map { Caller(name: "iam:\(arn)", role: $0, principal: Principal(kind: .iam, id: arn)) }
    }

    /// `*` matches any run of characters; everything else matches itself.
    static func matches(_ text: String, pattern: String) -> Bool {
        let text = Array(text.utf8), pattern = Array(pattern.utf8)
        var t = 0, p = 0, star = -1, mark = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == UInt8(ascii: "*") {
                star = p
                mark = t
                p += 1
            } else if p < pattern.count, pattern[p] == text[t] {
                p += 1
                t += 1
            } else if star >= 0 {
                p = star + 1
                mark += 1
                t = mark
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.count
    }
}

/// A token store with no tokens: with IAM-only auth, the router's authenticator then
/// refuses any request that reached it without an IAM caller.
struct NoTokens: TokenStore {
    func saveToken(_ token: AccessToken) async throws {
        throw DiscfgError(.invalidArgument, "this API accepts IAM callers only", field: "token")
    }

    func token(id: String) async throws -> AccessToken? { nil }
    func listTokens() async throws -> [AccessToken] { [] }

    func revokeToken(id: String) async throws {
        throw DiscfgError(.invalidArgument, "no token with id \(id)", field: "token")
    }

    func tokensWereIssued() async throws -> Bool { true }
    func forgetIssuedTokens() async throws {}
}
