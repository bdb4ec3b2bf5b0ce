import DiscfgCore
@testable import DiscfgEtcd
import DiscfgSQLite
import Foundation
import GRPCCore
import Testing

/// etcd's `Maintenance` calls on a discfg config, driven on the service, against what
/// etcd 3.4/3.5 answers (checked with `etcdctl` on a real etcd: `move-leader` to a member
/// it does not have, `endpoint hashkv --rev` past the end, `defrag`, `alarm list`).
@Suite("etcd Maintenance: MoveLeader, Defragment, Hash, HashKV, Alarm and Snapshot as a member of one answers them")
struct EtcdMaintenanceTests {
    static let context = ServerContext(
        descriptor: Etcdserverpb_Maintenance.Method.Hash.descriptor, remotePeer: "test", localPeer: "test", cancellation: ServerContext.RPCCancellationHandle()
    )

    /// A maintenance service over the KV service's fresh config.
    static func service(_ backing: EtcdTestBacking) async throws -> (kv: EtcdKVService, maintenance: EtcdMaintenanceService, store: any ConfigStore, cleanUp: () -> Void) {
        let (store, backend, kv, cleanUp) = try await backing.service()
        return (kv, EtcdMaintenanceService(backend: backend, identity: EtcdIdentity(config: backend.config)), store, cleanUp)
    }

    static func put(_ kv: EtcdKVService, _ key: String, _ value: String) async throws {
        var request = Etcdserverpb_PutRequest()
        request.key = Data(key.utf8)
        request.value = Data(value.utf8)
        _ = try await kv.put(request: request, context: context)
    }

    static func hashKV(_ service: EtcdMaintenanceService, at revision: Int64) async throws -> Etcdserverpb_HashKVResponse {
        var request = Etcdserverpb_HashKVRequest()
        request.revision = revision
        return try await service.hashKV(request: request, context: context)
    }

    @Test("CRC-32C is Castagnoli's: the published check value of \"123456789\"")
    func crc32c() {
        var crc = CRC32C()
        crc.update(Array("123456789".utf8))
        #expect(crc.value == 0xE306_9283)
        #expect(CRC32C().value == 0)
    }

    @Test("MoveLeader to the member itself succeeds; to any other member fails as etcd's: FAILED_PRECONDITION, bad leader transferee")
    func moveLeader() async throws {
        let (_, service, _, cleanUp) = try await Self.service(.memory)
        defer { cleanUp() }
        var request = Etcdserverpb_MoveLeaderRequest()
        request.targetID = service.identity.memberID
        _ = try await service.moveLeader(request: request, context: Self.context)
        request.targetID = 12345
        let error = try #require(await EtcdKVServiceTests.failure { try await service.moveLeader(request: request, context: Self.context) })
        #expect(error.code == .failedPrecondition)
        #expect(error.message == "etcdserver: bad leader transferee")
    }

    @Test("the maintenance calls need admin over the whole config, as etcd's need root; Status and listing alarms do not")
    func maintenanceNeedsAdmin() async throws {
        let (_, unauthenticated, _, cleanUp) = try await Self.service(.memory)
        defer { cleanUp() }
        var authenticating = unauthenticated
        authenticating.authenticates = true
        let service = authenticating
        let token = AccessToken(id: "0123456789ab", hash: Data(), role: .write, scopes: [AccessScope(config: service.backend.config)], createdAt: Date())
        let writer = EtcdCaller(session: "session", token: token)
        let calls: [(String, @Sendable () async throws -> Void)] = [
            ("Defragment", { _ = try await service.defragment(request: .init(), context: Self.context) }),
            ("Hash", { _ = try await service.hash(request: .init(), context: Self.context) }),
            ("HashKV", { _ = try await Self.hashKV(service, at: 0) }),
            ("MoveLeader", { var request = Etcdserverpb_MoveLeaderRequest(); request.targetID = service.identity.memberID; _ = try await service.moveLeader(request: request, context: Self.context) }),
            ("Alarm DEACTIVATE", { var request = Etcdserverpb_AlarmRequest(); request.action = .deactivate; _ = try await service.alarm(request: request, context: Self.context) }),
        ]
        for (name, call) in calls {
            let refused = await writer.bound { await EtcdKVServiceTests.failure(call) }
            #expect(refused?.code == .permissionDenied, "\(name)")
        }
        _ = try await writer.bound { try await service.status(request: .init(), context: Self.context) }
        _ = try await writer.bound { try await service.alarm(request: .init(), context: Self.context) }
    }

    @Test("Defragment succeeds with etcd's empty answer and changes nothing", arguments: EtcdTestBacking.allCases)
    func defragment(_ backing: EtcdTestBacking) async throws {
        let (kv, service, _, cleanUp) = try await Self.service(backing)
        defer { cleanUp() }
        try await Self.put(kv, "a", "1")
        let before = try await Self.hashKV(service, at: 0)
        #expect(try await service.defragment(request: .init(), context: Self.context) == Etcdserverpb_DefragmentResponse())
        #expect(try await Self.hashKV(service, at: 0) == before)
    }

    @Test("HashKV hashes the keys as of a revision: a past revision's hash stays as later writes come, a different state hashes differently, 0 is now", arguments: EtcdTestBacking.allCases)
    func hashKVAtRevisions(_ backing: EtcdTestBacking) async throws {
        let (kv, service, _, cleanUp) = try await Self.service(backing)
        defer { cleanUp() }
        try await Self.put(kv, "a", "1")
        try await Self.put(kv, "b", "2")
        let two = try await Self.hashKV(service, at: 3)
        #expect(two.hashRevision == 3)
        #expect(two.compactRevision == -1)
        #expect(two.header.revision == 3)
        try await Self.put(kv, "a", "3")
        let three = try await Self.hashKV(service, at: 0)
        #expect(three.hashRevision == 4)
        #expect(three.hash != two.hash)
        #expect(try await Self.hashKV(service, at: 3).hash == two.hash)
        #expect(try await Self.hashKV(service, at: 4).hash == three.hash)
        #expect(try await service.hash(request: .init(), context: Self.context).hash == three.hash)
        // Writing the same value again is a new version and mod revision: a new state.
        try await Self.put(kv, "a", "3")
        #expect(try await Self.hashKV(service, at: 0).hash != three.hash)
    }

    @Test("HashKV of a future revision and of a compacted one fail as etcd's, OUT_OF_RANGE; after compaction compact_revision is etcd's", arguments: EtcdTestBacking.allCases)
    func hashKVRefusals(_ backing: EtcdTestBacking) async throws {
        let (kv, service, _, cleanUp) = try await Self.service(backing)
        defer { cleanUp() }
        for value in ["1", "2", "3"] { try await Self.put(kv, "a", value) }
        let future = try #require(await EtcdKVServiceTests.failure { try await Self.hashKV(service, at: 99) })
        #expect(future.code == .outOfRange)
        #expect(future.message == "etcdserver: mvcc: required revision is a future revision")
        var compaction = Etcdserverpb_CompactionRequest()
        compaction.revision = 3
        _ = try await kv.compact(request: compaction, context: Self.context)
        let compacted = try #require(await EtcdKVServiceTests.failure { try await Self.hashKV(service, at: 2) })
        #expect(compacted.code == .outOfRange)
        #expect(compacted.message == "etcdserver: mvcc: required revision has been compacted")
        let kept = try await Self.hashKV(service, at: 3)
        #expect(kept.compactRevision == 3)
    }

    @Test("the same keys written the same way hash the same on the memory store and on SQLite, and from a second server on one store")
    func hashIsTheStoresNotTheProcesss() async throws {
        var hashes: [UInt32] = []
        for backing in EtcdTestBacking.allCases {
            let (kv, service, store, cleanUp) = try await Self.service(backing)
            defer { cleanUp() }
            try await Self.put(kv, "b", "2")
            try await Self.put(kv, "a", "1")
            try await Self.put(kv, "a/c", String(repeating: "x", count: 1000))
            hashes.append(try await Self.hashKV(service, at: 0).hash)
            // Another server on the same store: its own backend, nothing shared in memory.
            let other = EtcdMaintenanceService(backend: EtcdBackend(store: store, config: service.backend.config), identity: service.identity)
            hashes.append(try await Self.hashKV(other, at: 0).hash)
            hashes.append(try await Self.hashKV(other, at: 2).hash)
        }
        #expect(hashes[0] == hashes[1])
        #expect(hashes[0] != hashes[2])
        #expect(Array(hashes[0...2]) == Array(hashes[3...5]))
    }

    @Test("HashKV reads the keys in pages: a config of more than one answer's bytes hashes, the same after its keys are read back")
    func hashPages() async throws {
        let (kv, service, _, cleanUp) = try await Self.service(.memory)
        defer { cleanUp() }
        let value = String(repeating: "v", count: 200 * 1024)
        for index in 0..<25 { try await Self.put(kv, "k\(index)", value) }
        let now = try await Self.hashKV(service, at: 0)
        #expect(try await Self.hashKV(service, at: 26).hash == now.hash)
        #expect(try await Self.hashKV(service, at: 25).hash != now.hash)
    }

    @Test("Alarm GET lists NOSPACE near the quota as Status does; DEACTIVATE answers it disarmed while the quota keeps it listed")
    func alarm() async throws {
        let store = MemoryStore()
        let backend = EtcdBackend(store: store, config: try ConfigName("etcd"))
        // Ten bytes short of the quota's NOSPACE, whatever the config holds from the start.
        let held = try await backend.prepare(quotaBytes: nil).byteCount ?? 0
        _ = try await store.updateConfig(backend.config, ConfigSettingsPatch(quotaBytes: held + Limits.maxValueBytes + Key.maxBytes + 10))
        let service = EtcdMaintenanceService(backend: backend, identity: EtcdIdentity(config: backend.config))
        #expect(try await service.alarm(request: .init(), context: Self.context).alarms.isEmpty)
        _ = try await store.set(try EtcdKeys.key(Array("a".utf8)), to: Data("0123456789".utf8), in: backend.config)
        let listed = try await service.alarm(request: .init(), context: Self.context).alarms
        #expect(listed.map(\.alarm) == [.nospace])
        #expect(listed.map(\.memberID) == [service.identity.memberID])
        #expect(try await service.status(request: .init(), context: Self.context).errors == ["memberID:\(service.identity.memberID) alarm:NOSPACE "])
        var other = Etcdserverpb_AlarmRequest()
        other.memberID = 7
        #expect(try await service.alarm(request: other, context: Self.context).alarms == listed, "GET lists every member's, whichever it names, as etcd's")
        #expect(try await service.alarm(request: Self.alarm(.deactivate), context: Self.context).alarms.isEmpty, "member 0 has none")
        let own = service.identity.memberID
        #expect(try await service.alarm(request: Self.alarm(.deactivate, member: own), context: Self.context).alarms.map(\.alarm) == [.nospace])
        #expect(try await service.alarm(request: .init(), context: Self.context).alarms.map(\.alarm) == [.nospace], "the quota keeps it listed")
        #expect(try await store.configInfo(backend.config).settings.alarms.isEmpty, "nothing was stored")
    }

    @Test("Alarm ACTIVATE for the member's own id raises NOSPACE in the config's settings: puts, transactions with a put and lease grants get etcd's NOSPACE, deletes and ranges pass; DEACTIVATE clears it")
    func activate() async throws {
        let (kv, service, _, cleanUp) = try await Self.service(.memory)
        defer { cleanUp() }
        let backend = service.backend
        try await Self.put(kv, "a", "1")
        let own = service.identity.memberID
        let raised = try await service.alarm(request: Self.alarm(.activate, member: own), context: Self.context)
        #expect(raised.alarms.map(\.alarm) == [.nospace])
        #expect(raised.alarms.map(\.memberID) == [service.identity.memberID])
        #expect(try await backend.store.configInfo(backend.config).settings.alarms == [.noSpace])
        #expect(try await service.alarm(request: .init(), context: Self.context).alarms.map(\.alarm) == [.nospace])
        #expect(try await service.status(request: .init(), context: Self.context).errors == ["memberID:\(service.identity.memberID) alarm:NOSPACE "])

        let put = try #require(await EtcdKVServiceTests.failure { try await Self.put(kv, "b", "2") })
        #expect(put.code == .resourceExhausted)
        #expect(put.message == "etcdserver: mvcc: database space exceeded")
        let leases = EtcdLeases(backend: backend)
        await #expect(throws: DiscfgError.alarmRaised(backend.config)) { _ = try await leases.grant(id: 0, ttl: 60) }
        var range = Etcdserverpb_RangeRequest()
        range.key = Data("a".utf8)
        #expect(try await kv.range(request: range, context: Self.context).kvs.map(\.value) == [Data("1".utf8)])
        var delete = Etcdserverpb_DeleteRangeRequest()
        delete.key = Data("a".utf8)
        #expect(try await kv.deleteRange(request: delete, context: Self.context).deleted == 1)

        var corrupt = Self.alarm(.activate)
        corrupt.alarm = .corrupt
        let refused = try #require(await EtcdKVServiceTests.failure { try await service.alarm(request: corrupt, context: Self.context) })
        #expect(refused.code == .unimplemented)

        let disarmed = try await service.alarm(request: Self.alarm(.deactivate, member: own), context: Self.context)
        #expect(disarmed.alarms.map(\.alarm) == [.nospace])
        #expect(try await service.alarm(request: .init(), context: Self.context).alarms.isEmpty)
        #expect(try await backend.store.configInfo(backend.config).settings.alarms.isEmpty)
        try await Self.put(kv, "b", "2")
        #expect(try await service.alarm(request: Self.alarm(.deactivate, member: own), context: Self.context).alarms.isEmpty, "nothing left to disarm")
    }

    /// An Alarm request of `action` on NOSPACE of `member` (0 unless named).
    static func alarm(_ action: Etcdserverpb_AlarmRequest.AlarmAction, member: UInt64 = 0) -> Etcdserverpb_AlarmRequest {
        var request = Etcdserverpb_AlarmRequest()
        request.action = action
        request.memberID = member
        request.alarm = .nospace
        return request
    }

    @Test("Snapshot is refused before its request is read, naming discfg export")
    func snapshot() async throws {
        let method = try #require(EtcdMaintenanceService.refused.first)
        #expect(EtcdMethodTable.path(method.descriptor) == "/etcdserverpb.Maintenance/Snapshot")
        guard case .unary(let call) = method.kind else { Issue.record("not unary"); return }
        let refused = try #require(await EtcdKVServiceTests.failure { try await call([], Self.context) })
        #expect(refused.code == .unimplemented)
        #expect(refused.message.contains("discfg export"))
    }
}
