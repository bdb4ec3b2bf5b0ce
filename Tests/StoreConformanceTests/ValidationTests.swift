import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Limits and validation")
struct ValidationTests {
    @Test(arguments: StoreKind.allCases)
    func valueOfExactlyTheLimitIsAccepted(kind: StoreKind) async throws {
        try await kind.conformance.validation.valueOfExactlyTheLimitIsAccepted()
    }

    @Test(arguments: StoreKind.allCases)
    func valueOneByteOverTheLimitIsTooLargeAndChangesNothing(kind: StoreKind) async throws {
        try await kind.conformance.validation.valueOneByteOverTheLimitIsTooLargeAndChangesNothing()
    }

    @Test(arguments: StoreKind.allCases, ValidationChecks.badContentTypeIsInvalidAndChangesNothingArguments)
    func badContentTypeIsInvalidAndChangesNothing(kind: StoreKind, contentType: String) async throws {
        try await kind.conformance.validation.badContentTypeIsInvalidAndChangesNothing(contentType: contentType)
    }

    @Test(arguments: StoreKind.allCases)
    func validationComesBeforeConditions(kind: StoreKind) async throws {
        try await kind.conformance.validation.validationComesBeforeConditions()
    }

}

@Suite("Revisions at the edge of the range")
struct RevisionEdgeTests {
    @Test("reads, history and watches from the largest revision answer without trapping", arguments: StoreKind.allCases)
    func largestRevision(kind: StoreKind) async throws {
        try await kind.conformance.validation.largestRevision()
    }

    @Test("next stays at the largest revision; a change past it is refused")
    func arithmetic() {
        #expect(Revision.max.next == .max)
        #expect(Revision(UInt64.max).next == Revision(UInt64.max))
        #expect(Revision.zero.previous == .zero)
        #expect(Revision(UInt64.max).storageValue == Int64.max)
        #expect(throws: DiscfgError.self) { try Revision.max.successor() }
        #expect((try? Revision(41).successor()) == Revision(42))
    }
}
