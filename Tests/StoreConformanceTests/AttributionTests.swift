import DiscfgConformance
import DiscfgCore
import Testing

@Suite("Every change records who and why")
struct AttributionTests {
    @Test(arguments: StoreKind.allCases)
    func everyKindOfChangeRecordsWhoAndWhy(kind: StoreKind) async throws {
        try await kind.conformance.attribution.everyKindOfChangeRecordsWhoAndWhy()
    }

    @Test(arguments: StoreKind.allCases)
    func aChangeWithoutAMessageRecordsWhoAlone(kind: StoreKind) async throws {
        try await kind.conformance.attribution.aChangeWithoutAMessageRecordsWhoAlone()
    }

    @Test(arguments: StoreKind.allCases)
    func changesWithoutAttributionReadAsUnknown(kind: StoreKind) async throws {
        try await kind.conformance.attribution.changesWithoutAttributionReadAsUnknown()
    }

    @Test(arguments: StoreKind.allCases)
    func anOversizedMessageIsRefusedAndChangesNothing(kind: StoreKind) async throws {
        try await kind.conformance.attribution.anOversizedMessageIsRefusedAndChangesNothing()
    }

    @Test(arguments: StoreKind.allCases)
    func aTransactionNamesItsOwnAttribution(kind: StoreKind) async throws {
        try await kind.conformance.attribution.aTransactionNamesItsOwnAttribution()
    }

    @Test(arguments: StoreKind.allCases)
    func anExpiryIsRecordedAsDiscfgsOwn(kind: StoreKind) async throws {
        try await kind.conformance.attribution.anExpiryIsRecordedAsDiscfgsOwn()
    }
}
