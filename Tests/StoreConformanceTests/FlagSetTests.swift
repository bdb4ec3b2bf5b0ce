import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Flag sets under /flags/ on every store")
struct FlagSetTests {
    @Test(arguments: StoreKind.allCases, FlagSetChecks.aFlagSetFlagdRefusesIsRefusedArguments)
    func aFlagSetFlagdRefusesIsRefused(kind: StoreKind, flagSet: String) async throws {
        try await kind.conformance.flagSets.aFlagSetFlagdRefusesIsRefused(flagSet: flagSet)
    }

    @Test(arguments: StoreKind.allCases)
    func aJSONPatchThatBreaksAFlagSetIsRefused(kind: StoreKind) async throws {
        try await kind.conformance.flagSets.aJSONPatchThatBreaksAFlagSetIsRefused()
    }

    @Test(arguments: StoreKind.allCases)
    func flagSetsShareNoFlagKey(kind: StoreKind) async throws {
        try await kind.conformance.flagSets.flagSetsShareNoFlagKey()
    }

    @Test(arguments: StoreKind.allCases)
    func aFlagSetThatExpiredNoLongerClaimsItsKeys(kind: StoreKind) async throws {
        try await kind.conformance.flagSets.aFlagSetThatExpiredNoLongerClaimsItsKeys()
    }
}
