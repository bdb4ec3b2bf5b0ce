import DiscfgCore
import DiscfgWire
import Foundation
import Hummingbird

extension ConfigAPI {
    /// `GET /admin/tokens`: every valid token's record (never a token or its hash).
    func listTokens() async throws -> Response {
        APIResponse.json(Envelope(tokens: try await authenticator.tokens()))
    }

    /// `POST /admin/tokens` with `{"role": …, "scopes": […], "description": …}` (or
    /// `"configs"`, whole configs by name): issues a token and answers it once (201),
    /// beside its id and its record.
    func createToken(_ request: inout Request) async throws -> Response {
        let body = try await request.bodyData(limit: options.maxSettingsBytes)
        let asked = try TokenRequest(json: body)
        let (token, record) = try await RequestDeadlines.commit {
            try await authenticator.issueToken(role: asked.role, scopes: asked.scopes, description: asked.description)
        }
        var response = APIResponse.json(Envelope(issuedToken: token, record: record))
        response.status = .created
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// `DELETE /admin/tokens/{id}`: revokes a token and answers its id and record.
    func revokeToken(_ context: some DiscfgRequestContext) async throws -> Response {
        let id = context.parameters.get("id") ?? ""
        let record = try await RequestDeadlines.commit { try await authenticator.revokeToken(id: id) }
        return APIResponse.json(Envelope(revokedToken: record))
    }
}

/// The body of `POST /admin/tokens`. Fields it does not know are refused, not ignored:
/// a mistyped `config` would otherwise issue a token for every config.
struct TokenRequest: Decodable {
    var role: Role
    /// Where the token reaches: `scopes` as given, or `configs` as whole configs; nil for
    /// everything.
    var scopes: [AccessScope]?
    var description: String?

    private enum Field: String, CodingKey, CaseIterable {
        case role, configs, scopes, description
    }

    private struct AnyField: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(json: Data) throws {
        let shape = "a token request is a JSON object such as {\"role\": \"write\", \"scopes\": [\"myapp:/app/\"], \"description\": \"web tier\"}"
        do {
            self = try JSONDecoder().decode(Self.self, from: json)
        } catch let error as DiscfgError {
            throw error
        } catch DecodingError.keyNotFound(let key, _) {
            throw DiscfgError.invalid(key.stringValue, "a token request needs \"\(key.stringValue)\": read, write or admin")
        } catch let error as DecodingError {
            let field = Self.path(of: error).first?.stringValue
            switch field {
            case "role": throw DiscfgError.invalid("role", "role must be read, write or admin")
            case "configs": throw DiscfgError.invalid("configs", "configs must be a list of config names")
            case "scopes": throw DiscfgError.invalid("scopes", "scopes must be a list of scopes such as \"myapp\" or \"myapp:/app/\"")
            case "description": throw DiscfgError.invalid("description", "description must be a string")
            default: throw DiscfgError.invalid("body", shape)
            }
        }
    }

    private static func path(of error: DecodingError) -> [any CodingKey] {
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context), .dataCorrupted(let context): context.codingPath
        @unknown default: []
        }
    }

    init(from decoder: any Decoder) throws {
        let any = try decoder.container(keyedBy: AnyField.self)
        if let unknown = any.allKeys.first(where: { Field(rawValue: $0.stringValue) == nil }) {
            throw DiscfgError.invalid("body", "a token request has no field \"\(unknown.stringValue.debugEscaped)\"; its fields are role, scopes (or configs) and description")
        }
        let fields = try decoder.container(keyedBy: Field.self)
        role = try fields.decode(Role.self, forKey: .role)
        let configs = try fields.decodeIfPresent([ConfigName].self, forKey: .configs)
        let texts = try fields.decodeIfPresent([String].self, forKey: .scopes)
        description = try fields.decodeIfPresent(String.self, forKey: .description)
        if configs != nil, texts != nil {
            throw DiscfgError.invalid("scopes", "a token request gives scopes or configs, not both; a config name is a scope")
        }
        if configs?.isEmpty == true {
            throw DiscfgError.invalid("configs", "configs is empty, so the token could touch no config; leave it out for every config")
        }
        if texts?.isEmpty == true {
            throw DiscfgError.invalid("scopes", "scopes is empty, so the token could touch nothing; leave it out for every config")
        }
        // A scope that does not parse refuses the request with its own message (field `scope`).
        scopes = try texts?.map(AccessScope.init) ?? configs?.map { AccessScope(config: $0) }
    }
}
