import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Prefixes as JSON documents")
struct DocumentTests {
    @Test(arguments: StoreKind.allCases)
    func aDocumentNestsKeysAndEmbedsTheirValues(kind: StoreKind) async throws {
        try await kind.conformance.document.aDocumentNestsKeysAndEmbedsTheirValues()
    }

    @Test(arguments: StoreKind.allCases)
    func aKeyThatIsAlsoADirectoryIsNotOneDocument(kind: StoreKind) async throws {
        try await kind.conformance.document.aKeyThatIsAlsoADirectoryIsNotOneDocument()
    }

    @Test(arguments: StoreKind.allCases)
    func aDocumentAtAPastRevisionIsTheKeysAsTheyWereThen(kind: StoreKind) async throws {
        try await kind.conformance.document.aDocumentAtAPastRevisionIsTheKeysAsTheyWereThen()
    }

    @Test(arguments: StoreKind.allCases)
    func putDocumentWritesOnlyChangedKeysAtOneRevision(kind: StoreKind) async throws {
        try await kind.conformance.document.putDocumentWritesOnlyChangedKeysAtOneRevision()
    }

    @Test(arguments: StoreKind.allCases)
    func putDocumentWithReplaceDeletesTheKeysItLacks(kind: StoreKind) async throws {
        try await kind.conformance.document.putDocumentWithReplaceDeletesTheKeysItLacks()
    }

    @Test(arguments: StoreKind.allCases)
    func aDocumentThatChangesNothingKeepsTheRevision(kind: StoreKind) async throws {
        try await kind.conformance.document.aDocumentThatChangesNothingKeepsTheRevision()
    }

    @Test(arguments: StoreKind.allCases)
    func anInvalidDocumentChangesNothing(kind: StoreKind) async throws {
        try await kind.conformance.document.anInvalidDocumentChangesNothing()
    }
}
