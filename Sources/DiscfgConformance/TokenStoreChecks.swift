import DiscfgCore
import Foundation

/// Every store that keeps tokens remembers that it did, past the last revocation, and
/// keeps each token's scopes as they were given.
public struct TokenStoreChecks: Sendable {
    let conformance: StoreConformance

    /// Whole-config, discfg-prefix and etcd-prefix scopes read back as saved, from one
    /// token and from the list; a token of every config stays one (nil, not empty); a
    /// token of config names (as records were before prefix scopes) reads as whole configs.
    public func scopesRoundTrip() async throws {
        try await conformance.withStore { store, _ in
            let tokens = try require(store as? any TokenStore, "\(conformance.name) keeps no tokens")
            let scopes = try ["demo:/app/", "demo:/web/a/", "prod", "demo:etcd:/registry/", "demo:etcd:a+b,c=d"].map(AccessScope.init)
            let scoped = AccessToken(id: "scopedscoped", hash: Data(repeating: 3, count: 32), role: .write, scopes: scopes, description: "deploy", createdAt: Date(milliseconds: 1_000))
            let everything = AccessToken(id: "everything00", hash: Data(repeating: 4, count: 32), role: .read, scopes: nil, createdAt: Date(milliseconds: 2_000))
            let named = AccessToken(id: "configsonly0", hash: Data(repeating: 5, count: 32), role: .read, configs: [try ConfigName("demo")], createdAt: Date(milliseconds: 3_000))
            for token in [scoped, everything, named] { try await tokens.saveToken(token) }
            let read = try await require(tokens.token(id: scoped.id), "the scoped token is not found")
            expectEqual(read.scopes?.map(\.description), scopes.map(\.description), "scopes of one token")
            expectEqual(read.description, "deploy", "description")
            try await expectEqual(tokens.listTokens().map(\.scopes), [scopes, nil, [AccessScope(config: try ConfigName("demo"))]], "scopes in the list")
            let readNamed = try await require(tokens.token(id: named.id), "the config token is not found")
            expect(readNamed.allows(.read, on: try ConfigName("demo")), "a token of config names reaches the whole config")
            expect(read.grant.allows(.write, on: try ConfigName("demo"), key: try Key("/app/x")), "the scoped token reaches its prefix")
            expect(!read.grant.allows(.write, on: try ConfigName("demo"), key: try Key("/apple")), "the scoped token reaches past its prefix")
        }
    }


    public func issuedOutlivesRevocation() async throws {
        try await conformance.withStore { store, _ in
            let tokens = try require(store as? any TokenStore, "\(conformance.name) keeps no tokens")
            try await expect(!tokens.tokensWereIssued(), "tokens were issued")
            let first = AccessToken(id: "aaaaaaaaaaaa", hash: Data(repeating: 1, count: 32), role: .admin, createdAt: Date(milliseconds: 1_000))
            let second = AccessToken(id: "bbbbbbbbbbbb", hash: Data(repeating: 2, count: 32), role: .read, createdAt: Date(milliseconds: 2_000))
            try await tokens.saveToken(first)
            try await tokens.saveToken(second)
            try await expect(tokens.tokensWereIssued(), "no tokens were issued")
            try await expectEqual(tokens.listTokens().map(\.id), [first.id, second.id], "the mark is not a token")
            try await tokens.revokeToken(id: first.id)
            do {
                try await tokens.forgetIssuedTokens()
                fail("forgetIssuedTokens() succeeded while a token is still valid")
            } catch is DiscfgError {
                // Refused, as it must be while a token is valid.
            }
            try await tokens.revokeToken(id: second.id)
            try await expectEmpty(tokens.listTokens())
            try await expect(tokens.tokensWereIssued(), "revoking the last token forgot that tokens were issued")
            try await tokens.forgetIssuedTokens()
            try await expect(!tokens.tokensWereIssued(), "tokens were issued")
        }
    }
}

extension StoreConformance {
    /// The checks that token stores remember that tokens were issued.
    public var tokenStore: TokenStoreChecks { TokenStoreChecks(conformance: self) }
}
