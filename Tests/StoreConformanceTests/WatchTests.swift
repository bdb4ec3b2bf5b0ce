import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Watch and event batches")
struct WatchTests {
    @Test(arguments: StoreKind.allCases)
    func prefixWatchReplaysThenFollowsWithoutGapOrRepeat(kind: StoreKind) async throws {
        try await kind.conformance.watch.prefixWatchReplaysThenFollowsWithoutGapOrRepeat()
    }

    @Test(arguments: StoreKind.allCases)
    func keyWatchSeesOnlyThatKey(kind: StoreKind) async throws {
        try await kind.conformance.watch.keyWatchSeesOnlyThatKey()
    }

    @Test(arguments: StoreKind.allCases)
    func rootWatchFromRevisionOneSeesEverything(kind: StoreKind) async throws {
        try await kind.conformance.watch.rootWatchFromRevisionOneSeesEverything()
    }

    @Test(arguments: StoreKind.allCases)
    func watchFromNowDeliversOnlyLaterChanges(kind: StoreKind) async throws {
        try await kind.conformance.watch.watchFromNowDeliversOnlyLaterChanges()
    }

    @Test(arguments: StoreKind.allCases)
    func manyWritesWhileWatchingArriveInOrderExactlyOnce(kind: StoreKind) async throws {
        try await kind.conformance.watch.manyWritesWhileWatchingArriveInOrderExactlyOnce()
    }

    @Test(arguments: StoreKind.allCases)
    func watchFromACompactedRevisionEndsWithCompacted(kind: StoreKind) async throws {
        try await kind.conformance.watch.watchFromACompactedRevisionEndsWithCompacted()
    }

    @Test(arguments: StoreKind.allCases)
    func cancellingTheConsumerEndsTheWatch(kind: StoreKind) async throws {
        try await kind.conformance.watch.cancellingTheConsumerEndsTheWatch()
    }

    @Test(arguments: StoreKind.allCases)
    func deletingTheConfigEndsTheWatchWithConfigNotFound(kind: StoreKind) async throws {
        try await kind.conformance.watch.deletingTheConfigEndsTheWatchWithConfigNotFound()
    }

    @Test(arguments: StoreKind.allCases)
    func aConfigDeletedAndCreatedAgainEndsTheWatch(kind: StoreKind) async throws {
        try await kind.conformance.watch.aConfigDeletedAndCreatedAgainEndsTheWatch()
    }

    @Test(arguments: StoreKind.allCases)
    func expiryReachesAWatcherWithoutAnyOtherWrite(kind: StoreKind) async throws {
        try await kind.conformance.watch.expiryReachesAWatcherWithoutAnyOtherWrite()
    }

    @Test(arguments: StoreKind.allCases)
    func eventBatchesReportHowFarTheyRead(kind: StoreKind) async throws {
        try await kind.conformance.watch.eventBatchesReportHowFarTheyRead()
    }

    @Test(arguments: StoreKind.allCases, WatchChecks.walkingEventBatchesYieldsEveryEventOnceArguments)
    func walkingEventBatchesYieldsEveryEventOnce(kind: StoreKind, limit: Int) async throws {
        try await kind.conformance.watch.walkingEventBatchesYieldsEveryEventOnce(limit: limit)
    }

    @Test(arguments: StoreKind.allCases)
    func eventsFromACompactedRevisionThrowCompacted(kind: StoreKind) async throws {
        try await kind.conformance.watch.eventsFromACompactedRevisionThrowCompacted()
    }

    @Test(arguments: StoreKind.allCases)
    func eventsRejectBadLimits(kind: StoreKind) async throws {
        try await kind.conformance.watch.eventsRejectBadLimits()
    }
}
