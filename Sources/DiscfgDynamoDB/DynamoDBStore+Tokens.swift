import DiscfgAWS
import DiscfgCore
import Foundation

/// Bearer tokens live in the same table, under `pk=#tokens, sk=ID`, so the store that
/// holds the configuration also guards it. `sk=#issued` marks that a token was ever
/// saved; it outlives revocation.
extension DynamoDBStore: TokenStore {

    public func saveToken(_ token: AccessToken) async throws {
        // The mark first: a token never exists without it.
        var marker = DynamoDBLayout.key(DynamoDBLayout.tokensPK, DynamoDBLayout.issuedMarkerSK)
        marker[.created] = .number(token.createdAt.milliseconds)
        do {
            _ = try await connection.raw("PutItem", PutItemInput(TableName: connection.table, Item: marker), as: IgnoredOutput.self)
        } catch {
            throw connection.mapped(error, operation: "PutItem")
        }
        var item = DynamoDBLayout.key(DynamoDBLayout.tokensPK, token.id)
        item[.tokenHash] = .b(token.hash)
        item[.role] = .s(token.role.rawValue)
        item[.created] = .number(token.createdAt.milliseconds)
        // The scopes' text, where a whole config is its bare name: items written before
        // prefix scopes read back as they meant.
        if let scopes = token.scopes { item[.tokenConfigs] = .l(scopes.map { .s($0.description) }) }
        if let description = token.description { item[.tokenDescription] = .s(description) }
        let input = PutItemInput(table: connection.table, item: item, condition: .itemAbsent)
        do {
            _ = try await connection.raw("PutItem", input, as: IgnoredOutput.self)
        } catch let error as AWSError where error.code == .conditionalCheckFailed {
            throw DiscfgError(.invalidArgument, "a token with id \(token.id) already exists", field: "token")
        } catch {
            throw connection.mapped(error, operation: "PutItem")
        }
    }

    public func token(id: String) async throws -> AccessToken? {
        try await connection.getItem(DynamoDBLayout.key(DynamoDBLayout.tokensPK, id), consistent: true).flatMap(Self.token)
    }

    public func listTokens() async throws -> [AccessToken] {
        let items = try await connection.queryAll(QueryInput(table: connection.table, key: .partition(DynamoDBLayout.tokensPK), consistent: true))
        return items.compactMap(Self.token).sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    public func revokeToken(id: String) async throws {
        let input = DeleteItemInput(table: connection.table, key: DynamoDBLayout.key(DynamoDBLayout.tokensPK, id), condition: .itemExists)
        do {
            _ = try await connection.raw("DeleteItem", input, as: IgnoredOutput.self)
        } catch let error as AWSError where error.code == .conditionalCheckFailed {
            throw DiscfgError(.invalidArgument, "no token with id \(id)", field: "token")
        } catch {
            throw connection.mapped(error, operation: "DeleteItem")
        }
    }

    public func tokensWereIssued() async throws -> Bool {
        if try await connection.getItem(DynamoDBLayout.key(DynamoDBLayout.tokensPK, DynamoDBLayout.issuedMarkerSK), consistent: true) != nil { return true }
        return try await !listTokens().isEmpty
    }

    public func forgetIssuedTokens() async throws {
        let remaining = try await listTokens().count
        guard remaining == 0 else { throw Self.tokensRemain(remaining) }
        let input = DeleteItemInput(TableName: connection.table, Key: DynamoDBLayout.key(DynamoDBLayout.tokensPK, DynamoDBLayout.issuedMarkerSK))
        do {
            _ = try await connection.raw("DeleteItem", input, as: IgnoredOutput.self)
        } catch {
            throw connection.mapped(error, operation: "DeleteItem")
        }
    }

    private static func token(_ item: Attributes) -> AccessToken? {
        guard let id = item[.sk]?.string, let hash = item[.tokenHash]?.data, let created = item[.created]?.int64 else { return nil }
        // A scope that does not parse is left out: the token reaches less, never more.
        var scopes: [AccessScope]?
        if case .l(let texts)? = item[.tokenConfigs] { scopes = texts.compactMap { $0.string.flatMap { try? AccessScope($0) } } }
        return AccessToken(
            id: id, hash: hash, role: item[.role]?.string.flatMap(Role.init(rawValue:)) ?? .read,
            scopes: scopes, description: item[.tokenDescription]?.string, createdAt: Date(milliseconds: created)
        )
    }
}
