import DiscfgCore
import Foundation

/// etcd's leases over a discfg config: a lease is granted for a TTL, keys are attached to
/// it by puts, keep-alives renew it, and when it is revoked or runs out every key still
/// attached is deleted in one transaction (one revision, as etcd does).
///
/// Leases are kept in the store (``LeaseStore``), beside the config: every server on the
/// store sees the same leases, a keep-alive through any of them renews a lease, and every
/// server expires the leases that ran out, whichever server granted them. A server that
/// dies takes no lease with it: its leases run out on time, and their keys go. A store
/// that keeps no leases gets them kept in this process (a ``MemoryStore``'s), where
/// they live as long as the server.
///
/// A key records its lease in its content type (``tag(_:ttl:)``), so the keys of a lease
/// are found by reading the config's keys, once per revocation. A key naming a lease the
/// store no longer has (attached by a put that raced the lease's revocation, or written
/// before leases were kept in the store) gets the lease again with a fresh TTL: no key
/// outlives its lease by more than one TTL.
///
/// A lease is its granter's (``LeaseRecord/owner``): a caller that does not reach the
/// whole config (a token scoped to etcd prefixes) lists, renews, revokes, reads and
/// attaches keys to its own leases only; another's is answered as etcd answers a lease
/// that does not exist. A caller reaching the whole config (and the anonymous caller of
/// a server without tokens) reaches every lease. Each principal holds at most
/// ``maxLeasesPerCaller`` leases, so one tenant cannot take the config's
/// ``maxLeases`` from the others.
public actor EtcdLeases {
    private let backend: EtcdBackend
    private let store: any LeaseStore
    private let clock: any WallClock
    /// The TTL and owner of each lease seen here, so a keep-alive is one conditional write.
    private var known: [Int64: (ttl: Int64, owner: LeaseOwner?)] = [:]
    /// The leases counted at the last expiry pass, plus the grants made here since: what
    /// ``maxLeases`` is held against without listing every lease on each grant.
    private var counted = 0
    /// The same count by principal (``EtcdLeaseHolder/principalKey``), which
    /// ``maxLeasesPerCaller`` is held against.
    private var countedBy: [LeaseOwner: Int] = [:]
    /// The grants being written here, by lease id, with the principal they count for
    /// (nil: a lease without an owner).
    private var writing: [Int64: LeaseOwner?] = [:]
    /// The grants that landed here while a listing of the leases was awaited, by lease
    /// id. A listing adds these and those still being written unless it holds them
    /// already: it may have been read before they landed, and counting them by id never
    /// counts one twice.
    private var landedDuringListing: [Int64: LeaseOwner?]?
    /// Whether the leases are the store's, seen by other servers, rather than this
    /// process's own.
    private let shared: Bool
    /// Expiry passes skipped since the last listing found no lease.
    private var idlePasses = 0
    /// When the config's keys are next read for keys naming a lease the store does not
    /// have: a while after each revocation, once any put that raced it has landed.
    private var strayCheckDue: ContinuousClock.Instant?

    /// The content type marking a key attached to lease `id` granted for `ttl` seconds.
    static func tag(_ id: Int64, ttl: Int64) -> String { "application/vnd.discfg.etcd-lease; id=\(id); ttl=\(ttl)" }

    /// The lease and TTL a content type names, if it is a lease tag.
    static func lease(ofContentType contentType: String?) -> (id: Int64, ttl: Int64)? {
        guard let contentType, contentType.hasPrefix("application/vnd.discfg.etcd-lease;") else { return nil }
        var id: Int64?
        var ttl: Int64?
        for part in contentType.split(separator: ";").dropFirst() {
            let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            if pair[0] == "id" { id = Int64(pair[1]) }
            if pair[0] == "ttl" { ttl = Int64(pair[1]) }
        }
        guard let id, let ttl else { return nil }
        return (id, ttl)
    }

    /// The longest TTL a lease may have (etcd's limit: 9,000,000,000 seconds).
    static let maxTTL: Int64 = 9_000_000_000
    /// The shortest: a grant of less (0 and negative TTLs included) gets this, as etcd's
    /// default member gives 2 s (1.5 election ticks of 100 ms, rounded up).
    static let minTTL: Int64 = 2
    /// The most leases a config holds at once: each expiry pass lists them all. etcd has
    /// no such cap; a grant past it is refused with `RESOURCE_EXHAUSTED` until some are
    /// revoked or run out. Counted at each pass, so servers granting at once may pass it
    /// by the grants of one pass.
    public static let maxLeases = 10_000
    /// The most leases one principal (a token, a certificate) holds in a config at once,
    /// so that one tenant cannot take ``maxLeases`` from the others; counted as
    /// ``maxLeases`` is. The anonymous caller of a server without tokens, every client of
    /// it, is held to ``maxLeases`` alone.
    public static let maxLeasesPerCaller = 1_000
    /// Keys deleted per transaction when a lease goes: each delete is guarded by a
    /// compare on the key, and a transaction holds at most this many compares.
    static let keysPerRevocation = Limits.maxTransactionOperations
    /// How long after a revocation the config is read for keys naming a lease that is
    /// gone: longer than a put that checked the lease may take to land.
    static let strayCheckDelay = Duration.seconds(45)
    /// The passes between listings of a shared store's leases while it holds none.
    static let idleEvery = 5

    /// Leases of `backend`'s config kept in `store` (nil: in this process), timed by `clock`.
    init(backend: EtcdBackend, store: (any LeaseStore)? = nil, clock: any WallClock = SystemClock()) {
        self.backend = backend
        self.store = store ?? MemoryStore()
        shared = store != nil
        self.clock = clock
    }

    private var config: ConfigName { backend.config }

    /// Gives each key naming a lease the store does not have its lease again, with a
    /// fresh TTL; at start, and a while after each revocation.
    func recover() async throws {
        let leases = try await listed()
        for record in leases { known[record.id] = (record.ttl, record.owner) }
        var named: [Int64: Int64] = [:]
        let pages = try await backend.store.exportPages(config, maxBytes: Limits.maxPageBytes)
        for try await page in pages {
            for entry in page where EtcdKeys.bytes(entry.key.path) != nil {
                guard let (id, ttl) = Self.lease(ofContentType: entry.contentType) else { continue }
                named[id] = ttl
            }
        }
        let have = Set(leases.map(\.id))
        for (id, ttl) in named where !have.contains(id) {
            guard try await store.lease(id, in: config) == nil else { continue }
            let record = LeaseRecord(id: id, ttl: ttl, expiresAt: expiry(ttl))
            do {
                try await store.grantLease(record, in: config)
                landed(id, of: nil)
                known[id] = (ttl, nil)
                countGrants(1, of: nil)
            } catch let error as DiscfgError where error.code == .conditionFailed {
                // Granted meanwhile by another server: its TTL stands.
            }
        }
    }

    /// When a lease renewed now for `ttl` seconds runs out.
    private func expiry(_ ttl: Int64) -> Date {
        Date(milliseconds: clock.now().milliseconds + ttl * 1000)
    }

    /// Every lease of the config, counted in all and by principal, with the grants made
    /// here that it does not hold: those being written, and those that landed while it
    /// was read (each counted once, by its id).
    private func listed() async throws -> [LeaseRecord] {
        let outer = landedDuringListing == nil
        if outer { landedDuringListing = [:] }
        defer { if outer { landedDuringListing = nil } }
        let leases = try await store.leases(in: config)
        let listedIDs = Set(leases.map(\.id))
        counted = leases.count
        countedBy = [:]
        for lease in leases {
            guard let owner = lease.owner else { continue }
            countedBy[EtcdLeaseHolder.principalKey(owner), default: 0] += 1
        }
        let unlisted = (landedDuringListing ?? [:]).merging(writing) { landed, _ in landed }
        for (id, key) in unlisted where !listedIDs.contains(id) {
            counted += 1
            if let key { countedBy[key, default: 0] += 1 }
        }
        return leases
    }

    /// Counts `delta` grants of `key`'s (a reservation made before the grant is written,
    /// so grants awaited at once are held to the caps together; taken back if it fails).
    /// `key` nil: a lease without an owner, counted in all only.
    private func countGrants(_ delta: Int, of key: LeaseOwner?) {
        counted = max(0, counted + delta)
        if let key { countedBy[key] = max(0, countedBy[key, default: 0] + delta) }
    }

    /// Notes that the grant of lease `id` landed, for a listing being read meanwhile.
    private func landed(_ id: Int64, of key: LeaseOwner?) {
        landedDuringListing?[id] = .some(key)
    }

    /// Grants a lease to `holder`, its owner; `id` 0 picks one.
    /// - Returns: the lease's id and TTL.
    /// - Throws: `RESOURCE_EXHAUSTED` words naming the cap when `holder` holds
    ///   ``maxLeasesPerCaller`` leases or the config ``maxLeases``; etcd's NOSPACE while
    ///   the config's alarm is raised (``DiscfgCore/ConfigAlarm/noSpace``).
    func grant(id requested: Int64, ttl: Int64, by holder: EtcdLeaseHolder = .anonymous) async throws -> (id: Int64, ttl: Int64) {
        guard ttl <= Self.maxTTL else { throw EtcdError.leaseTTLTooLarge }
        if holder.isCapped, countedBy[holder.principalKey, default: 0] >= Self.maxLeasesPerCaller { throw EtcdError.tooManyLeasesOfCaller }
        guard counted < Self.maxLeases else { throw EtcdError.tooManyLeases }
        // A raised NOSPACE refuses grants, as etcd's capped applier does: read from the
        // config's settings, where every server sees it (grants are rare; keep-alives,
        // which it lets through, read nothing).
        try await backend.store.configInfo(config).settings.checkLeaseGrant(config)
        // Any other ID is the client's to choose, negative ones included, as in etcd.
        let ttl = max(ttl, Self.minTTL)
        countGrants(1, of: holder.principalKey)
        var granted = false
        defer { if !granted { countGrants(-1, of: holder.principalKey) } }
        while true {
            let id = requested != 0 ? requested : Int64.random(in: 1...Int64.max)
            let record = LeaseRecord(id: id, ttl: ttl, expiresAt: expiry(ttl), owner: holder.owner)
            writing[id] = .some(holder.principalKey)
            defer { writing[id] = nil }
            do {
                try await store.grantLease(record, in: config)
            } catch let error as DiscfgError where error.code == .conditionFailed {
                // A grant whose answer was lost and was sent again finds itself, to the
                // millisecond: it was granted.
                if try await store.lease(id, in: config) != record {
                    guard requested == 0 else { throw error }
                    continue
                }
            }
            landed(id, of: holder.principalKey)
            known[id] = (ttl, holder.owner)
            granted = true
            return (id, ttl)
        }
    }

    /// The lease `id` as `holder` sees it: nil when there is none, it is being revoked,
    /// or it is another's that `holder` does not reach.
    private func live(_ id: Int64, by holder: EtcdLeaseHolder) async throws -> LeaseRecord? {
        guard let lease = try await store.lease(id, in: config), !lease.revoking, holder.reaches(lease.owner) else { return nil }
        known[id] = (lease.ttl, lease.owner)
        return lease
    }

    /// The content type a put by `holder` attached to lease `id` carries.
    /// - Throws: etcd's "requested lease not found" when there is no such lease, it is
    ///   being revoked, or it is another's that `holder` does not reach.
    func attachment(_ id: Int64, by holder: EtcdLeaseHolder = .anonymous) async throws -> String {
        guard let lease = try await live(id, by: holder) else { throw EtcdError.leaseNotFound }
        return Self.tag(id, ttl: lease.ttl)
    }

    /// Renews a lease for `holder`; its TTL, or 0 when there is no such lease (or it is
    /// another's that `holder` does not reach).
    func keepAlive(_ id: Int64, by holder: EtcdLeaseHolder = .anonymous) async throws -> Int64 {
        let ttl: Int64
        if let seen = known[id] {
            guard holder.reaches(seen.owner) else { return 0 }
            ttl = seen.ttl
        } else {
            guard let lease = try await live(id, by: holder) else { return 0 }
            ttl = lease.ttl
        }
        guard let renewed = try await store.renewLease(id, in: config, at: clock.now(), until: expiry(ttl)) else {
            known[id] = nil
            return 0
        }
        known[id] = (renewed.ttl, renewed.owner)
        // Granted again under this id by another, through another server, since seen here.
        guard holder.reaches(renewed.owner) else { return 0 }
        return renewed.ttl
    }

    /// The seconds left and the TTL granted of a lease, with its keys when `keys`; nil
    /// when there is none (or it is being revoked: gone, as etcd sees it; or it is
    /// another's that `holder` does not reach).
    func timeToLive(_ id: Int64, keys: Bool, by holder: EtcdLeaseHolder = .anonymous) async throws -> (remaining: Int64, granted: Int64, keys: [Key])? {
        guard let lease = try await live(id, by: holder) else { return nil }
        let left = (lease.expiresAt.milliseconds - clock.now().milliseconds) / 1000
        return (max(0, left), lease.ttl, keys ? try await attached(to: id) : [])
    }

    /// The id of every live lease `holder` reaches.
    func ids(by holder: EtcdLeaseHolder = .anonymous) async throws -> [Int64] {
        try await store.leases(in: config).filter { !$0.revoking && holder.reaches($0.owner) }.map(\.id)
    }

    /// Revokes a lease for `holder`: deletes the keys still attached to it, in one
    /// transaction.
    /// - Returns: the config's revision afterwards.
    /// - Throws: etcd's "requested lease not found", for another's lease that `holder`
    ///   does not reach too.
    @discardableResult
    func revoke(_ id: Int64, by holder: EtcdLeaseHolder = .anonymous) async throws -> Revision {
        // Read before it is claimed: a claim cannot be taken back. A lease being revoked
        // is claimed again, so a revocation cut short is finished.
        guard let lease = try await store.lease(id, in: config), holder.reaches(lease.owner),
              let claimed = try await store.claimLease(id, in: config, expiredBy: nil) else { throw EtcdError.leaseNotFound }
        return try await finish(claimed)
    }

    /// Deletes a claimed lease's keys, then forgets it. Cut short, the lease stays
    /// claimed and the next expiry pass (here or on another server) finishes it.
    private func finish(_ lease: LeaseRecord) async throws -> Revision {
        known[lease.id] = nil
        let revision = try await deleteKeys(of: lease.id)
        try await store.dropLease(lease.id, in: config)
        counted = max(0, counted - 1)
        if let owner = lease.owner {
            let key = EtcdLeaseHolder.principalKey(owner)
            countedBy[key] = countedBy[key].map { max(0, $0 - 1) }
        }
        strayCheckDue = .now + Self.strayCheckDelay
        return revision
    }

    /// The keys attached to lease `id` now, read from the config's keys.
    private func attached(to id: Int64) async throws -> [Key] {
        var keys: [Key] = []
        let pages = try await backend.store.exportPages(config, maxBytes: Limits.maxPageBytes)
        for try await page in pages {
            for entry in page where EtcdKeys.bytes(entry.key.path) != nil && Self.lease(ofContentType: entry.contentType)?.id == id {
                keys.append(entry.key)
            }
        }
        return keys
    }

    /// Deletes the keys still attached to a lease, in one transaction for up to
    /// ``keysPerRevocation`` keys (one revision, as etcd), in one per as many beyond.
    private func deleteKeys(of id: Int64) async throws -> Revision {
        let keys = try await attached(to: id)
        var revision = try await backend.currentRevision()
        for start in stride(from: 0, to: keys.count, by: Self.keysPerRevocation) {
            revision = try await deleteKeys(keys[start..<min(start + Self.keysPerRevocation, keys.count)], of: id)
        }
        return revision
    }

    private func deleteKeys(_ keys: ArraySlice<Key>, of id: Int64) async throws -> Revision {
        while true {
            let read = try await backend.transact(Transaction(success: keys.map { .get($0) }), readBudget: nil)
            let attached = read.responses.compactMap { response -> Item? in
                guard case .get(let items) = response, let item = items.first, Self.lease(ofContentType: item.contentType)?.id == id else { return nil }
                return item
            }
            guard !attached.isEmpty else { return read.revision }
            // Only keys still attached go, in one revision; a key written since is kept.
            // Recorded as the caller that revoked the lease (its action's attribution,
            // ``DiscfgService/Pipeline``); an expiry pass, as the anonymous client.
            let result = try await backend.transact(Transaction(
                compares: attached.map { Comparison(.key($0.key), .equal, .modRevision($0.modRevision)) },
                success: attached.map { .delete($0.key) }
            ), readBudget: nil)
            if result.succeeded { return result.revision }
        }
    }

    /// Revokes every lease whose time ran out, and finishes revocations cut short,
    /// whichever server granted or claimed them.
    ///
    /// A store shared by servers is asked at each pass while it holds leases (or this
    /// server granted one since), and at every ``idleEvery``-th pass while it holds none:
    /// servers on a config without leases ask little, and a lease granted by another
    /// server that dies at once goes at most that many passes late.
    func expire() async {
        if shared, counted == 0, idlePasses < Self.idleEvery - 1 {
            idlePasses += 1
            return
        }
        idlePasses = 0
        await revokeExpired()
    }

    /// Lists the config's leases and revokes those that ran out or whose revocation was
    /// cut short; reads the config for stray keys when that is due.
    func revokeExpired() async {
        guard let leases = try? await listed() else { return }
        let now = clock.now()
        for lease in leases where lease.revoking || lease.expiresAt <= now {
            guard let claimed = try? await store.claimLease(lease.id, in: config, expiredBy: now) else { continue }
            _ = try? await finish(claimed)
        }
        if let due = strayCheckDue, due <= .now {
            strayCheckDue = nil
            do { try await recover() } catch { strayCheckDue = .now + Self.strayCheckDelay }
        }
    }
}

extension EtcdError {
    /// The field of a grant refused at a lease cap: answered `RESOURCE_EXHAUSTED` in
    /// these words (not etcd's NOSPACE, which is about the config's bytes).
    static let leaseCapField = "leases"

    /// A grant past ``EtcdLeases/maxLeases``, the config's cap.
    static let tooManyLeases = DiscfgError(
        .quotaExceeded,
        "etcdserver: too many leases: this config holds \(EtcdLeases.maxLeases) leases, the most it holds at once (its cap over all callers); revoke some, or let them run out",
        field: leaseCapField
    )

    /// A grant past ``EtcdLeases/maxLeasesPerCaller``, the caller's own cap.
    static let tooManyLeasesOfCaller = DiscfgError(
        .quotaExceeded,
        "etcdserver: too many leases: you hold \(EtcdLeases.maxLeasesPerCaller) leases on this config, the most one caller holds at once (the per-caller cap); revoke some of yours, or let them run out",
        field: leaseCapField
    )
}
