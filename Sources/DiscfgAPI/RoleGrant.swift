import DiscfgCore

/// A role and the configs it reaches, written `ROLE[@CONFIG[+CONFIG…]]`: the one grammar
/// of what a name is given in `DISCFG_IAM_ROLES` (an IAM principal's) and in
/// `serve --tls-client-roles` (a client certificate's), as a token carries a role and
/// its configs.
///
/// ```swift
/// let grant = try RoleGrant.parse("write@demo+prod", entry: "CN=ci=write@demo+prod") { DiscfgError.invalid("roles", $0) }
/// ```
public struct RoleGrant: Sendable, Equatable {
    /// The role.
    public var role: Role
    /// The configs it reaches; nil for all.
    public var configs: [ConfigName]?

    /// A role on `configs` (nil for all).
    public init(role: Role, configs: [ConfigName]?) {
        self.role = role
        self.configs = configs
    }

    /// Parses `ROLE[@CONFIG[+CONFIG…]]` (the role in any case).
    /// - Parameters:
    ///   - spec: the text after the name's `=`.
    ///   - entry: the whole entry, as messages quote it.
    ///   - invalid: the error of the list being read, with a message.
    /// - Throws: `invalid`'s error: an unknown role, an `@` with no config, a config name
    ///   that is not valid, or a prefix scope (`demo:/app/`), which no list takes yet.
    public static func parse(_ spec: Substring, entry: String, invalid: (String) -> DiscfgError) throws -> RoleGrant {
        let parts = spec.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        guard let role = Role(rawValue: parts[0].trimmingCharacters(in: .whitespaces).lowercased()) else {
            throw invalid("the role in \"\(entry)\" is not read, write or admin")
        }
        guard parts.count == 2 else { return RoleGrant(role: role, configs: nil) }
        guard !parts[1].isEmpty else { throw invalid("\"\(entry)\" names no config after '@'; leave '@' out for every config") }
        let configs = try parts[1].split(separator: "+", omittingEmptySubsequences: false).map { scope in
            if scope.contains(":") { throw invalid("\"\(entry)\" scopes the role to a prefix (\(scope)); only config names are taken here, for now") }
            do {
                return try ConfigName(String(scope))
            } catch let error as DiscfgError {
                throw invalid("in \"\(entry)\": \(error.message)")
            }
        }
        return RoleGrant(role: role, configs: configs)
    }
}
