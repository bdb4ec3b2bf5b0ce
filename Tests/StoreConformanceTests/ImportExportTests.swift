import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Export and import")
struct ImportExportTests {
    @Test(arguments: StoreKind.allCases)
    func exportHoldsEveryLiveItemInKeyOrder(kind: StoreKind) async throws {
        try await kind.conformance.importExport.exportHoldsEveryLiveItemInKeyOrder()
    }

    @Test(arguments: StoreKind.allCases)
    func importIntoAnotherConfigReproducesTheLiveItems(kind: StoreKind) async throws {
        try await kind.conformance.importExport.importIntoAnotherConfigReproducesTheLiveItems()
    }

    @Test(arguments: StoreKind.allCases)
    func reimportingTheSameSnapshotChangesNothing(kind: StoreKind) async throws {
        try await kind.conformance.importExport.reimportingTheSameSnapshotChangesNothing()
    }

    @Test(arguments: StoreKind.allCases)
    func importChangesOnlyWhatDiffers(kind: StoreKind) async throws {
        try await kind.conformance.importExport.importChangesOnlyWhatDiffers()
    }

    @Test(arguments: StoreKind.allCases)
    func replaceDeletesKeysNotInTheSnapshot(kind: StoreKind) async throws {
        try await kind.conformance.importExport.replaceDeletesKeysNotInTheSnapshot()
    }

    @Test(arguments: StoreKind.allCases)
    func importWithADuplicateKeyChangesNothing(kind: StoreKind) async throws {
        try await kind.conformance.importExport.importWithADuplicateKeyChangesNothing()
    }

    @Test(arguments: StoreKind.allCases)
    func importWithAnOversizedValueChangesNothing(kind: StoreKind) async throws {
        try await kind.conformance.importExport.importWithAnOversizedValueChangesNothing()
    }

    @Test(arguments: StoreKind.allCases)
    func importSkipsEntriesThatHaveAlreadyExpired(kind: StoreKind) async throws {
        try await kind.conformance.importExport.importSkipsEntriesThatHaveAlreadyExpired()
    }
}
