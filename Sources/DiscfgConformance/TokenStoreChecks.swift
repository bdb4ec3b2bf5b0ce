import DiscfgCore
import Foundation

/// Every store that keeps tokens remembers that it did, past the last revocation.
public struct TokenStoreChecks: Sendable {
    let conformance: StoreConformance


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
