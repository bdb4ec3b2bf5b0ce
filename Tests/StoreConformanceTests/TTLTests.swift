import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("TTL and expiry")
struct TTLTests {
    @Test(arguments: StoreKind.allCases)
    func ttlSetsExpiresAtAndTheKeyIsReadableUntilThen(kind: StoreKind) async throws {
        try await kind.conformance.ttl.ttlSetsExpiresAtAndTheKeyIsReadableUntilThen()
    }

    @Test(arguments: StoreKind.allCases)
    func expiredKeyIsHiddenFromEveryReadBeforeAnySweep(kind: StoreKind) async throws {
        try await kind.conformance.ttl.expiredKeyIsHiddenFromEveryReadBeforeAnySweep()
    }

    @Test(arguments: StoreKind.allCases)
    func sweepEmitsExactlyOneExpireEvent(kind: StoreKind) async throws {
        try await kind.conformance.ttl.sweepEmitsExactlyOneExpireEvent()
    }

    @Test(arguments: StoreKind.allCases)
    func sweepCoversEveryConfigInKeyOrder(kind: StoreKind) async throws {
        try await kind.conformance.ttl.sweepCoversEveryConfigInKeyOrder()
    }

    @Test(arguments: StoreKind.allCases)
    func setOnAnExpiredKeyFirstRecordsTheExpiry(kind: StoreKind) async throws {
        try await kind.conformance.ttl.setOnAnExpiredKeyFirstRecordsTheExpiry()
    }

    @Test(arguments: StoreKind.allCases)
    func anyWriteExpiresDueKeysFirst(kind: StoreKind) async throws {
        try await kind.conformance.ttl.anyWriteExpiresDueKeysFirst()
    }

    @Test(arguments: StoreKind.allCases)
    func setWithoutTTLClearsAnEarlierTTL(kind: StoreKind) async throws {
        try await kind.conformance.ttl.setWithoutTTLClearsAnEarlierTTL()
    }

    @Test(arguments: StoreKind.allCases)
    func newTTLReplacesTheOldOne(kind: StoreKind) async throws {
        try await kind.conformance.ttl.newTTLReplacesTheOldOne()
    }

    @Test(arguments: StoreKind.allCases, TTLChecks.invalidTTLIsRejectedAndChangesNothingArguments)
    func invalidTTLIsRejectedAndChangesNothing(kind: StoreKind, ttl: Int64) async throws {
        try await kind.conformance.ttl.invalidTTLIsRejectedAndChangesNothing(ttl: ttl)
    }

    @Test(arguments: StoreKind.allCases)
    func longestTTLIsAccepted(kind: StoreKind) async throws {
        try await kind.conformance.ttl.longestTTLIsAccepted()
    }
}
