import DiscfgCore
import Foundation

/// etcd's leases over a discfg config: a lease is granted for a TTL, keys are attached to
/// it by puts, keep-alives renew it, and when it is revoked or runs out every key still
/// attached is deleted in one transaction (one revision, as etcd does).
///
/// The lease table lives in the serving process. A key records its lease in its content
/// type (``tag(_:ttl:)``), so a server that starts over finds the leases its keys name
/// and gives each a fresh TTL: no key outlives its lease by more than one TTL after a
/// restart. A lease with no key is not remembered across restarts.
public actor EtcdLeases {
    struct Lease {
        var ttl: Int64
        var deadline: ContinuousClock.Instant
        var keys: Set<Key>
    }

    private let backend: EtcdBackend
    private var leases: [Int64: Lease] = [:]
    /// The lease each attached key belongs to, so a put finds the lease its key leaves
    /// in one lookup, not by asking every lease (which made lease puts slower with every
    /// lease granted: 0.77 ms at a few, 66 ms at 300,000).
    private var leaseOfKey: [Key: Int64] = [:]

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
    /// The most leases the server holds at once: every grant lives in this process and
    /// every put to a lease looks it up, so an unbounded table slowed lease puts from
    /// 0.77 ms to 66 ms at 300,000. etcd has no such cap; a grant past it is refused
    /// with `RESOURCE_EXHAUSTED` until some are revoked or run out.
    public static let maxLeases = 10_000
    /// Keys deleted per transaction when a lease goes: each delete is guarded by a
    /// compare on the key, and a transaction holds at most this many compares.
    static let keysPerRevocation = Limits.maxTransactionOperations

    init(backend: EtcdBackend) {
        self.backend = backend
    }

    /// Rebuilds the leases the config's etcd keys name, each with a fresh TTL, reading
    /// the config a page at a time.
    func recover() async throws {
        let pages = try await backend.store.exportPages(backend.config, maxBytes: Limits.maxPageBytes)
        let now = ContinuousClock.now
        for try await page in pages {
            for entry in page where EtcdKeys.bytes(entry.key.path) != nil {
                guard let (id, ttl) = Self.lease(ofContentType: entry.contentType) else { continue }
                leases[id, default: Lease(ttl: ttl, deadline: now + .seconds(ttl), keys: [])].keys.insert(entry.key)
                leaseOfKey[entry.key] = id
            }
        }
    }

    /// Grants a lease; `id` 0 picks one.
    /// - Returns: the lease's id and TTL.
    func grant(id requested: Int64, ttl: Int64) throws -> (id: Int64, ttl: Int64) {
        guard ttl <= Self.maxTTL else { throw EtcdError.leaseTTLTooLarge }
        guard leases.count < Self.maxLeases else { throw EtcdError.tooManyLeases }
        // Any other ID is the client's to choose, negative ones included, as in etcd.
        let ttl = max(ttl, Self.minTTL)
        var id = requested
        if id == 0 {
            repeat { id = Int64.random(in: 1...Int64.max) } while leases[id] != nil
        } else if leases[id] != nil {
            // etcd answers FAILED_PRECONDITION (its gateway, 412), not ALREADY_EXISTS.
            throw DiscfgError(.conditionFailed, "etcdserver: lease already exists", field: "ID")
        }
        leases[id] = Lease(ttl: ttl, deadline: .now + .seconds(ttl), keys: [])
        return (id, ttl)
    }

    /// The content type a put attached to lease `id` carries.
    /// - Throws: etcd's "requested lease not found".
    func attachment(_ id: Int64) throws -> String {
        guard let lease = leases[id] else { throw EtcdError.leaseNotFound }
        return Self.tag(id, ttl: lease.ttl)
    }

    /// Notes that `key` now belongs to lease `id` (after the put committed), and to no
    /// other.
    func attached(_ key: Key, to id: Int64) {
        detached(key)
        guard leases[id] != nil else { return }
        leases[id]?.keys.insert(key)
        leaseOfKey[key] = id
    }

    /// Notes that `key` was written without a lease.
    func detached(_ key: Key) {
        guard let id = leaseOfKey.removeValue(forKey: key) else { return }
        leases[id]?.keys.remove(key)
    }

    /// Renews a lease; its TTL, or 0 when there is no such lease.
    func keepAlive(_ id: Int64) -> Int64 {
        guard var lease = leases[id] else { return 0 }
        lease.deadline = .now + .seconds(lease.ttl)
        leases[id] = lease
        return lease.ttl
    }

    /// The seconds left, the TTL granted and the keys of a lease; nil when there is none.
    func timeToLive(_ id: Int64) -> (remaining: Int64, granted: Int64, keys: [Key])? {
        guard let lease = leases[id] else { return nil }
        let left = ContinuousClock.now.duration(to: lease.deadline).components.seconds
        return (max(0, left), lease.ttl, lease.keys.sorted())
    }

    /// Every lease's id.
    func ids() -> [Int64] { leases.keys.sorted() }

    /// Revokes a lease: deletes the keys still attached to it, in one transaction.
    /// - Returns: the config's revision afterwards.
    /// - Throws: etcd's "requested lease not found".
    @discardableResult
    func revoke(_ id: Int64) async throws -> Revision {
        guard let lease = leases.removeValue(forKey: id) else { throw EtcdError.leaseNotFound }
        do {
            let revision = try await deleteKeys(of: lease, id: id)
            for key in lease.keys where leaseOfKey[key] == id { leaseOfKey[key] = nil }
            return revision
        } catch {
            // Tried again by the next expiry pass or revoke.
            leases[id] = lease
            throw error
        }
    }

    /// Deletes the keys still attached to a lease, in one transaction for up to
    /// ``keysPerRevocation`` keys (one revision, as etcd), in one per as many beyond.
    private func deleteKeys(of lease: Lease, id: Int64) async throws -> Revision {
        let keys = lease.keys.sorted()
        var revision = try await backend.currentRevision()
        for start in stride(from: 0, to: keys.count, by: Self.keysPerRevocation) {
            revision = try await deleteKeys(keys[start..<min(start + Self.keysPerRevocation, keys.count)], of: lease, id: id)
        }
        return revision
    }

    private func deleteKeys(_ keys: ArraySlice<Key>, of lease: Lease, id: Int64) async throws -> Revision {
        let tag = Self.tag(id, ttl: lease.ttl)
        while true {
            let read = try await backend.transact(Transaction(success: keys.map { .get($0) }), readBudget: nil)
            let attached = read.responses.compactMap { response -> Item? in
                guard case .get(let items) = response, let item = items.first, item.contentType == tag else { return nil }
                return item
            }
            guard !attached.isEmpty else { return read.revision }
            // Only keys still attached go, in one revision; a key written since is kept.
            // Recorded as the caller that revoked the lease, when one authenticated.
            let result = try await backend.transact(Transaction(
                compares: attached.map { Comparison(.key($0.key), .equal, .modRevision($0.modRevision)) },
                success: attached.map { .delete($0.key) }
            ).attributed(to: EtcdCaller.current), readBudget: nil)
            if result.succeeded { return result.revision }
        }
    }

    /// Revokes every lease whose time ran out.
    func expire() async {
        let now = ContinuousClock.now
        for (id, lease) in leases where lease.deadline <= now {
            _ = try? await revoke(id)
        }
    }
}

extension EtcdError {
    /// A grant past ``EtcdLeases/maxLeases``.
    static let tooManyLeases = DiscfgError(
        .throttled, "etcdserver: too many leases: this server holds at most \(EtcdLeases.maxLeases) at once; revoke some, or let them run out", field: "ID"
    )
}
