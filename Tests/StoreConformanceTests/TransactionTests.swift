import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Multi-key transactions")
struct TransactionTests {
    @Test(arguments: StoreKind.allCases)
    func successRunsWhenEveryComparisonHoldsAndMakesOneRevision(kind: StoreKind) async throws {
        try await kind.conformance.transaction.successRunsWhenEveryComparisonHoldsAndMakesOneRevision()
    }

    @Test(arguments: StoreKind.allCases)
    func failureRunsWhenAComparisonFailsAndReadsChangeNothing(kind: StoreKind) async throws {
        try await kind.conformance.transaction.failureRunsWhenAComparisonFailsAndReadsChangeNothing()
    }

    @Test(arguments: StoreKind.allCases)
    func comparisonsFollowEtcdsRules(kind: StoreKind) async throws {
        try await kind.conformance.transaction.comparisonsFollowEtcdsRules()
    }

    @Test(arguments: StoreKind.allCases)
    func deletesAndReadsOfPrefixesSeeTheBranchInOrder(kind: StoreKind) async throws {
        try await kind.conformance.transaction.deletesAndReadsOfPrefixesSeeTheBranchInOrder()
    }

    @Test(arguments: StoreKind.allCases)
    func rangesCompareReadAndDeleteExactlyTheirKeys(kind: StoreKind) async throws {
        try await kind.conformance.transaction.rangesCompareReadAndDeleteExactlyTheirKeys()
    }

    @Test(arguments: StoreKind.allCases)
    func aTransactionThatChangesNothingKeepsTheRevision(kind: StoreKind) async throws {
        try await kind.conformance.transaction.aTransactionThatChangesNothingKeepsTheRevision()
    }

    @Test(arguments: StoreKind.allCases)
    func watchersAndEventPagesGetATransactionWhole(kind: StoreKind) async throws {
        try await kind.conformance.transaction.watchersAndEventPagesGetATransactionWhole()
    }

    @Test(arguments: StoreKind.allCases)
    func pastReadsSeeATransactionAsOneStep(kind: StoreKind) async throws {
        try await kind.conformance.transaction.pastReadsSeeATransactionAsOneStep()
    }

    @Test(arguments: StoreKind.allCases)
    func keepLastNDropsWholeTransactions(kind: StoreKind) async throws {
        try await kind.conformance.transaction.keepLastNDropsWholeTransactions()
    }

    @Test(arguments: StoreKind.allCases)
    func invalidTransactionsChangeNothing(kind: StoreKind) async throws {
        try await kind.conformance.transaction.invalidTransactionsChangeNothing()
    }

    @Test(arguments: StoreKind.allCases)
    func concurrentTransactionsLoseNothing(kind: StoreKind) async throws {
        try await kind.conformance.transaction.concurrentTransactionsLoseNothing()
    }
}
