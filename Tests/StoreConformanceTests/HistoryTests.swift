import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("History and reads at a past revision")
struct HistoryTests {
    @Test(arguments: StoreKind.allCases)
    func historyIsNewestFirstAndOnlyForTheKey(kind: StoreKind) async throws {
        try await kind.conformance.history.historyIsNewestFirstAndOnlyForTheKey()
    }

    @Test(arguments: StoreKind.allCases, HistoryChecks.historyPaginatesWithNextBeforeArguments)
    func historyPaginatesWithNextBefore(kind: StoreKind, limit: Int) async throws {
        try await kind.conformance.history.historyPaginatesWithNextBefore(limit: limit)
    }

    @Test(arguments: StoreKind.allCases)
    func historyRejectsBadLimits(kind: StoreKind) async throws {
        try await kind.conformance.history.historyRejectsBadLimits()
    }

    @Test(arguments: StoreKind.allCases)
    func getAtEveryPastRevisionReturnsTheValueThen(kind: StoreKind) async throws {
        try await kind.conformance.history.getAtEveryPastRevisionReturnsTheValueThen()
    }

    @Test(arguments: StoreKind.allCases)
    func getAtAFutureRevisionIsInvalid(kind: StoreKind) async throws {
        try await kind.conformance.history.getAtAFutureRevisionIsInvalid()
    }

    @Test(arguments: StoreKind.allCases)
    func keepLastNCompactsOlderHistory(kind: StoreKind) async throws {
        try await kind.conformance.history.keepLastNCompactsOlderHistory()
    }

    @Test(arguments: StoreKind.allCases)
    func updatingRetentionCompactsAtOnce(kind: StoreKind) async throws {
        try await kind.conformance.history.updatingRetentionCompactsAtOnce()
    }

    @Test(arguments: StoreKind.allCases)
    func keepDaysCompactsAsTheClockMoves(kind: StoreKind) async throws {
        try await kind.conformance.history.keepDaysCompactsAsTheClockMoves()
    }

    @Test(arguments: StoreKind.allCases)
    func compactDropsHistoryThroughARevision(kind: StoreKind) async throws {
        try await kind.conformance.history.compactDropsHistoryThroughARevision()
    }

    @Test(arguments: StoreKind.allCases)
    func pastReadsAndHistoryFollowManyChanges(kind: StoreKind) async throws {
        try await kind.conformance.history.pastReadsAndHistoryFollowManyChanges()
    }
}
