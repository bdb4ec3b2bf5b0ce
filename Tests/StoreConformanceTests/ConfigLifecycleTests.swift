import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Config lifecycle")
struct ConfigLifecycleTests {
    @Test(arguments: StoreKind.allCases)
    func createStartsAtRevisionZeroAndKeepsSettings(kind: StoreKind) async throws {
        try await kind.conformance.configLifecycle.createStartsAtRevisionZeroAndKeepsSettings()
    }

    @Test(arguments: StoreKind.allCases)
    func createTwiceFailsWithConfigExists(kind: StoreKind) async throws {
        try await kind.conformance.configLifecycle.createTwiceFailsWithConfigExists()
    }

    @Test(arguments: StoreKind.allCases)
    func listConfigsIsSortedByName(kind: StoreKind) async throws {
        try await kind.conformance.configLifecycle.listConfigsIsSortedByName()
    }

    @Test(arguments: StoreKind.allCases)
    func updatePatchesOnlyTheGivenSettings(kind: StoreKind) async throws {
        try await kind.conformance.configLifecycle.updatePatchesOnlyTheGivenSettings()
    }

    @Test(arguments: StoreKind.allCases)
    func notificationTargetsAreKeptReplacedAndCleared(kind: StoreKind) async throws {
        try await kind.conformance.configLifecycle.notificationTargetsAreKeptReplacedAndCleared()
    }

    @Test(arguments: StoreKind.allCases)
    func encryptionSettingsAreKeptAndReplacedWhole(kind: StoreKind) async throws {
        try await kind.conformance.configLifecycle.encryptionSettingsAreKeptAndReplacedWhole()
    }

    @Test(arguments: StoreKind.allCases)
    func deleteRemovesTheConfigAndEverythingInIt(kind: StoreKind) async throws {
        try await kind.conformance.configLifecycle.deleteRemovesTheConfigAndEverythingInIt()
    }

    @Test(arguments: StoreKind.allCases)
    func keyCountFollowsEveryKindOfChange(kind: StoreKind) async throws {
        try await kind.conformance.configLifecycle.keyCountFollowsEveryKindOfChange()
    }

    @Test(arguments: StoreKind.allCases)
    func missingKeyInExistingConfigReadsAsNil(kind: StoreKind) async throws {
        try await kind.conformance.configLifecycle.missingKeyInExistingConfigReadsAsNil()
    }

    @Test(arguments: StoreKind.allCases)
    func everyOperationOnAnUnknownConfigThrowsConfigNotFound(kind: StoreKind) async throws {
        try await kind.conformance.configLifecycle.everyOperationOnAnUnknownConfigThrowsConfigNotFound()
    }
}
