import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Conditions (compare-and-swap)")
struct ConditionTests {
    @Test(arguments: StoreKind.allCases, ConditionChecks.setHappensWhenConditionsHoldArguments)
    func setHappensWhenConditionsHold(kind: StoreKind, condition: ConditionCase) async throws {
        try await kind.conformance.condition.setHappensWhenConditionsHold(condition: condition)
    }

    @Test(arguments: StoreKind.allCases, ConditionChecks.failedSetReturnsTheCurrentItemAndChangesNothingArguments)
    func failedSetReturnsTheCurrentItemAndChangesNothing(kind: StoreKind, condition: ConditionCase) async throws {
        try await kind.conformance.condition.failedSetReturnsTheCurrentItemAndChangesNothing(condition: condition)
    }

    @Test(arguments: StoreKind.allCases, ConditionChecks.failedSetOnAnAbsentKeyCarriesNoItemArguments)
    func failedSetOnAnAbsentKeyCarriesNoItem(kind: StoreKind, condition: ConditionCase) async throws {
        try await kind.conformance.condition.failedSetOnAnAbsentKeyCarriesNoItem(condition: condition)
    }

    @Test(arguments: StoreKind.allCases)
    func versionZeroCreatesOnlyWhenAbsent(kind: StoreKind) async throws {
        try await kind.conformance.condition.versionZeroCreatesOnlyWhenAbsent()
    }

    @Test(arguments: StoreKind.allCases, ConditionChecks.deleteHappensWhenConditionsHoldArguments)
    func deleteHappensWhenConditionsHold(kind: StoreKind, condition: ConditionCase) async throws {
        try await kind.conformance.condition.deleteHappensWhenConditionsHold(condition: condition)
    }

    @Test(arguments: StoreKind.allCases, ConditionChecks.failedDeleteReturnsTheCurrentItemAndChangesNothingArguments)
    func failedDeleteReturnsTheCurrentItemAndChangesNothing(kind: StoreKind, condition: ConditionCase) async throws {
        try await kind.conformance.condition.failedDeleteReturnsTheCurrentItemAndChangesNothing(condition: condition)
    }

    @Test(arguments: StoreKind.allCases, ConditionChecks.failedDeleteOnAnAbsentKeyIsAConditionFailureArguments)
    func failedDeleteOnAnAbsentKeyIsAConditionFailure(kind: StoreKind, condition: ConditionCase) async throws {
        try await kind.conformance.condition.failedDeleteOnAnAbsentKeyIsAConditionFailure(condition: condition)
    }

    @Test(arguments: StoreKind.allCases)
    func deleteOfAnAbsentKeyWhoseConditionsHoldIsKeyNotFound(kind: StoreKind) async throws {
        try await kind.conformance.condition.deleteOfAnAbsentKeyWhoseConditionsHoldIsKeyNotFound()
    }
}
