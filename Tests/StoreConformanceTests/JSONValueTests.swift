import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("JSON values")
struct JSONValueTests {
    @Test(arguments: StoreKind.allCases, JSONValueChecks.invalidJSONIsRefusedWithItsLineAndColumnArguments)
    func invalidJSONIsRefusedWithItsLineAndColumn(kind: StoreKind, contentType: String) async throws {
        try await kind.conformance.jsonValue.invalidJSONIsRefusedWithItsLineAndColumn(contentType: contentType)
    }

    @Test(arguments: StoreKind.allCases)
    func theSameBytesWithAnotherContentTypeAreKept(kind: StoreKind) async throws {
        try await kind.conformance.jsonValue.theSameBytesWithAnotherContentTypeAreKept()
    }

    @Test(arguments: StoreKind.allCases)
    func aTransactionPutOfInvalidJSONChangesNothing(kind: StoreKind) async throws {
        try await kind.conformance.jsonValue.aTransactionPutOfInvalidJSONChangesNothing()
    }

    @Test(arguments: StoreKind.allCases)
    func anImportOfInvalidJSONChangesNothing(kind: StoreKind) async throws {
        try await kind.conformance.jsonValue.anImportOfInvalidJSONChangesNothing()
    }
}
