import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Concurrent compare-and-swap")
struct ConcurrencyTests {
    @Test(arguments: StoreKind.allCases)
    func concurrentIncrementsLoseNoUpdate(kind: StoreKind) async throws {
        try await kind.conformance.concurrency.concurrentIncrementsLoseNoUpdate()
    }
}
