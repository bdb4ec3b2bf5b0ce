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
    func aThousandKeyImportAndPrefixDeleteAreOneChangeEach(kind: StoreKind) async throws {
        try await kind.conformance.bulkChanges.aThousandKeyImportAndPrefixDeleteAreOneChangeEach()
    }

    @Test(arguments: StoreKind.with(.largeChanges))
    func readersSeeAThousandKeyImportWholeOrNotAtAll(kind: StoreKind) async throws {
        try await kind.conformance.bulkChanges.readersSeeAThousandKeyImportWholeOrNotAtAll()
    }
}
