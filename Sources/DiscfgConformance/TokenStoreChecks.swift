import DiscfgCore
import Foundation
import Testing

/// Every store that keeps tokens remembers that it did, past the last revocation.
public struct TokenStoreChecks: Sendable {
    let conformance: StoreConformance


    public func issuedOutlivesRevocation() async throws {
        try await conformance.withStore { store, _ in
            let tokens = try #require(store as? any TokenStore, "\(conformance.name) keeps no tokens")
            #expect(try await !tokens.tokensWereIssued())
            let first = AccessToken(id: "aaaaaaaaaaaa", hash: Data(repeating: 1, count: 32), role: .admin, createdAt: Date(milliseconds: 1_000))
            let second = AccessToken(id: "bbbbbbbbbbbb", hash: Data(repeating: 2, count: 32), role: .read, createdAt: Date(milliseconds: 2_000))
            try await tokens.saveToken(first)
            try await tokens.saveToken(second)
            #expect(try await tokens.tokensWereIssued())
            #expect(try await tokens.listTokens().map(\.id) == [first.id, second.id], "the mark is not a token")
            try await tokens.revokeToken(id: first.id)
            await #expect(throws: DiscfgError.self) { try await tokens.forgetIssuedTokens() }
            try await tokens.revokeToken(id: second.id)
            #expect(try await tokens.listTokens().isEmpty)
            #expect(try await tokens.tokensWereIssued(), "revoking the last token forgot that tokens were issued")
            try await tokens.forgetIssuedTokens()
            #expect(try await !tokens.tokensWereIssued())
        }
    }
}

extension StoreConformance {
    /// The checks that token stores remember that tokens were issued.
    public var tokenStore: TokenStoreChecks { TokenStoreChecks(conformance: self) }
}
