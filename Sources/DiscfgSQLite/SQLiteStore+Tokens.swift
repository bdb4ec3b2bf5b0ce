import DiscfgCore
import Foundation

extension SQLiteStore: TokenStore {
    public func saveToken(_ token: AccessToken) async throws {
        // The `configs` column holds the scopes' text: a whole config is its bare name, so
        // the rows written before prefix scopes read back as they meant.
        let configs = try token.scopes.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        try await writer.write { connection in
            let inserted = try connection.run(
                "INSERT OR IGNORE INTO tokens (id, hash, role, configs, description, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                [.text(token.id), .blob(token.hash), .text(token.role.rawValue), .optional(configs), .optional(token.description), .integer(token.createdAt.milliseconds)]
            )
            guard inserted == 1 else { throw DiscfgError(.invalidArgument, "a token with id \(token.id) already exists", field: "token") }
            _ = try connection.run("INSERT OR IGNORE INTO token_history (id, first_issued_at) VALUES (1, ?)", [.integer(token.createdAt.milliseconds)])
        }
    }

    public func token(id: String) async throws -> AccessToken? {
        try readers.read { try $0.first("SELECT \(Self.tokenColumns) FROM tokens WHERE id = ?", [.text(id)], Self.token) }
    }

    public func listTokens() async throws -> [AccessToken] {
        try readers.read { try $0.query("SELECT \(Self.tokenColumns) FROM tokens ORDER BY created_at, id", [], Self.token) }
    }

    public func revokeToken(id: String) async throws {
        try await writer.write { connection in
            guard try connection.run("DELETE FROM tokens WHERE id = ?", [.text(id)]) == 1 else {
                throw DiscfgError(.invalidArgument, "no token with id \(id)", field: "token")
            }
        }
    }

    public func tokensWereIssued() async throws -> Bool {
        try readers.read { try $0.first("SELECT 1 FROM token_history UNION ALL SELECT 1 FROM tokens LIMIT 1", []) { _ in true } ?? false }
    }

    public func forgetIssuedTokens() async throws {
        try await writer.write { connection in
            let remaining = try connection.first("SELECT count(*) FROM tokens", []) { $0.integer(0) } ?? 0
            guard remaining == 0 else { throw Self.tokensRemain(Int(remaining)) }
            _ = try connection.run("DELETE FROM token_history", [])
        }
    }

    private static let tokenColumns = "id, hash, role, configs, description, created_at"

    private static func token(_ row: SQLiteRow) throws -> AccessToken {
        AccessToken(
            id: row.text(0), hash: row.blob(1), role: Role(rawValue: row.text(2)) ?? .read,
            scopes: try row.optionalText(3).map { try JSONDecoder().decode([AccessScope].self, from: Data($0.utf8)) },
            description: row.optionalText(4), createdAt: Date(milliseconds: row.integer(5))
        )
    }
}
