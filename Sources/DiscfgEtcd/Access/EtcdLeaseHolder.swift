import DiscfgCore
import Foundation

/// Who calls on a lease, as ``EtcdLeases`` holds it against the lease's owner: the
/// principal a lease it grants is recorded as, and whether it reaches the whole config
/// (then it reaches every lease, as before leases had owners).
///
/// ```swift
/// let holder = EtcdLeaseHolder(authenticates ? EtcdCaller.current : nil, config: backend.config)
/// let (id, ttl) = try await leases.grant(id: 0, ttl: 60, by: holder)
/// ```
struct EtcdLeaseHolder: Sendable, Equatable {
    /// The owner a lease granted by this holder records.
    let owner: LeaseOwner
    /// Whether the holder reaches every key of the config: it sees, renews, revokes and
    /// attaches keys to every lease, whoever granted it (and those granted before owners
    /// were recorded).
    let reachesWholeConfig: Bool

    init(owner: LeaseOwner, reachesWholeConfig: Bool) {
        self.owner = owner
        self.reachesWholeConfig = reachesWholeConfig
    }

    /// The caller of a server without tokens (or before any is issued): every client is
    /// this one principal, reaching the whole config.
    static let anonymous = EtcdLeaseHolder(owner: LeaseOwner(EtcdBackend.unauthenticated.principal), reachesWholeConfig: true)

    /// The holder of `caller`'s calls on `config`; nil: the anonymous caller. A narrow
    /// caller's lease records its scopes on the config, as its grant has them.
    init(_ caller: EtcdCaller?, config: ConfigName) {
        guard let caller else {
            self = .anonymous
            return
        }
        let whole = caller.grant.allows(.read, on: config)
        let scopes = whole ? nil : caller.grant.scopes(on: config)
        self.init(owner: LeaseOwner(caller.principal, scopes: scopes), reachesWholeConfig: whole)
    }

    /// Whether this holder reaches a lease owned by `owner` (nil: granted before owners
    /// were recorded, reached only from the whole config).
    func reaches(_ owner: LeaseOwner?) -> Bool {
        reachesWholeConfig || owner.map { $0.kind == self.owner.kind && $0.id == self.owner.id } == true
    }

    /// Whether the holder's leases count against ``EtcdLeases/maxLeasesPerCaller``: every
    /// principal's but the anonymous caller's, which is every client of an open server.
    var isCapped: Bool { owner.kind != .anonymous }

    /// The key the holder's leases are counted under: its principal, without scopes.
    var principalKey: LeaseOwner { Self.principalKey(owner) }

    /// The key leases of `owner` are counted under.
    static func principalKey(_ owner: LeaseOwner) -> LeaseOwner {
        LeaseOwner(kind: owner.kind, id: owner.id)
    }
}
