import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Token stores remember that tokens were issued")
struct TokenStoreTests {
    @Test("issued stays true after every token is revoked; forgetting needs no valid token", arguments: StoreKind.with(.tokens))
    func issuedOutlivesRevocation(kind: StoreKind) async throws {
        try await kind.conformance.tokenStore.issuedOutlivesRevocation()
    }
}
