import Foundation
import Synchronization

extension MemoryStore: TokenStore {
    public func saveToken(_ token: AccessToken) async throws {
        try tokens.withLock { tokens in
            guard tokens[token.id] == nil else { throw DiscfgError.invalid("token", "a token with id \(token.id) already exists") }
            tokens[token.id] = token
        }
        tokensIssued.withLock { $0 = true }
    }

    public func token(id: String) async throws -> AccessToken? {
        tokens.withLock { $0[id] }
    }

    public func listTokens() async throws -> [AccessToken] {
        tokens.withLock { Array($0.values) }.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    public func revokeToken(id: String) async throws {
        try tokens.withLock { tokens in
            guard tokens.removeValue(forKey: id) != nil else { throw DiscfgError.invalid("token", "no token with id \(id)") }
        }
    }

    public func tokensWereIssued() async throws -> Bool {
        tokensIssued.withLock { $0 }
    }

    public func forgetIssuedTokens() async throws {
        let remaining = tokens.withLock { $0.count }
        guard remaining == 0 else { throw Self.tokensRemain(remaining) }
        tokensIssued.withLock { $0 = false }
    }
}
