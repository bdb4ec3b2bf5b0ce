import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Watch and event batches")
struct WatchTests {
    @Test(arguments: StoreKind.allCases)
    func prefixWatchReplaysThenFollowsWithoutGapOrRepeat(kind: StoreKind) async throws {
        try await kind.watchConformance.watch.prefixWatchReplaysThenFollowsWithoutGapOrRepeat()
    }

    @Test(arguments: StoreKind.allCases)
    func keyWatchSeesOnlyThatKey(kind: StoreKind) async throws {
        try await kind.watchConformance.watch.keyWatchSeesOnlyThatKey()
    }

    @Test(arguments: StoreKind.allCases)
    func rootWatchFromRevisionOneSeesEverything(kind: StoreKind) async throws {
        try await kind.watchConformance.watch.rootWatchFromRevisionOneSeesEverything()
    }

    @Test(arguments: StoreKind.allCases)
    func watchFromNowDeliversOnlyLaterChanges(kind: StoreKind) async throws {
        try await kind.watchConformance.watch.watchFromNowDeliversOnlyLaterChanges()
    }

    @Test(arguments: StoreKind.allCases)
    func manyWritesWhileWatchingArriveInOrderExactlyOnce(kind: StoreKind) async throws {
        try await kind.watchConformance.watch.manyWritesWhileWatchingArriveInOrderExactlyOnce()
    }

    @Test(arguments: StoreKind.allCases)
    func watchFromACompactedRevisionEndsWithCompacted(kind: StoreKind) async throws {
        try await kind.watchConformance.watch.watchFromACompactedRevisionEndsWithCompacted()
    }

    @Test(arguments: StoreKind.allCases)
    func cancellingTheConsumerEndsTheWatch(kind: StoreKind) async throws {
        try await kind.watchConformance.watch.cancellingTheConsumerEndsTheWatch()
    }

    @Test(arguments: StoreKind.allCases)
    func deletingTheConfigEndsTheWatchWithConfigNotFound(kind: StoreKind) async throws {
        try await kind.watchConformance.watch.deletingTheConfigEndsTheWatchWithConfigNotFound()
    }

    @Test(arguments: StoreKind.allCases)
    func aConfigDeletedAndCreatedAgainEndsTheWatch(kind: StoreKind) async throws {
        try await kind.watchConformance.watch.aConfigDeletedAndCreatedAgainEndsTheWatch()
    }

    @Test(arguments: StoreKind.allCases)
    func expiryReachesAWatcherWithoutAnyOtherWrite(kind: StoreKind) async throws {
        try await kind.watchConformance.watch.expiryReachesAWatcherWithoutAnyOtherWrite()
    }

    @Test(arguments: StoreKind.allCases)
    func eventBatchesReportHowFarTheyRead(kind: StoreKind) async throws {
        try await kind.watchConformance.watch.eventBatchesReportHowFarTheyRead()
    }

    @Test(arguments: StoreKind.allCases, WatchChecks.walkingEventBatchesYieldsEveryEventOnceArguments)
    func walkingEventBatchesYieldsEveryEventOnce(kind: StoreKind, limit: Int) async throws {
        try await kind.watchConformance.watch.walkingEventBatchesYieldsEveryEventOnce(limit: limit)
    }

    @Test(arguments: StoreKind.allCases)
    func eventsFromACompactedRevisionThrowCompacted(kind: StoreKind) async throws {
        try await kind.watchConformance.watch.eventsFromACompactedRevisionThrowCompacted()
    }

    @Test(arguments: StoreKind.allCases)
    func eventsRejectBadLimits(kind: StoreKind) async throws {
        try await kind.watchConformance.watch.eventsRejectBadLimits()
    }
}
