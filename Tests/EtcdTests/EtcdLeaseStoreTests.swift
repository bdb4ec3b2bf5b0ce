import DiscfgCore
@testable import DiscfgEtcd
import DiscfgSQLite
import Foundation
import GRPCCore
import Synchronization
import Testing

/// Leases kept in the store: two ``EtcdLeases`` stand for two servers on one store (a
/// real SQLite file), on a clock the test moves. Whichever server granted a lease, the
/// other renews it, expires it and deletes its keys; a revocation cut short is finished;
/// a key naming a lease the store lost gets it back with a fresh TTL. A lease is its
/// granter's: a tenant scoped to its etcd prefix reaches its own leases only.
@Suite("etcd API: leases kept in the store, shared by servers")
struct EtcdLeaseStoreTests {
    struct Pair {
        let backend: EtcdBackend
        let store: SQLiteStore
        let clock: ManualClock
        let one: EtcdLeases
        let two: EtcdLeases
        let directory: URL

        init() async throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("leases-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            clock = ManualClock()
            store = try SQLiteStore(path: directory.appendingPathComponent("store.db").path, clock: clock)
            backend = EtcdBackend(store: store, config: try ConfigName("etcd"))
            try await backend.prepare()
            one = EtcdLeases(backend: backend, store: store, clock: clock)
            two = EtcdLeases(backend: backend, store: store, clock: clock)
        }

        func put(_ name: String, lease: Int64, through leases: EtcdLeases) async throws {
            let tag = try await leases.attachment(lease)
            _ = try await backend.transact(Transaction(success: [.put(try EtcdKeys.key(Array(name.utf8)), Data("v".utf8), contentType: tag)]))
        }

        func keys() async throws -> [String] {
            let (items, _, _) = try await backend.liveItems(key: [0], rangeEnd: [0], budget: EtcdAnswer.budget(keysOnly: true, past: .cut))
            return items.compactMap { EtcdKeys.bytes($0.key.path).map { String(decoding: $0, as: UTF8.self) } }
        }

        func cleanUp() { try? FileManager.default.removeItem(at: directory) }
    }

    @Test("a lease granted by one server is renewed by the other, and expired by it when no one renews it, its keys gone in one revision")
    func sharedLifetime() async throws {
        let pair = try await Pair()
        defer { pair.cleanUp() }
        let (id, ttl) = try await pair.one.grant(id: 0, ttl: 10)
        #expect(ttl == 10)
        try await pair.put("leader", lease: id, through: pair.one)
        try await pair.put("member", lease: id, through: pair.two)
        _ = try await pair.backend.transact(Transaction(success: [.put(try EtcdKeys.key(Array("plain".utf8)), Data("x".utf8))]))
        #expect(try await pair.two.ids() == [id])
        #expect(try await pair.two.timeToLive(id, keys: true)?.keys.count == 2)

        pair.clock.advance(seconds: 8)
        #expect(try await pair.two.keepAlive(id) == 10)
        pair.clock.advance(seconds: 8)
        await pair.two.revokeExpired()
        #expect(try await pair.keys() == ["leader", "member", "plain"], "renewed through the other server: 2 s left")
        #expect(try await pair.one.timeToLive(id, keys: false)?.remaining == 2)

        let revision = try await pair.backend.currentRevision()
        pair.clock.advance(seconds: 2)
        // Run out and not yet expired: renewed no more, as in etcd.
        #expect(try await pair.one.keepAlive(id) == 0)
        await pair.two.revokeExpired()
        #expect(try await pair.keys() == ["plain"])
        #expect(try await pair.backend.currentRevision() == revision.next, "both keys went in one revision")
        #expect(try await pair.one.timeToLive(id, keys: false) == nil)
        #expect(try await pair.one.ids().isEmpty)
        await #expect(throws: EtcdError.leaseNotFound) { try await pair.one.attachment(id) }
    }

    @Test("a revocation cut short after its claim is finished by the next expiry pass of any server")
    func revocationCutShort() async throws {
        let pair = try await Pair()
        defer { pair.cleanUp() }
        let (id, _) = try await pair.one.grant(id: 42, ttl: 60)
        try await pair.put("lock", lease: id, through: pair.one)
        // The server claimed the lease and died before deleting its keys.
        #expect(try await pair.store.claimLease(id, in: pair.backend.config, expiredBy: nil)?.revoking == true)
        #expect(try await pair.two.keepAlive(id) == 0, "a lease being revoked is renewed no more")
        await #expect(throws: EtcdError.leaseNotFound) { try await pair.two.attachment(id) }
        await pair.two.revokeExpired()
        #expect(try await pair.keys().isEmpty)
        #expect(try await pair.store.lease(id, in: pair.backend.config) == nil)
        // Its id is free again.
        #expect(try await pair.one.grant(id: 42, ttl: 5).id == 42)
        await #expect(throws: DiscfgError.self) { try await pair.two.grant(id: 42, ttl: 6) }
    }

    @Test("a grant sent again after its answer was lost finds itself granted; another grant of the id is refused")
    func grantSentAgain() async throws {
        let pair = try await Pair()
        defer { pair.cleanUp() }
        // The first attempt landed; its answer did not reach the server.
        let landed = LeaseRecord(id: 9, ttl: 10, expiresAt: Date(milliseconds: pair.clock.now().milliseconds + 10_000), owner: EtcdLeaseHolder.anonymous.owner)
        try await pair.store.grantLease(landed, in: pair.backend.config)
        #expect(try await pair.one.grant(id: 9, ttl: 10) == (9, 10))
        await #expect(throws: DiscfgError.self) { try await pair.one.grant(id: 9, ttl: 11) }
        pair.clock.advance(seconds: 0.001)
        await #expect(throws: DiscfgError.self) { try await pair.two.grant(id: 9, ttl: 10) }
        #expect(try await pair.store.lease(9, in: pair.backend.config) == landed)
    }

    @Test("a key naming a lease the store does not have gets it again with a fresh TTL, and goes when that runs out")
    func strayKey() async throws {
        let pair = try await Pair()
        defer { pair.cleanUp() }
        // Written before leases were kept in the store, or by a put that raced the
        // lease's revocation.
        let key = try EtcdKeys.key(Array("stray".utf8))
        _ = try await pair.backend.transact(Transaction(success: [.put(key, Data("v".utf8), contentType: EtcdLeases.tag(7, ttl: 5))]))
        try await pair.two.recover()
        let lease = try #require(try await pair.store.lease(7, in: pair.backend.config))
        #expect(lease.ttl == 5 && lease.expiresAt == Date(milliseconds: pair.clock.now().milliseconds + 5000) && !lease.revoking)
        // A second server recovering changes nothing.
        pair.clock.advance(seconds: 1)
        try await pair.one.recover()
        #expect(try await pair.store.lease(7, in: pair.backend.config) == lease)
        pair.clock.advance(seconds: 4)
        await pair.one.revokeExpired()
        #expect(try await pair.keys().isEmpty)
    }

    /// A caller of a `write` token with id `id` scoped to the etcd prefix `prefix` (nil:
    /// the whole config), as its leases see it.
    static func holder(_ id: String, prefix: String?, config: ConfigName) throws -> EtcdLeaseHolder {
        let scopes = try prefix.map { [try AccessScope(config: config, etcdPrefix: Array($0.utf8))] }
        let token = AccessToken(id: id, hash: Data(), role: .write, scopes: scopes, createdAt: Date())
        let caller = EtcdCaller(session: id, token: token)
        return EtcdLeaseHolder(caller, config: config)
    }

    @Test("a scoped tenant's lease is its own: another tenant, on either server, neither lists, renews, reads, revokes nor attaches a key to it, answered as for a lease that does not exist; a whole-config caller reaches every lease")
    func leasesOfTenants() async throws {
        let pair = try await Pair()
        defer { pair.cleanUp() }
        let config = pair.backend.config
        let tenantA = try Self.holder("aaaaaaaaaaaa", prefix: "/tenant-a/", config: config)
        let tenantB = try Self.holder("bbbbbbbbbbbb", prefix: "/tenant-b/", config: config)
        let admin = try Self.holder("cccccccccccc", prefix: nil, config: config)
        let (a, _) = try await pair.one.grant(id: 0, ttl: 30, by: tenantA)
        let tag = try await pair.one.attachment(a, by: tenantA)
        _ = try await pair.backend.transact(Transaction(success: [.put(try EtcdKeys.key(Array("/tenant-a/leader".utf8)), Data("a".utf8), contentType: tag)]))
        let (b, _) = try await pair.two.grant(id: 0, ttl: 30, by: tenantB)
        // Granted before leases had owners: the whole config's only.
        try await pair.store.grantLease(LeaseRecord(id: 5, ttl: 30, expiresAt: Date(milliseconds: pair.clock.now().milliseconds + 30_000)), in: config)
        #expect(try await pair.store.lease(a, in: config)?.owner == LeaseOwner(kind: .token, id: "aaaaaaaaaaaa", scopes: [try AccessScope("etcd:etcd:/tenant-a/")]))
        #expect(try await pair.store.lease(b, in: config)?.owner?.id == "bbbbbbbbbbbb")

        let missing: Int64 = 999
        pair.clock.advance(seconds: 10)
        for server in [pair.one, pair.two] {
            #expect(try await server.ids(by: tenantB) == [b], "tenant B lists its own lease only")
            #expect(try await server.ids(by: tenantA) == [a], "tenant A lists its own lease only")
            #expect(try await server.keepAlive(a, by: tenantB) == 0, "as for a lease that does not exist")
            #expect(try await server.keepAlive(missing, by: tenantB) == 0)
            #expect(try await server.timeToLive(a, keys: true, by: tenantB) == nil, "as for a lease that does not exist")
            await #expect(throws: EtcdError.leaseNotFound) { try await server.revoke(a, by: tenantB) }
            await #expect(throws: EtcdError.leaseNotFound) { try await server.attachment(a, by: tenantB) }
            await #expect(throws: EtcdError.leaseNotFound) { try await server.attachment(5, by: tenantA) }
            #expect(try await server.keepAlive(5, by: tenantA) == 0)
            #expect(Set(try await server.ids(by: admin)) == [a, b, 5], "a whole-config caller lists every lease")
            #expect(Set(try await server.ids()) == [a, b, 5], "so does the anonymous caller of a server without tokens")
        }
        // Nothing B asked changed A's lease or its key.
        let lease = try #require(try await pair.one.timeToLive(a, keys: true, by: tenantA))
        let leader = try EtcdKeys.key(Array("/tenant-a/leader".utf8))
        #expect(lease.remaining == 20 && lease.keys == [leader])
        #expect(try await pair.keys() == ["/tenant-a/leader"])

        // The owner and the whole config do reach it.
        #expect(try await pair.two.keepAlive(a, by: tenantA) == 30)
        #expect(try await pair.two.keepAlive(b, by: admin) == 30)
        #expect(try await pair.one.keepAlive(5, by: admin) == 30)
        try await pair.two.revoke(a, by: tenantA)
        #expect(try await pair.keys().isEmpty)
        try await pair.one.revoke(b, by: admin)
        #expect(try await pair.one.ids(by: admin) == [5])
    }

    @Test("a tenant at its per-caller cap is refused further grants with RESOURCE_EXHAUSTED naming the cap, on every server, while another tenant still grants")
    func perCallerCap() async throws {
        let pair = try await Pair()
        defer { pair.cleanUp() }
        let config = pair.backend.config
        let tenantA = try Self.holder("aaaaaaaaaaaa", prefix: "/tenant-a/", config: config)
        let tenantB = try Self.holder("bbbbbbbbbbbb", prefix: "/tenant-b/", config: config)
        for _ in 0..<EtcdLeases.maxLeasesPerCaller { _ = try await pair.one.grant(id: 0, ttl: 60, by: tenantB) }
        await #expect(throws: EtcdError.tooManyLeasesOfCaller) { try await pair.one.grant(id: 0, ttl: 60, by: tenantB) }
        // The other server counts the store's leases at its next pass.
        await pair.two.revokeExpired()
        await #expect(throws: EtcdError.tooManyLeasesOfCaller) { try await pair.two.grant(id: 0, ttl: 60, by: tenantB) }
        let (a, _) = try await pair.one.grant(id: 0, ttl: 60, by: tenantA)
        #expect(try await pair.two.grant(id: 0, ttl: 60, by: tenantA).ttl == 60)
        #expect(try await pair.one.ids(by: tenantA).contains(a))

        let refusal = RPCError(etcd: EtcdError.tooManyLeasesOfCaller)
        #expect(refusal.code == .resourceExhausted)
        #expect(refusal.message.contains("\(EtcdLeases.maxLeasesPerCaller) leases") && refusal.message.contains("per-caller cap"), "\(refusal.message)")
        #expect(!refusal.message.contains("throttl"))
        #expect(RPCError(etcd: EtcdError.tooManyLeases).message.contains("\(EtcdLeases.maxLeases) leases"))

        // One of B's leases gone: B grants again.
        try await pair.one.revoke(try #require(try await pair.one.ids(by: tenantB).first), by: tenantB)
        _ = try await pair.one.grant(id: 0, ttl: 60, by: tenantB)
    }

    /// A lease store whose next grant, once armed, is held until released: a grant whose
    /// write is still awaited while an expiry pass lists the leases.
    final class HeldGrants: LeaseStore {
        let store: SQLiteStore
        private let state = Mutex<(armed: Bool, waiting: CheckedContinuation<Void, Never>?, held: AsyncStream<Void>.Continuation?)>((false, nil, nil))
        let holding: AsyncStream<Void>

        init(_ store: SQLiteStore) {
            self.store = store
            let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
            holding = stream
            state.withLock { $0.held = continuation }
        }

        func arm() { state.withLock { $0.armed = true } }

        func release() {
            let waiting = state.withLock { state in
                defer { state.waiting = nil }
                return state.waiting
            }
            waiting?.resume()
        }

        func grantLease(_ lease: LeaseRecord, in config: ConfigName) async throws {
            // Held before the write lands: a listing read meanwhile does not hold the lease.
            await withCheckedContinuation { continuation in
                let held = state.withLock { state -> AsyncStream<Void>.Continuation? in
                    guard state.armed else { return nil }
                    state.armed = false
                    state.waiting = continuation
                    return state.held
                }
                if let held { held.yield() } else { continuation.resume() }
            }
            try await store.grantLease(lease, in: config)
        }

        func renewLease(_ id: Int64, in config: ConfigName, at now: Date, until expiresAt: Date) async throws -> LeaseRecord? {
            try await store.renewLease(id, in: config, at: now, until: expiresAt)
        }
        func lease(_ id: Int64, in config: ConfigName) async throws -> LeaseRecord? { try await store.lease(id, in: config) }
        func leases(in config: ConfigName) async throws -> [LeaseRecord] { try await store.leases(in: config) }
        func claimLease(_ id: Int64, in config: ConfigName, expiredBy now: Date?) async throws -> LeaseRecord? {
            try await store.claimLease(id, in: config, expiredBy: now)
        }
        func dropLease(_ id: Int64, in config: ConfigName) async throws { try await store.dropLease(id, in: config) }
    }

    @Test("a grant still being written while an expiry pass lists the leases is counted once: the caller's cap holds across the pass")
    func grantDuringAPass() async throws {
        let pair = try await Pair()
        defer { pair.cleanUp() }
        let config = pair.backend.config
        let held = HeldGrants(pair.store)
        let leases = EtcdLeases(backend: pair.backend, store: held, clock: pair.clock)
        let tenant = try Self.holder("bbbbbbbbbbbb", prefix: "/tenant-b/", config: config)
        for _ in 0..<(EtcdLeases.maxLeasesPerCaller - 1) { _ = try await leases.grant(id: 0, ttl: 60, by: tenant) }
        // The last grant under the cap is reserved, then held while a pass lists the
        // leases; the pass must count it although its grant has not returned.
        held.arm()
        let last = Task { try await leases.grant(id: 0, ttl: 60, by: tenant) }
        var holding = held.holding.makeAsyncIterator()
        _ = await holding.next()
        // A pass that lists the leases before the write lands does not see it.
        await leases.revokeExpired()
        held.release()
        _ = try await last.value
        #expect(try await leases.ids(by: tenant).count == EtcdLeases.maxLeasesPerCaller)
        await #expect(throws: EtcdError.tooManyLeasesOfCaller) { try await leases.grant(id: 0, ttl: 60, by: tenant) }
        await leases.revokeExpired()
        await #expect(throws: EtcdError.tooManyLeasesOfCaller) { try await leases.grant(id: 0, ttl: 60, by: tenant) }
    }
}
