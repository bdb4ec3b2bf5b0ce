import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Bulk changes: an import or a prefix delete is one change")
struct BulkChangeTests {
    @Test(arguments: StoreKind.allCases)
    func anImportAndAPrefixDeleteAreOneChangeEach(kind: StoreKind) async throws {
        try await kind.conformance.bulkChanges.anImportAndAPrefixDeleteAreOneChangeEach()
    }

    @Test(arguments: StoreKind.allCases)
    func readersSeeAnImportWholeOrNotAtAll(kind: StoreKind) async throws {
        try await kind.conformance.bulkChanges.readersSeeAnImportWholeOrNotAtAll()
    }

    @Test(arguments: StoreKind.with(.largeChanges))
    func aFiveThousandKeyImportAndPrefixDeleteAreOneChangeEach(kind: StoreKind) async throws {
        try await kind.conformance.bulkChanges.aFiveThousandKeyImportAndPrefixDeleteAreOneChangeEach()
    }

    @Test(arguments: StoreKind.with(.largeChanges))
    func readersSeeAFiveThousandKeyImportWholeOrNotAtAll(kind: StoreKind) async throws {
        try await kind.conformance.bulkChanges.readersSeeAFiveThousandKeyImportWholeOrNotAtAll()
    }
}
