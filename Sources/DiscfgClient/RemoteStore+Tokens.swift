import DiscfgCore
import DiscfgWire
import Foundation

/// Tokens managed through the server's `/admin/tokens`, by an admin of every config.
extension RemoteStore: TokenAdministration {
    /// Whole configs travel as `configs`, which every server takes; prefixes as `scopes`.
    private struct TokenRequest: Encodable {
        var role: Role
        var configs: [String]?
        var scopes: [String]?
        var description: String?
    }

    public func tokens() async throws -> [TokenDocument] {
        try await transport.envelope(.GET, "/admin/tokens").tokens ?? []
    }

    public func issueToken(role: Role, scopes: [AccessScope]?, description: String?) async throws -> (token: String, record: TokenDocument) {
        let wholeConfigs = scopes?.allSatisfy(\.isWholeConfig) ?? true
        let request = wholeConfigs
            ? TokenRequest(role: role, configs: scopes?.map(\.config.rawValue), description: description)
            : TokenRequest(role: role, scopes: scopes?.map(\.description), description: description)
        let body = try JSONEncoder().encode(request)
        let envelope = try await transport.envelope(.POST, "/admin/tokens", body: body, headers: [("Content-Type", "application/json")])
        guard let token = envelope.token, let record = envelope.tokens?.first else {
            throw DiscfgError(.unavailable, "the server answered a token request without the token", field: "store")
        }
        return (token, record)
    }

    public func revokeToken(id: String) async throws -> TokenDocument {
        let envelope = try await transport.envelope(.DELETE, "/admin/tokens/" + URLPart.encode(id))
        guard let record = envelope.tokens?.first else {
            throw DiscfgError(.unavailable, "the server answered a revocation without the token's record", field: "store")
        }
        return record
    }
}
