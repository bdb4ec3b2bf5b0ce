import DiscfgCore
import Foundation

/// Every store that keeps etcd leases keeps them exactly, per config, outside the config's
/// revisions; renews only a live lease; lets a claim take a lease that ran out, and take it
/// again; and orders a renewal and a claim of one lease, one before the other.
public struct LeaseStoreChecks: Sendable {
    let conformance: StoreConformance

    /// The store as a lease store, and a config to keep leases in.
    private func leaseStore(_ store: any ConfigStore, fileID: String = #fileID, line: Int = #line) async throws -> (any LeaseStore, ConfigName) {
        let leases = try require(store as? any LeaseStore, "\(conformance.name) keeps no leases", fileID: fileID, line: line)
        return (leases, try await store.makeConfig())
    }

    /// A lease reads back as granted, alone and in the list; a second grant of its id is
    /// refused as etcd refuses it, and changes nothing, whatever it asked for.
    public func aGrantReadsBackExactlyAndItsIdIsNotGrantedTwice() async throws {
        try await conformance.withStore { store, clock in
            let (leases, config) = try await leaseStore(store)
            let lease = LeaseRecord(id: 7, ttl: 10, expiresAt: clock.now().addingTimeInterval(10))
            try await leases.grantLease(lease, in: config)
            try await expectEqual(leases.lease(7, in: config), lease)
            try await expectEqual(leases.leases(in: config), [lease])
            let again = LeaseRecord(id: 7, ttl: 60, expiresAt: clock.now().addingTimeInterval(60), revoking: true)
            try await expectError(.conditionFailed, field: "ID", mentioning: ["etcdserver: lease already exists"]) {
                try await leases.grantLease(again, in: config)
            }
            try await expectEqual(leases.lease(7, in: config), lease, "a refused grant changed the lease")
            // Revoking, it still holds its id.
            _ = try await leases.claimLease(7, in: config, expiredBy: nil)
            try await expectError(.conditionFailed, "a revoking lease", field: "ID") { try await leases.grantLease(lease, in: config) }
            try await expectNil(leases.lease(8, in: config), "a lease never granted")
        }
    }

    /// A lease keeps who granted it exactly: a narrow caller's principal with its scopes
    /// (etcd and discfg prefixes), a whole-config caller's without, and none for a lease
    /// granted before owners were recorded; a renewal and a claim return it unchanged.
    public func aLeaseKeepsItsOwner() async throws {
        try await conformance.withStore { store, clock in
            let (leases, config) = try await leaseStore(store)
            let narrow = LeaseOwner(
                Principal(kind: .token, id: "k3f9a2b7c1d0", description: "tenant a"),
                scopes: [try AccessScope("\(config):etcd:/tenant-a/"), try AccessScope("\(config):/app/")]
            )
            let whole = LeaseOwner(kind: .certificate, id: "CN=deployer, O=Example \"Ops\"")
            let anonymous = LeaseOwner(kind: .anonymous, id: "etcd")
            let owned = LeaseRecord(id: 21, ttl: 10, expiresAt: clock.now().addingTimeInterval(10), owner: narrow)
            let wide = LeaseRecord(id: 22, ttl: 10, expiresAt: clock.now().addingTimeInterval(10), owner: whole)
            let open = LeaseRecord(id: 23, ttl: 10, expiresAt: clock.now().addingTimeInterval(10), owner: anonymous)
            let older = LeaseRecord(id: 24, ttl: 10, expiresAt: clock.now().addingTimeInterval(10))
            for lease in [owned, wide, open, older] { try await leases.grantLease(lease, in: config) }
            try await expectEqual(leases.lease(21, in: config)?.owner, narrow, "a narrow caller's lease")
            try await expectEqual(leases.lease(22, in: config)?.owner, whole, "a whole-config caller's lease")
            try await expectEqual(leases.lease(23, in: config)?.owner, anonymous, "an anonymous caller's lease")
            try await expectNil(leases.lease(24, in: config)?.owner, "a lease granted without an owner")
            try await expectEqual(leases.leases(in: config), [owned, wide, open, older])
            expect(narrow.isHeld(by: Principal(kind: .token, id: "k3f9a2b7c1d0")), "the owner is its principal, whatever its description")
            expect(!narrow.isHeld(by: Principal(kind: .certificate, id: "k3f9a2b7c1d0")), "another kind of principal under the same id")

            clock.advance(seconds: 1)
            let renewed = try await leases.renewLease(21, in: config, at: clock.now(), until: clock.now().addingTimeInterval(10))
            expectEqual(renewed?.owner, narrow, "a renewal's lease")
            try await expectEqual(leases.claimLease(22, in: config, expiredBy: nil)?.owner, whole, "a claimed lease")
            try await expectEqual(leases.lease(22, in: config)?.owner, whole, "a claimed lease read back")
        }
    }

    /// A renewal moves a live lease's expiry and returns it; a lease that is absent, ran
    /// out by the renewal's time, or is being revoked is not renewed.
    public func aRenewalMovesOnlyALiveLeasesExpiry() async throws {
        try await conformance.withStore { store, clock in
            let (leases, config) = try await leaseStore(store)
            let granted = LeaseRecord(id: 1, ttl: 5, expiresAt: clock.now().addingTimeInterval(5))
            try await leases.grantLease(granted, in: config)
            clock.advance(seconds: 2)
            var renewed = granted
            renewed.expiresAt = clock.now().addingTimeInterval(5)
            try await expectEqual(leases.renewLease(1, in: config, at: clock.now(), until: renewed.expiresAt), renewed)
            try await expectEqual(leases.lease(1, in: config), renewed)
            try await expectNil(leases.renewLease(2, in: config, at: clock.now(), until: renewed.expiresAt), "a lease never granted")
            // At its expiry it has run out: etcd no longer knows it, though no one revoked it.
            let late = renewed.expiresAt
            try await expectNil(leases.renewLease(1, in: config, at: late, until: late.addingTimeInterval(5)), "a lease at its expiry")
            try await expectNil(leases.renewLease(1, in: config, at: late.addingTimeInterval(1), until: late.addingTimeInterval(6)), "a lease past its expiry")
            try await expectEqual(leases.lease(1, in: config), renewed, "a refused renewal changed the lease")
            // Once claimed, it is renewed no more.
            var claimed = renewed
            claimed.revoking = true
            try await expectEqual(leases.claimLease(1, in: config, expiredBy: nil), claimed)
            try await expectNil(leases.renewLease(1, in: config, at: clock.now(), until: late.addingTimeInterval(60)), "a revoking lease")
            try await expectEqual(leases.lease(1, in: config), claimed)
        }
    }

    /// A claim by a time takes only a lease that ran out by then; a claim without one takes
    /// a live lease; a lease once claimed is returned by every later claim, so a
    /// revocation cut short is taken up again.
    public func aClaimTakesALeaseThatRanOutAndTakesItAgain() async throws {
        try await conformance.withStore { store, clock in
            let (leases, config) = try await leaseStore(store)
            let lease = LeaseRecord(id: 3, ttl: 10, expiresAt: clock.now().addingTimeInterval(10))
            try await leases.grantLease(lease, in: config)
            try await expectNil(leases.claimLease(3, in: config, expiredBy: clock.now()), "a live lease")
            try await expectNil(leases.claimLease(3, in: config, expiredBy: lease.expiresAt.addingTimeInterval(-0.001)), "a lease a millisecond before its expiry")
            try await expectEqual(leases.lease(3, in: config), lease, "a refused claim changed the lease")
            var claimed = lease
            claimed.revoking = true
            try await expectEqual(leases.claimLease(3, in: config, expiredBy: lease.expiresAt), claimed, "a lease at its expiry")
            try await expectEqual(leases.lease(3, in: config), claimed)
            // Taken up again, by a time before its expiry or by none.
            try await expectEqual(leases.claimLease(3, in: config, expiredBy: clock.now()), claimed, "a claimed lease, claimed again")
            try await expectEqual(leases.claimLease(3, in: config, expiredBy: nil), claimed, "a claimed lease, claimed again without a time")
            try await expectNil(leases.claimLease(4, in: config, expiredBy: nil), "a lease never granted")
            try await expectNil(leases.claimLease(4, in: config, expiredBy: clock.now()), "a lease never granted, by a time")

            let live = LeaseRecord(id: 5, ttl: 30, expiresAt: clock.now().addingTimeInterval(30))
            try await leases.grantLease(live, in: config)
            var revoked = live
            revoked.revoking = true
            try await expectEqual(leases.claimLease(5, in: config, expiredBy: nil), revoked, "a revocation asked for claims a live lease")
            try await expectEqual(leases.leases(in: config), [claimed, revoked])
        }
    }

    /// Dropping a lease forgets it, so its id may be granted again; dropping one that is
    /// not there does nothing.
    public func droppingALeaseForgetsIt() async throws {
        try await conformance.withStore { store, clock in
            let (leases, config) = try await leaseStore(store)
            let lease = LeaseRecord(id: 9, ttl: 10, expiresAt: clock.now().addingTimeInterval(10))
            let other = LeaseRecord(id: 10, ttl: 10, expiresAt: clock.now().addingTimeInterval(10))
            try await leases.grantLease(lease, in: config)
            try await leases.grantLease(other, in: config)
            _ = try await leases.claimLease(9, in: config, expiredBy: nil)
            try await leases.dropLease(9, in: config)
            try await expectNil(leases.lease(9, in: config))
            try await expectEqual(leases.leases(in: config), [other])
            try await leases.dropLease(9, in: config)
            try await leases.dropLease(11, in: config)
            try await expectEqual(leases.leases(in: config), [other], "dropping absent leases changed the others")
            try await leases.grantLease(lease, in: config)
            try await expectEqual(leases.lease(9, in: config), lease, "the id granted again after the drop")
        }
    }

    /// The ids of ``leasesAreListedByIdAndKeptPerConfig()``: negative ones, the extremes, and
    /// ones whose decimal text sorts otherwise than their numbers.
    static let listedIDs: [Int64] = [Int64.max, 10, -1, 9, Int64.min, 100, -10, 1, -2, 7_587_862_356_224_155_649, 2]

    /// A config's leases are listed by id, any Int64 id kept exactly; another config's
    /// leases, even under the same ids, are apart.
    public func leasesAreListedByIdAndKeptPerConfig() async throws {
        try await conformance.withStore { store, clock in
            let (leases, config) = try await leaseStore(store)
            let other = try await store.makeConfig("other")
            var granted: [LeaseRecord] = []
            for (index, id) in Self.listedIDs.enumerated() {
                let lease = LeaseRecord(id: id, ttl: Int64(index + 1), expiresAt: clock.now().addingTimeInterval(Double(index + 1)))
                try await leases.grantLease(lease, in: config)
                granted.append(lease)
            }
            let elsewhere = LeaseRecord(id: 10, ttl: 99, expiresAt: clock.now().addingTimeInterval(99))
            try await leases.grantLease(elsewhere, in: other)
            try await expectEqual(leases.leases(in: config), granted.sorted { $0.id < $1.id })
            try await expectEqual(leases.leases(in: other), [elsewhere])
            try await expectEqual(leases.leases(in: ConfigName("absent")), [], "a config without leases")
            for lease in granted where [Int64.min, Int64.max, -1].contains(lease.id) {
                try await expectEqual(leases.lease(lease.id, in: config), lease, "lease \(lease.id)")
            }
            try await expectEqual(leases.lease(10, in: other), elsewhere)
            try await expectNil(leases.lease(-1, in: other), "another config's lease")
            _ = try await leases.claimLease(10, in: other, expiredBy: nil)
            try await leases.dropLease(10, in: other)
            try await expectEqual(leases.lease(10, in: config), granted[1], "a claim and a drop in another config reached this one")
        }
    }

    /// Granting, renewing, claiming and dropping leases changes none of the config's
    /// revision, settings, times, keys or history.
    public func leasesChangeNoRevisionOrHistory() async throws {
        try await conformance.withStore { store, clock in
            let (leases, config) = try await leaseStore(store)
            try await store.set("/a", "one", in: config)
            clock.advance(seconds: 1)
            let before = try await store.observableState(of: config)
            let lease = LeaseRecord(id: 1, ttl: 10, expiresAt: clock.now().addingTimeInterval(10))
            try await leases.grantLease(lease, in: config)
            _ = try await leases.renewLease(1, in: config, at: clock.now(), until: clock.now().addingTimeInterval(20))
            try await expectEqual(store.observableState(of: config), before, "after a grant and a renewal")
            _ = try await leases.claimLease(1, in: config, expiredBy: nil)
            try await leases.dropLease(1, in: config)
            try await expectEqual(store.observableState(of: config), before, "after a claim and a drop")
            try await expectEqual(store.revision(of: config), Revision(1))
        }
    }

    /// Deleting a config forgets its leases: the config created again under its name has
    /// none, and may grant their ids again; other configs keep theirs.
    public func deletingAConfigForgetsItsLeases() async throws {
        try await conformance.withStore { store, clock in
            let (leases, config) = try await leaseStore(store)
            let other = try await store.makeConfig("other")
            let lease = LeaseRecord(id: 1, ttl: 10, expiresAt: clock.now().addingTimeInterval(10))
            let kept = LeaseRecord(id: 1, ttl: 20, expiresAt: clock.now().addingTimeInterval(20))
            try await leases.grantLease(lease, in: config)
            try await leases.grantLease(LeaseRecord(id: -5, ttl: 10, expiresAt: clock.now().addingTimeInterval(10), revoking: true), in: config)
            try await leases.grantLease(kept, in: other)
            try await store.deleteConfig(config)
            try await expectEqual(leases.leases(in: config), [], "the deleted config's leases")
            _ = try await store.createConfig(config, settings: ConfigSettings())
            try await expectEqual(leases.leases(in: config), [], "the config created again")
            try await expectNil(leases.lease(1, in: config))
            try await leases.grantLease(lease, in: config)
            try await expectEqual(leases.leases(in: config), [lease])
            try await expectEqual(leases.leases(in: other), [kept], "another config's leases")
        }
    }

    /// Rounds of ``aRenewalAndAClaimOfOneLeaseAreOrdered()``.
    static let races = 5

    /// A renewal racing a claim is ordered with it: a claim of a lease that ran out wins
    /// only when the renewal did not, and a claim without a time returns the lease as the
    /// renewal left it or the renewal finds it revoking. Two claims racing both return it.
    public func aRenewalAndAClaimOfOneLeaseAreOrdered() async throws {
        try await conformance.withStore { store, clock in
            let (leases, config) = try await leaseStore(store)
            for round in 0..<Int64(Self.races) {
                // The renewer's clock has the lease live, the claimer's has it run out.
                let expiry = LeaseRecord(id: 100 + round, ttl: 5, expiresAt: clock.now().addingTimeInterval(5))
                try await leases.grantLease(expiry, in: config)
                let until = expiry.expiresAt.addingTimeInterval(5)
                async let renewing = leases.renewLease(expiry.id, in: config, at: expiry.expiresAt.addingTimeInterval(-0.001), until: until)
                async let claiming = leases.claimLease(expiry.id, in: config, expiredBy: expiry.expiresAt)
                let (renewed, claimed) = try await (renewing, claiming)
                expect((renewed == nil) != (claimed == nil), "round \(round): exactly one of a renewal and a claim by expiry wins; renewed \(String(describing: renewed)), claimed \(String(describing: claimed))")
                try await expectEqual(leases.lease(expiry.id, in: config), renewed ?? claimed, "round \(round): the winner's lease")

                // A revocation asked for: it always claims; the renewal is before it or refused.
                let asked = LeaseRecord(id: 200 + round, ttl: 5, expiresAt: clock.now().addingTimeInterval(5))
                try await leases.grantLease(asked, in: config)
                async let renewingAsked = leases.renewLease(asked.id, in: config, at: clock.now(), until: until)
                async let claimingAsked = leases.claimLease(asked.id, in: config, expiredBy: nil)
                let (renewedAsked, claimedAsked) = try await (renewingAsked, claimingAsked)
                let taken = try require(claimedAsked, "round \(round): a revocation asked for claims the lease")
                expect(taken.revoking, "round \(round): the claimed lease is not revoking")
                expectEqual(taken.expiresAt, renewedAsked == nil ? asked.expiresAt : until, "round \(round): the claim saw the renewal \(renewedAsked == nil ? "that was refused" : "before it")")
                try await expectEqual(leases.lease(asked.id, in: config), taken, "round \(round): the lease after both")

                // Two claims of a lease that ran out: claims are idempotent, both return it.
                let gone = LeaseRecord(id: 300 + round, ttl: 1, expiresAt: clock.now())
                try await leases.grantLease(gone, in: config)
                async let one = leases.claimLease(gone.id, in: config, expiredBy: clock.now())
                async let other = leases.claimLease(gone.id, in: config, expiredBy: clock.now())
                let (a, b) = try await (one, other)
                var claimedGone = gone
                claimedGone.revoking = true
                expectEqual(a, claimedGone, "round \(round): the first of two claims")
                expectEqual(b, claimedGone, "round \(round): the second of two claims")
            }
        }
    }
}

extension StoreConformance {
    /// The checks of stores that keep etcd leases.
    public var leaseStore: LeaseStoreChecks { LeaseStoreChecks(conformance: self) }
}
