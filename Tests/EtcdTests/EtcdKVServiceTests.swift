import DiscfgCore
@testable import DiscfgEtcd
import Foundation
import GRPCCore
import Testing

/// The KV service over the memory store, request by request, against what etcd answers
/// (its `server/etcdserver/txn` and `api/v3rpc/rpctypes`): the same keys, counts,
/// revisions, `more`, `prev_kv`s and error codes and words.
@Suite("etcd KV service: Range, Put, DeleteRange, Txn and Compact as etcd answers them")
struct EtcdKVServiceTests {
    static let context = ServerContext(descriptor: Etcdserverpb_KV.Method.Range.descriptor, remotePeer: "test", localPeer: "test", cancellation: ServerContext.RPCCancellationHandle())

    /// A service over a fresh memory config.
    final class Fixture: Sendable {
        let service: EtcdKVService
        let backend: EtcdBackend

        init() async throws {
            let (_, backend, service, _) = try await EtcdTestBacking.memory.service()
            self.backend = backend
            self.service = service
        }

        @discardableResult
        func put(_ key: String, _ value: String, prevKv: Bool = false) async throws -> Etcdserverpb_PutResponse {
            var request = Etcdserverpb_PutRequest()
            request.key = Data(key.utf8)
            request.value = Data(value.utf8)
            request.prevKv = prevKv
            return try await service.put(request: request, context: EtcdKVServiceTests.context)
        }

        func range(_ key: String, _ rangeEnd: String = "", _ shape: (inout Etcdserverpb_RangeRequest) -> Void = { _ in }) async throws -> Etcdserverpb_RangeResponse {
            var request = Etcdserverpb_RangeRequest()
            request.key = Data(key.utf8)
            request.rangeEnd = Data(rangeEnd.utf8)
            shape(&request)
            return try await service.range(request: request, context: EtcdKVServiceTests.context)
        }

        func all(_ shape: (inout Etcdserverpb_RangeRequest) -> Void = { _ in }) async throws -> Etcdserverpb_RangeResponse {
            try await range("\u{0}", "\u{0}", shape)
        }

        func revision() async throws -> Int64 { try await backend.currentRevision().storageValue }
    }

    static func keys(_ kvs: [Mvccpb_KeyValue]) -> [String] { kvs.map { String(decoding: $0.key, as: UTF8.self) } }
    static func values(_ kvs: [Mvccpb_KeyValue]) -> [String] { kvs.map { String(decoding: $0.value, as: UTF8.self) } }

    /// The gRPC code and message a call fails with.
    static func failure<T>(_ body: () async throws -> T) async -> RPCError? {
        do {
            _ = try await body()
            return nil
        } catch let error as RPCError {
            return error
        } catch {
            Issue.record("not an RPCError: \(error)")
            return nil
        }
    }

    // MARK: Range

    @Test("one key, a missing key, a half-open range, a prefix and every key, with etcd's counts and revisions")
    func rangeShapes() async throws {
        let etcd = try await Fixture()
        for key in ["a", "a/1", "a/2", "b", "c"] { try await etcd.put(key, "v-\(key)") }
        let now = try await etcd.revision()

        let one = try await etcd.range("a/1")
        #expect(Self.keys(one.kvs) == ["a/1"])
        #expect(Self.values(one.kvs) == ["v-a/1"])
        #expect(one.count == 1 && !one.more)
        #expect(one.header.revision == now)
        #expect(one.header.raftTerm == 1)

        let missing = try await etcd.range("a/3")
        #expect(missing.kvs.isEmpty && missing.count == 0 && !missing.more)
        #expect(missing.header.revision == now)

        #expect(Self.keys(try await etcd.range("a", "b").kvs) == ["a", "a/1", "a/2"])
        #expect(Self.keys(try await etcd.range("a/", "a0").kvs) == ["a/1", "a/2"])
        #expect(Self.keys(try await etcd.range("b", "\u{0}").kvs) == ["b", "c"])
        #expect(Self.keys(try await etcd.all().kvs) == ["a", "a/1", "a/2", "b", "c"])
        // An end at or before the key is an empty range, not an error.
        let backwards = try await etcd.range("c", "a")
        #expect(backwards.kvs.isEmpty && backwards.count == 0)

        let empty = await Self.failure { try await etcd.range("") }
        #expect(empty?.code == .invalidArgument)
        #expect(empty?.message == "etcdserver: key is not provided")
    }

    @Test("limit cuts the answer and sets more; count is the whole range's")
    func rangeLimit() async throws {
        let etcd = try await Fixture()
        for key in ["a", "b", "c", "d"] { try await etcd.put(key, key) }
        let two = try await etcd.all { $0.limit = 2 }
        #expect(Self.keys(two.kvs) == ["a", "b"])
        #expect(two.more && two.count == 4)
        let exact = try await etcd.all { $0.limit = 4 }
        #expect(exact.kvs.count == 4 && !exact.more)
        // A limit of 0 or less is none.
        let negative = try await etcd.all { $0.limit = -1 }
        #expect(negative.kvs.count == 4 && !negative.more)
    }

    @Test("sorting by each target, both ways, before the limit")
    func rangeSort() async throws {
        let etcd = try await Fixture()
        // Created c, b, a; then a rewritten twice and c once: versions a 3, b 1, c 2.
        try await etcd.put("c", "2")
        try await etcd.put("b", "3")
        try await etcd.put("a", "9")
        try await etcd.put("a", "8")
        try await etcd.put("c", "1")
        try await etcd.put("a", "5")

        func sorted(_ order: Etcdserverpb_RangeRequest.SortOrder, _ target: Etcdserverpb_RangeRequest.SortTarget, limit: Int64 = 0) async throws -> [String] {
            Self.keys(try await etcd.all {
                $0.sortOrder = order
                $0.sortTarget = target
                $0.limit = limit
            }.kvs)
        }
        #expect(try await sorted(.none, .key) == ["a", "b", "c"])
        #expect(try await sorted(.ascend, .key) == ["a", "b", "c"])
        #expect(try await sorted(.descend, .key) == ["c", "b", "a"])
        #expect(try await sorted(.descend, .key, limit: 2) == ["c", "b"])
        #expect(try await sorted(.ascend, .version) == ["b", "c", "a"])
        #expect(try await sorted(.ascend, .create) == ["c", "b", "a"])
        #expect(try await sorted(.descend, .create) == ["a", "b", "c"])
        #expect(try await sorted(.ascend, .mod) == ["b", "c", "a"])
        #expect(try await sorted(.descend, .mod, limit: 1) == ["a"])
        #expect(try await sorted(.ascend, .value) == ["c", "b", "a"])
        #expect(try await sorted(.descend, .value) == ["a", "b", "c"])
        // etcd sorts ascending when a target other than the key is given without an order.
        #expect(try await sorted(.none, .value) == ["c", "b", "a"])
        #expect(try await sorted(.none, .create, limit: 2) == ["c", "b"])
    }

    @Test("keys_only leaves values out; count_only leaves the keys out and never says more")
    func rangeKeysAndCountOnly() async throws {
        let etcd = try await Fixture()
        for key in ["a", "b", "c"] { try await etcd.put(key, "value of \(key)") }
        let keysOnly = try await etcd.all { $0.keysOnly = true }
        #expect(Self.keys(keysOnly.kvs) == ["a", "b", "c"])
        #expect(keysOnly.kvs.allSatisfy { $0.value.isEmpty && $0.version == 1 && $0.modRevision > 0 })
        let countOnly = try await etcd.all {
            $0.countOnly = true
            $0.limit = 1
        }
        #expect(countOnly.kvs.isEmpty)
        #expect(countOnly.count == 3)
        #expect(!countOnly.more)
    }

    @Test("a read at a past revision sees the keys as they were; a future or compacted one is out of range")
    func rangeAtRevision() async throws {
        let etcd = try await Fixture()
        let zero = try await etcd.put("other", "x").header.revision
        let first = try await etcd.put("k", "one").header.revision
        try await etcd.put("k", "two")
        let now = try await etcd.revision()

        let past = try await etcd.range("k") { $0.revision = first }
        #expect(Self.values(past.kvs) == ["one"])
        #expect(past.kvs.first?.modRevision == first)
        // The header holds the revision now, as etcd's does.
        #expect(past.header.revision == now)
        let pastRange = try await etcd.all { $0.revision = first }
        #expect(Self.keys(pastRange.kvs) == ["k", "other"])
        #expect(Self.values(pastRange.kvs) == ["one", "x"])
        #expect(pastRange.count == 2)
        let beforeK = try await etcd.all { $0.revision = zero }
        #expect(Self.keys(beforeK.kvs) == ["other"])
        #expect(beforeK.count == 1)
        #expect(try await etcd.range("k") { $0.revision = zero }.kvs.isEmpty)

        let future = await Self.failure { try await etcd.range("k") { $0.revision = now + 1 } }
        #expect(future?.code == .outOfRange)
        #expect(future?.message == "etcdserver: mvcc: required revision is a future revision")

        var compact = Etcdserverpb_CompactionRequest()
        compact.revision = now
        _ = try await etcd.service.compact(request: compact, context: Self.context)
        let compacted = await Self.failure { try await etcd.range("k") { $0.revision = first } }
        #expect(compacted?.code == .outOfRange)
        #expect(compacted?.message == "etcdserver: mvcc: required revision has been compacted")
        // The revision compacted to stays readable.
        #expect(Self.values(try await etcd.range("k") { $0.revision = now }.kvs) == ["two"])
    }

    @Test("min and max mod and create revisions filter the keys; count stays the whole range's, as etcd's")
    func rangeRevisionFilters() async throws {
        let etcd = try await Fixture()
        let a = try await etcd.put("a", "1").header.revision
        let b = try await etcd.put("b", "1").header.revision
        let c = try await etcd.put("c", "1").header.revision
        let a2 = try await etcd.put("a", "2").header.revision

        let modFrom = try await etcd.all { $0.minModRevision = c }
        #expect(Self.keys(modFrom.kvs) == ["a", "c"])
        #expect(modFrom.count == 3)
        #expect(Self.keys(try await etcd.all { $0.maxModRevision = b }.kvs) == ["b"])
        #expect(Self.keys(try await etcd.all { $0.minCreateRevision = b }.kvs) == ["b", "c"])
        #expect(Self.keys(try await etcd.all { $0.maxCreateRevision = a }.kvs) == ["a"])
        #expect(Self.keys(try await etcd.all {
            $0.minModRevision = b
            $0.maxModRevision = a2 - 1
        }.kvs) == ["b", "c"])
        let limited = try await etcd.all {
            $0.minCreateRevision = b
            $0.limit = 1
        }
        #expect(Self.keys(limited.kvs) == ["b"])
        #expect(limited.more)
    }

    // MARK: Put

    @Test("a put answers its revision, and the previous key-value only when asked and only when there was one")
    func putPrevKv() async throws {
        let etcd = try await Fixture()
        let before = try await etcd.revision()
        let created = try await etcd.put("k", "one", prevKv: true)
        #expect(created.header.revision == before + 1)
        #expect(!created.hasPrevKv)

        let quiet = try await etcd.put("k", "two")
        #expect(quiet.header.revision == before + 2)
        #expect(!quiet.hasPrevKv)

        let replaced = try await etcd.put("k", "three", prevKv: true)
        #expect(replaced.hasPrevKv)
        #expect(String(decoding: replaced.prevKv.value, as: UTF8.self) == "two")
        #expect(replaced.prevKv.key == Data("k".utf8))
        #expect(replaced.prevKv.version == 2)
        #expect(replaced.prevKv.createRevision == before + 1)
        #expect(replaced.prevKv.modRevision == before + 2)

        let now = try await etcd.range("k")
        #expect(now.kvs.first?.version == 3)
        #expect(now.kvs.first?.createRevision == before + 1)
        #expect(now.kvs.first?.modRevision == before + 3)
    }

    @Test("ignore_value keeps the value; it needs an existing key and no value, and ignore_lease no lease")
    func putIgnoring() async throws {
        let etcd = try await Fixture()
        try await etcd.put("k", "kept")

        var keep = Etcdserverpb_PutRequest()
        keep.key = Data("k".utf8)
        keep.ignoreValue = true
        keep.prevKv = true
        let kept = try await etcd.service.put(request: keep, context: Self.context)
        #expect(String(decoding: kept.prevKv.value, as: UTF8.self) == "kept")
        let read = try await etcd.range("k")
        #expect(Self.values(read.kvs) == ["kept"])
        #expect(read.kvs.first?.version == 2)
        #expect(read.kvs.first?.modRevision == kept.header.revision)

        var missing = keep
        missing.key = Data("absent".utf8)
        let notFound = await Self.failure { try await etcd.service.put(request: missing, context: Self.context) }
        // etcd's ErrGRPCKeyNotFound is INVALID_ARGUMENT.
        #expect(notFound?.code == .invalidArgument)
        #expect(notFound?.message == "etcdserver: key not found")

        var withValue = keep
        withValue.value = Data("x".utf8)
        let valueProvided = await Self.failure { try await etcd.service.put(request: withValue, context: Self.context) }
        #expect(valueProvided?.code == .invalidArgument)
        #expect(valueProvided?.message == "etcdserver: value is provided")

        var withLease = Etcdserverpb_PutRequest()
        withLease.key = Data("k".utf8)
        withLease.ignoreLease = true
        withLease.lease = 7
        let leaseProvided = await Self.failure { try await etcd.service.put(request: withLease, context: Self.context) }
        #expect(leaseProvided?.code == .invalidArgument)
        #expect(leaseProvided?.message == "etcdserver: lease is provided")

        var unknownLease = Etcdserverpb_PutRequest()
        unknownLease.key = Data("k".utf8)
        unknownLease.lease = 12345
        let leaseNotFound = await Self.failure { try await etcd.service.put(request: unknownLease, context: Self.context) }
        #expect(leaseNotFound?.code == .notFound)
        #expect(leaseNotFound?.message == "etcdserver: requested lease not found")

        var empty = Etcdserverpb_PutRequest()
        empty.value = Data("v".utf8)
        let noKey = await Self.failure { try await etcd.service.put(request: empty, context: Self.context) }
        #expect(noKey?.code == .invalidArgument)
        #expect(noKey?.message == "etcdserver: key is not provided")
        // None of the refused puts changed anything.
        #expect(try await etcd.revision() == kept.header.revision)
    }

    // MARK: DeleteRange

    @Test("a delete of one key, of a range and of everything: deleted counts, prev_kvs and one revision each")
    func deleteRange() async throws {
        let etcd = try await Fixture()
        for key in ["a", "a/1", "a/2", "b"] { try await etcd.put(key, "v-\(key)") }
        let before = try await etcd.revision()

        func delete(_ key: String, _ rangeEnd: String = "", prevKv: Bool = false) async throws -> Etcdserverpb_DeleteRangeResponse {
            var request = Etcdserverpb_DeleteRangeRequest()
            request.key = Data(key.utf8)
            request.rangeEnd = Data(rangeEnd.utf8)
            request.prevKv = prevKv
            return try await etcd.service.deleteRange(request: request, context: Self.context)
        }

        let none = try await delete("zzz")
        #expect(none.deleted == 0 && none.prevKvs.isEmpty)
        // Deleting nothing makes no revision, as in etcd.
        #expect(none.header.revision == before)

        let range = try await delete("a/", "a0", prevKv: true)
        #expect(range.deleted == 2)
        #expect(Self.keys(range.prevKvs) == ["a/1", "a/2"])
        #expect(Self.values(range.prevKvs) == ["v-a/1", "v-a/2"])
        #expect(range.header.revision == before + 1)

        let quiet = try await delete("a")
        #expect(quiet.deleted == 1 && quiet.prevKvs.isEmpty)
        #expect(quiet.header.revision == before + 2)

        let rest = try await delete("\u{0}", "\u{0}", prevKv: true)
        #expect(rest.deleted == 1 && Self.keys(rest.prevKvs) == ["b"])
        #expect(try await etcd.all().count == 0)

        var empty = Etcdserverpb_DeleteRangeRequest()
        empty.rangeEnd = Data("b".utf8)
        let noKey = await Self.failure { try await etcd.service.deleteRange(request: empty, context: Self.context) }
        #expect(noKey?.code == .invalidArgument)
        #expect(noKey?.message == "etcdserver: key is not provided")
    }
}
