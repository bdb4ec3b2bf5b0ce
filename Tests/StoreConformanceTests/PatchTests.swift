import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Patches of JSON values")
struct PatchTests {
    @Test(arguments: StoreKind.allCases)
    func aMergePatchChangesMembersAndKeepsTypeAndTTL(kind: StoreKind) async throws {
        try await kind.conformance.patch.aMergePatchChangesMembersAndKeepsTypeAndTTL()
    }

    @Test(arguments: StoreKind.allCases)
    func aJSONPatchAppliesEveryOperationInOrder(kind: StoreKind) async throws {
        try await kind.conformance.patch.aJSONPatchAppliesEveryOperationInOrder()
    }

    @Test(arguments: StoreKind.allCases, PatchChecks.aPatchThatDoesNotApplyChangesNothingArguments)
    func aPatchThatDoesNotApplyChangesNothing(kind: StoreKind, patch: String) async throws {
        try await kind.conformance.patch.aPatchThatDoesNotApplyChangesNothing(patch: patch)
    }

    @Test(arguments: StoreKind.allCases)
    func aPatchOfAnAbsentKeyIsKeyNotFound(kind: StoreKind) async throws {
        try await kind.conformance.patch.aPatchOfAnAbsentKeyIsKeyNotFound()
    }

    @Test(arguments: StoreKind.allCases)
    func aPatchOfAValueThatIsNotJSONIsPatchFailed(kind: StoreKind) async throws {
        try await kind.conformance.patch.aPatchOfAValueThatIsNotJSONIsPatchFailed()
    }

    @Test(arguments: StoreKind.allCases)
    func aPatchWhoseConditionsFailReturnsTheCurrentItemAndChangesNothing(kind: StoreKind) async throws {
        try await kind.conformance.patch.aPatchWhoseConditionsFailReturnsTheCurrentItemAndChangesNothing()
    }

    @Test(arguments: StoreKind.allCases)
    func aTransactionsPatchAndPutShareOneRevision(kind: StoreKind) async throws {
        try await kind.conformance.patch.aTransactionsPatchAndPutShareOneRevision()
    }

    @Test(arguments: StoreKind.allCases)
    func concurrentMergePatchesLoseNoMember(kind: StoreKind) async throws {
        try await kind.conformance.patch.concurrentMergePatchesLoseNoMember()
    }
}
