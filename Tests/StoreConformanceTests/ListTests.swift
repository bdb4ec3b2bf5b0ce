import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Prefix listing, pagination and deletePrefix")
struct ListTests {
    @Test(arguments: StoreKind.allCases)
    func recursiveListReturnsEveryKeyUnderThePrefixInByteOrder(kind: StoreKind) async throws {
        try await kind.conformance.list.recursiveListReturnsEveryKeyUnderThePrefixInByteOrder()
    }

    @Test(arguments: StoreKind.allCases)
    func nonRecursiveListFoldsDeeperKeysIntoPrefixes(kind: StoreKind) async throws {
        try await kind.conformance.list.nonRecursiveListFoldsDeeperKeysIntoPrefixes()
    }

    @Test(arguments: StoreKind.allCases)
    func emptyAndUnmatchedPrefixesListNothing(kind: StoreKind) async throws {
        try await kind.conformance.list.emptyAndUnmatchedPrefixesListNothing()
    }

    @Test(arguments: StoreKind.allCases, ListChecks.recursivePagesReturnEveryKeyExactlyOnceArguments)
    func recursivePagesReturnEveryKeyExactlyOnce(kind: StoreKind, limit: Int) async throws {
        try await kind.conformance.list.recursivePagesReturnEveryKeyExactlyOnce(limit: limit)
    }

    @Test(arguments: StoreKind.allCases, ListChecks.nonRecursivePagesReturnEveryEntryExactlyOnceArguments)
    func nonRecursivePagesReturnEveryEntryExactlyOnce(kind: StoreKind, limit: Int) async throws {
        try await kind.conformance.list.nonRecursivePagesReturnEveryEntryExactlyOnce(limit: limit)
    }

    @Test(arguments: StoreKind.allCases)
    func pagesSkipKeysThatExpireBetweenPages(kind: StoreKind) async throws {
        try await kind.conformance.list.pagesSkipKeysThatExpireBetweenPages()
    }

    @Test(arguments: StoreKind.allCases)
    func badLimitsAreInvalidAndAnyCursorIsAPosition(kind: StoreKind) async throws {
        try await kind.conformance.list.badLimitsAreInvalidAndAnyCursorIsAPosition()
    }

    @Test(arguments: StoreKind.allCases)
    func deletePrefixDeletesOnlyKeysUnderItInKeyOrder(kind: StoreKind) async throws {
        try await kind.conformance.list.deletePrefixDeletesOnlyKeysUnderItInKeyOrder()
    }

    @Test(arguments: StoreKind.allCases)
    func deletePrefixOfTheRootEmptiesTheConfig(kind: StoreKind) async throws {
        try await kind.conformance.list.deletePrefixOfTheRootEmptiesTheConfig()
    }
}
