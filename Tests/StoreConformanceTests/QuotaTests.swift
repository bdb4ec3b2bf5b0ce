import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Config quotas in the store")
struct QuotaTests {
    @Test(arguments: StoreKind.allCases)
    func byteCountFollowsEveryKindOfChange(kind: StoreKind) async throws {
        try await kind.conformance.quota.byteCountFollowsEveryKindOfChange()
    }

    @Test(arguments: StoreKind.allCases)
    func changesPastTheQuotaAreRefusedAndShrinkingOnesPass(kind: StoreKind) async throws {
        try await kind.conformance.quota.changesPastTheQuotaAreRefusedAndShrinkingOnesPass()
    }

    @Test(arguments: StoreKind.allCases)
    func quotaIsKeptReplacedAndRemoved(kind: StoreKind) async throws {
        try await kind.conformance.quota.quotaIsKeptReplacedAndRemoved()
    }
}
