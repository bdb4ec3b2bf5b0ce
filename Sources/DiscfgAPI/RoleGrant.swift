import DiscfgCore

/// A role and where it reaches, written `ROLE[@SCOPE[+SCOPE…]]`, each scope a config
/// (`demo`), a discfg key prefix (`demo:/app/`) or an etcd key prefix
/// (`demo:etcd:/registry/`) as ``AccessScope`` reads it: the one grammar of what a name is
/// given in `DISCFG_IAM_ROLES` (an IAM principal's) and in `serve --tls-client-roles` (a
/// client certificate's), as a token carries a role and its scopes. An etcd prefix here
/// cannot hold `+`, `,` or `=`, the lists' separators.
///
/// ```swift
/// let grant = try RoleGrant.parse("write@demo:/app/+prod", entry: "CN=ci=write@demo:/app/+prod") { DiscfgError.invalid("roles", $0) }
/// ```
public struct RoleGrant: Sendable, Equatable {
    /// The role.
    public var role: Role
    /// Where it reaches; nil for every key of every config.
    public var scopes: [AccessScope]?

    /// A role over `scopes` (nil for everything).
    public init(role: Role, scopes: [AccessScope]?) {
        self.role = role
        self.scopes = scopes
    }

    /// A role on whole `configs` (nil for all).
    public init(role: Role, configs: [ConfigName]?) {
        self.init(role: role, scopes: configs?.map { AccessScope(config: $0) })
    }

    /// The configs it reaches at all; nil for all.
    public var configs: [ConfigName]? { AccessGrant(role: role, scopes: scopes).configs }

    /// Parses `ROLE[@SCOPE[+SCOPE…]]` (the role in any case).
    /// - Parameters:
    ///   - spec: the text after the name's `=`.
    ///   - entry: the whole entry, as messages quote it.
    ///   - invalid: the error of the list being read, with a message.
    /// - Throws: `invalid`'s error: an unknown role, an `@` with no scope, an empty scope
    ///   between `+`s, or a scope ``AccessScope`` refuses (a config name that is not valid,
    ///   `demo:`, `demo:app` without its `/`, `demo:/`, `demo:etcd:`), naming the entry.
    public static func parse(_ spec: Substring, entry: String, invalid: (String) -> DiscfgError) throws -> RoleGrant {
        let parts = spec.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        guard let role = Role(rawValue: parts[0].trimmingCharacters(in: .whitespaces).lowercased()) else {
            throw invalid("the role in \"\(entry)\" is not read, write or admin")
        }
        guard parts.count == 2 else { return RoleGrant(role: role, scopes: nil) }
        guard !parts[1].isEmpty else { throw invalid("\"\(entry)\" names no config after '@'; leave '@' out for every config") }
        var scopes: [AccessScope] = []
        for text in parts[1].split(separator: "+", omittingEmptySubsequences: false) {
            guard !text.isEmpty else { throw invalid("\"\(entry)\" has an empty scope between '+'s") }
            let scope: AccessScope
            do {
                scope = try AccessScope(String(text))
            } catch let error as DiscfgError {
                throw invalid("in \"\(entry)\": \(error.message)")
            }
            if !scopes.contains(scope) { scopes.append(scope) }
        }
        return RoleGrant(role: role, scopes: scopes)
    }
}
