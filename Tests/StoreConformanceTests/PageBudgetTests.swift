import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Pages capped by bytes in the store")
struct PageBudgetTests {
    @Test(arguments: StoreKind.allCases, PageBudgetChecks.listPagesStayWithinTheBudgetAndVisitEveryEntryOnceArguments)
    func listPagesStayWithinTheBudgetAndVisitEveryEntryOnce(kind: StoreKind, recursive: Bool) async throws {
        try await kind.conformance.pageBudget.listPagesStayWithinTheBudgetAndVisitEveryEntryOnce(recursive: recursive)
    }

    @Test(arguments: StoreKind.allCases)
    func historyPagesStayWithinTheBudgetAndVisitEveryEventOnce(kind: StoreKind) async throws {
        try await kind.conformance.pageBudget.historyPagesStayWithinTheBudgetAndVisitEveryEventOnce()
    }

    @Test(arguments: StoreKind.allCases)
    func eventBatchesStayWithinTheBudgetAndVisitEveryEventOnce(kind: StoreKind) async throws {
        try await kind.conformance.pageBudget.eventBatchesStayWithinTheBudgetAndVisitEveryEventOnce()
    }

    @Test(arguments: StoreKind.allCases)
    func aPageOfLargeValuesHoldsAtMostTheDefaultBudget(kind: StoreKind) async throws {
        try await kind.conformance.pageBudget.aPageOfLargeValuesHoldsAtMostTheDefaultBudget()
    }

    @Test(arguments: StoreKind.allCases)
    func transactionReadsShareOnePageBudget(kind: StoreKind) async throws {
        try await kind.conformance.pageBudget.transactionReadsShareOnePageBudget()
    }

    @Test(arguments: StoreKind.allCases)
    func aBudgetBelowOneByteIsRefused(kind: StoreKind) async throws {
        try await kind.conformance.pageBudget.aBudgetBelowOneByteIsRefused()
    }
}
