import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Lease stores keep etcd leases per config, outside revisions, and order renewals and claims")
struct LeaseStoreTests {
    @Test("a grant reads back exactly; its id is not granted twice, revoking or not", arguments: StoreKind.with(.leases))
    func aGrantReadsBackExactlyAndItsIdIsNotGrantedTwice(kind: StoreKind) async throws {
        try await kind.conformance.leaseStore.aGrantReadsBackExactlyAndItsIdIsNotGrantedTwice()
    }

    @Test("a lease keeps who granted it (principal and, for a narrow caller, its scopes) through renewals and claims", arguments: StoreKind.with(.leases))
    func aLeaseKeepsItsOwner(kind: StoreKind) async throws {
        try await kind.conformance.leaseStore.aLeaseKeepsItsOwner()
    }

    @Test("a renewal moves only a live lease's expiry: not an absent, run-out or revoking one", arguments: StoreKind.with(.leases))
    func aRenewalMovesOnlyALiveLeasesExpiry(kind: StoreKind) async throws {
        try await kind.conformance.leaseStore.aRenewalMovesOnlyALiveLeasesExpiry()
    }

    @Test("a claim by a time takes a lease that ran out, one without a time any lease, and a claimed lease again", arguments: StoreKind.with(.leases))
    func aClaimTakesALeaseThatRanOutAndTakesItAgain(kind: StoreKind) async throws {
        try await kind.conformance.leaseStore.aClaimTakesALeaseThatRanOutAndTakesItAgain()
    }

    @Test("dropping a lease forgets it; dropping an absent one does nothing", arguments: StoreKind.with(.leases))
    func droppingALeaseForgetsIt(kind: StoreKind) async throws {
        try await kind.conformance.leaseStore.droppingALeaseForgetsIt()
    }

    @Test("leases are listed by id (negative, Int64.min and max included) and kept per config", arguments: StoreKind.with(.leases))
    func leasesAreListedByIdAndKeptPerConfig(kind: StoreKind) async throws {
        try await kind.conformance.leaseStore.leasesAreListedByIdAndKeptPerConfig()
    }

    @Test("leases change no revision, setting, time, key or history of their config", arguments: StoreKind.with(.leases))
    func leasesChangeNoRevisionOrHistory(kind: StoreKind) async throws {
        try await kind.conformance.leaseStore.leasesChangeNoRevisionOrHistory()
    }

    @Test("deleting a config forgets its leases; created again, it has none", arguments: StoreKind.with(.leases))
    func deletingAConfigForgetsItsLeases(kind: StoreKind) async throws {
        try await kind.conformance.leaseStore.deletingAConfigForgetsItsLeases()
    }

    @Test("a renewal racing a claim of one lease: one wins, or the claim sees the renewal; two claims both return it", arguments: StoreKind.with(.leases))
    func aRenewalAndAClaimOfOneLeaseAreOrdered(kind: StoreKind) async throws {
        try await kind.conformance.leaseStore.aRenewalAndAClaimOfOneLeaseAreOrdered()
    }
}
