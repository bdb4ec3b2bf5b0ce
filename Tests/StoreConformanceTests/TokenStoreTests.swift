import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Token stores remember that tokens were issued")
struct TokenStoreTests {
    static let kinds = StoreKind.allCases.filter { $0 != .remote }

    @Test("issued stays true after every token is revoked; forgetting needs no valid token", arguments: TokenStoreTests.kinds)
    func issuedOutlivesRevocation(kind: StoreKind) async throws {
        try await kind.conformance.tokenStore.issuedOutlivesRevocation()
    }
}
