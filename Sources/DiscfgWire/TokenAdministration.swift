import DiscfgCore

/// Managing tokens as an admin does: list the records, issue a token (returned this
/// once), revoke one. A server does it over its token store (`Authenticator`); a client
/// of a server does it through `/admin/tokens` (`RemoteStore`), so `discfg token` works
/// against either.
public protocol TokenAdministration: Sendable {
    /// Every valid token's record, oldest first.
    func tokens() async throws -> [TokenDocument]
    /// Issues a token reaching `scopes` (nil for everything); the token itself is
    /// returned this once.
    func issueToken(role: Role, scopes: [AccessScope]?, description: String?) async throws -> (token: String, record: TokenDocument)
    /// Revokes the token with this id and returns its record; `keyNotFound` when there is none.
    func revokeToken(id: String) async throws -> TokenDocument
}

extension TokenAdministration {
    /// Issues a token on whole `configs` (nil for all).
    public func issueToken(role: Role, configs: [ConfigName]?, description: String?) async throws -> (token: String, record: TokenDocument) {
        try await issueToken(role: role, scopes: configs?.map { AccessScope(config: $0) }, description: description)
    }
}
