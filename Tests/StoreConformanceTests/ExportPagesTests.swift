import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Export page by page at one revision")
struct ExportPagesTests {
    @Test(arguments: StoreKind.allCases)
    func keysChangedCreatedAndDeletedBetweenPagesKeepTheExportAtItsRevision(kind: StoreKind) async throws {
        try await kind.conformance.exportPages.keysChangedCreatedAndDeletedBetweenPagesKeepTheExportAtItsRevision()
    }

    @Test(arguments: StoreKind.allCases)
    func pagesHoldTheItemsInKeyOrderWithinTheBudget(kind: StoreKind) async throws {
        try await kind.conformance.exportPages.pagesHoldTheItemsInKeyOrderWithinTheBudget()
    }

    @Test(arguments: StoreKind.with(.exportPagesReadHistory))
    func anExportWhoseHistoryIsCompactedMeanwhileFailsWithCompacted(kind: StoreKind) async throws {
        try await kind.conformance.exportPages.anExportWhoseHistoryIsCompactedMeanwhileFailsWithCompacted()
    }

    @Test(arguments: StoreKind.allCases)
    func anExportAtAPastRevisionIsTheConfigAsItWasThen(kind: StoreKind) async throws {
        try await kind.conformance.exportPages.anExportAtAPastRevisionIsTheConfigAsItWasThen()
    }

    @Test(arguments: StoreKind.allCases)
    func anUnknownConfigIsReportedBeforeAnyPage(kind: StoreKind) async throws {
        try await kind.conformance.exportPages.anUnknownConfigIsReportedBeforeAnyPage()
    }
}
