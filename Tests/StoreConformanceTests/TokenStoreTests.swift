import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Token stores remember that tokens were issued and keep their scopes")
struct TokenStoreTests {
    @Test("issued stays true after every token is revoked; forgetting needs no valid token", arguments: StoreKind.with(.tokens))
    func issuedOutlivesRevocation(kind: StoreKind) async throws {
        try await kind.conformance.tokenStore.issuedOutlivesRevocation()
    }

    @Test("scopes (configs, discfg and etcd prefixes) read back as saved; config names read as whole configs", arguments: StoreKind.with(.tokens))
    func scopesRoundTrip(kind: StoreKind) async throws {
        try await kind.conformance.tokenStore.scopesRoundTrip()
    }
}
