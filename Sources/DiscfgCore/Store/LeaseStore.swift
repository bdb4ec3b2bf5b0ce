import Foundation

/// An etcd lease as the store keeps it: granted for `ttl` seconds, alive until
/// `expiresAt`, which every keep-alive moves on. Kept beside the config it belongs to, so
/// every server on the store sees the same leases: a lease granted through one server is
/// renewed through another, and runs out, its keys deleted, when the server that granted
/// it is gone.
public struct LeaseRecord: Sendable, Hashable {
    /// The lease's id (any Int64 but 0, negative ones included, as in etcd).
    public var id: Int64
    /// The seconds it was granted for; each keep-alive renews it for as long.
    public var ttl: Int64
    /// When it runs out unless renewed, on the store's wall clock (whole milliseconds).
    public var expiresAt: Date
    /// Claimed by a revocation (asked for, or on expiry): its keys are being deleted, it
    /// is renewed no more and no key is attached to it again.
    public var revoking: Bool
    /// Who granted it; nil for a lease granted before owners were recorded (or given
    /// back to a stray key), which only a caller reaching the whole config sees.
    public var owner: LeaseOwner?

    public init(id: Int64, ttl: Int64, expiresAt: Date, revoking: Bool = false, owner: LeaseOwner? = nil) {
        self.id = id
        self.ttl = ttl
        self.expiresAt = expiresAt
        self.revoking = revoking
        self.owner = owner
    }
}

/// Who granted a lease: the principal, and, for one that reached less than the whole
/// config, the scopes it reached it by. A lease is its owner's: another caller that does
/// not reach the whole config neither sees nor renews, revokes or uses it.
///
/// ```swift
/// let owner = LeaseOwner(Principal(kind: .token, id: "k3f9a2b7c1d0"), scopes: [try AccessScope("demo:etcd:/tenant-a/")])
/// owner.isHeld(by: Principal(kind: .token, id: "k3f9a2b7c1d0")) // true
/// ```
public struct LeaseOwner: Sendable, Hashable {
    /// How the principal authenticated (`token`, `certificate`, `anonymous`, …).
    public var kind: Principal.Kind
    /// The principal's stable name within its kind: a token's id, a certificate's subject.
    public var id: String
    /// The scopes of the config the principal reached when it granted the lease; nil
    /// when it reached the whole config.
    public var scopes: [AccessScope]?

    /// The owner `principal` (its description is not kept: a principal is its kind and id).
    public init(_ principal: Principal, scopes: [AccessScope]? = nil) {
        self.init(kind: principal.kind, id: principal.id, scopes: scopes)
    }

    public init(kind: Principal.Kind, id: String, scopes: [AccessScope]? = nil) {
        self.kind = kind
        self.id = id
        self.scopes = scopes
    }

    /// Whether `principal` is the one that granted the lease, whatever its scopes now.
    public func isHeld(by principal: Principal) -> Bool {
        kind == principal.kind && id == principal.id
    }
}

/// Where a store keeps etcd leases: beside the config they belong to, outside its keys
/// and revisions (a grant or a keep-alive changes no revision, as in etcd). Deleting a
/// config forgets its leases. Stores do not look for the config itself: whoever grants a
/// lease serves the config (a check would cost every grant a read of it).
public protocol LeaseStore: Sendable {
    /// Records a new lease of `config`.
    /// - Throws: `conditionFailed` "etcdserver: lease already exists" (field `ID`) when
    ///   `config` has a lease with this id, revoking or not.
    func grantLease(_ lease: LeaseRecord, in config: ConfigName) async throws
    /// Moves a live lease's expiry to `expiresAt`. A lease that ran out by `now` is not
    /// renewed, though no server has revoked it yet: it is gone, as in etcd.
    /// - Returns: the lease afterwards; nil when `config` has no lease with this id, it
    ///   is being revoked, or its `expiresAt` is not after `now`.
    func renewLease(_ id: Int64, in config: ConfigName, at now: Date, until expiresAt: Date) async throws -> LeaseRecord?
    /// The lease of `config` with this id, revoking or not; nil when there is none.
    func lease(_ id: Int64, in config: ConfigName) async throws -> LeaseRecord?
    /// Every lease of `config`, revoking or not, by id.
    func leases(in config: ConfigName) async throws -> [LeaseRecord]
    /// Marks a lease revoking, so it is renewed no more. With `expiredBy`, only a lease
    /// whose `expiresAt` is not after that time is marked.
    /// - Returns: the lease, marked, when this call or an earlier one marked it (a
    ///   revocation cut short is taken up again by the next); nil when there is no such
    ///   lease, or it has not run out by `expiredBy`.
    func claimLease(_ id: Int64, in config: ConfigName, expiredBy now: Date?) async throws -> LeaseRecord?
    /// Forgets a lease, once its keys are deleted; nothing when there is none.
    func dropLease(_ id: Int64, in config: ConfigName) async throws
}

extension LeaseStore {
    /// The error for granting a lease under an id the config already has, as etcd words it.
    public static func leaseExists() -> DiscfgError {
        DiscfgError(.conditionFailed, "etcdserver: lease already exists", field: "ID")
    }
}
