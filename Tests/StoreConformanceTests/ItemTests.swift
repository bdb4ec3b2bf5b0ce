import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Items: set, get, delete, versions and revisions")
struct ItemTests {
    @Test(arguments: StoreKind.allCases)
    func firstSetCreatesVersionOneAtRevisionOne(kind: StoreKind) async throws {
        try await kind.conformance.item.firstSetCreatesVersionOneAtRevisionOne()
    }

    @Test(arguments: StoreKind.allCases)
    func secondSetBumpsVersionAndKeepsCreateRevision(kind: StoreKind) async throws {
        try await kind.conformance.item.secondSetBumpsVersionAndKeepsCreateRevision()
    }

    @Test(arguments: StoreKind.allCases)
    func deleteRecordsTheItemBeforeAndReCreateStartsOver(kind: StoreKind) async throws {
        try await kind.conformance.item.deleteRecordsTheItemBeforeAndReCreateStartsOver()
    }

    @Test(arguments: StoreKind.allCases)
    func deletingAMissingKeyThrowsKeyNotFoundAndChangesNothing(kind: StoreKind) async throws {
        try await kind.conformance.item.deletingAMissingKeyThrowsKeyNotFoundAndChangesNothing()
    }

    @Test(arguments: StoreKind.allCases)
    func setReturnsExactlyWhatGetReadsBack(kind: StoreKind) async throws {
        try await kind.conformance.item.setReturnsExactlyWhatGetReadsBack()
    }

    @Test(arguments: StoreKind.allCases)
    func contentTypeIsKeptAndReplacedBySet(kind: StoreKind) async throws {
        try await kind.conformance.item.contentTypeIsKeptAndReplacedBySet()
    }

    @Test(arguments: StoreKind.allCases)
    func binaryValuesRoundTripByteForByte(kind: StoreKind) async throws {
        try await kind.conformance.item.binaryValuesRoundTripByteForByte()
    }

    @Test(arguments: StoreKind.allCases)
    func emptyValueIsAllowedAndDistinctFromAbsent(kind: StoreKind) async throws {
        try await kind.conformance.item.emptyValueIsAllowedAndDistinctFromAbsent()
    }

    @Test(arguments: StoreKind.allCases)
    func keysAreNormalizedBeforeTheyReachTheStore(kind: StoreKind) async throws {
        try await kind.conformance.item.keysAreNormalizedBeforeTheyReachTheStore()
    }

    @Test(arguments: StoreKind.allCases)
    func configsAreIndependent(kind: StoreKind) async throws {
        try await kind.conformance.item.configsAreIndependent()
    }
}
