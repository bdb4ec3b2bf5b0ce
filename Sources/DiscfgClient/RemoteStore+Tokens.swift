import DiscfgCore
import Foundation

/// Tokens managed through the server's `/admin/tokens`, by an admin of every config.
extension RemoteStore: TokenAdministration {
    private struct TokenRequest: Encodable {
        var role: Role
        var configs: [String]?
        var description: String?
    }

    public func tokens() async throws -> [TokenDocument] {
        try await transport.envelope(.GET, "/admin/tokens").tokens ?? []
    }

    public func issueToken(role: Role, configs: [ConfigName]?, description: String?) async throws -> (token: String, record: TokenDocument) {
        let body = try JSONEncoder().encode(TokenRequest(role: role, configs: configs?.map(\.rawValue), description: description))
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
