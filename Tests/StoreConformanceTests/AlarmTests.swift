import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Config alarms in the store")
struct AlarmTests {
    @Test(arguments: StoreKind.allCases)
    func aRaisedNoSpaceRefusesWritesOfKeysAndPassesDeletesAndReads(kind: StoreKind) async throws {
        try await kind.conformance.alarms.aRaisedNoSpaceRefusesWritesOfKeysAndPassesDeletesAndReads()
    }

    @Test(arguments: StoreKind.allCases)
    func aRaisedAlarmOutlivesReopeningTheStore(kind: StoreKind) async throws {
        try await kind.conformance.alarms.aRaisedAlarmOutlivesReopeningTheStore()
    }

    @Test(arguments: StoreKind.allCases)
    func disarmClearsTheAlarmAndKeepsTheOtherSettings(kind: StoreKind) async throws {
        try await kind.conformance.alarms.disarmClearsTheAlarmAndKeepsTheOtherSettings()
    }

    @Test(arguments: StoreKind.allCases)
    func eachMembersAlarmIsKeptApartAndAnyRefusesWrites(kind: StoreKind) async throws {
        try await kind.conformance.alarms.eachMembersAlarmIsKeptApartAndAnyRefusesWrites()
    }

    @Test(arguments: StoreKind.allCases)
    func concurrentRaisesOfDifferentMembersAreAllKept(kind: StoreKind) async throws {
        try await kind.conformance.alarms.concurrentRaisesOfDifferentMembersAreAllKept()
    }

    @Test(arguments: StoreKind.allCases)
    func concurrentDisarmsLeaveTheOtherAlarmsRaised(kind: StoreKind) async throws {
        try await kind.conformance.alarms.concurrentDisarmsLeaveTheOtherAlarmsRaised()
    }
}
