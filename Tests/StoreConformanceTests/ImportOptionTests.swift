import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Import options: dry run, a revision to apply at, a prefix, schemas")
struct ImportOptionTests {
    @Test(arguments: StoreKind.allCases)
    func aDryRunAnswersTheChangeAndWritesNothing(kind: StoreKind) async throws {
        try await kind.conformance.importOptions.aDryRunAnswersTheChangeAndWritesNothing()
    }

    @Test(arguments: StoreKind.allCases)
    func ifRevisionAppliesOnlyAtThatRevision(kind: StoreKind) async throws {
        try await kind.conformance.importOptions.ifRevisionAppliesOnlyAtThatRevision()
    }

    @Test(arguments: StoreKind.allCases)
    func aReplaceUnderAPrefixDeletesOnlyThere(kind: StoreKind) async throws {
        try await kind.conformance.importOptions.aReplaceUnderAPrefixDeletesOnlyThere()
    }

    @Test(arguments: StoreKind.allCases)
    func aReplaceKeepsSchemasUnlessToldOtherwise(kind: StoreKind) async throws {
        try await kind.conformance.importOptions.aReplaceKeepsSchemasUnlessToldOtherwise()
    }
}
