import DiscfgCore
@testable import DiscfgEtcd
import Foundation
import GRPCCore
import Testing

/// Txn and Compact, as etcd answers them.
extension EtcdKVServiceTests {
    // MARK: Txn

    static func compare(_ key: String, _ target: Etcdserverpb_Compare.CompareTarget, _ result: Etcdserverpb_Compare.CompareResult, _ set: (inout Etcdserverpb_Compare) -> Void) -> Etcdserverpb_Compare {
        var compare = Etcdserverpb_Compare()
        compare.key = Data(key.utf8)
        compare.target = target
        compare.result = result
        set(&compare)
        return compare
    }

    static func putOp(_ key: String, _ value: String, prevKv: Bool = false) -> Etcdserverpb_RequestOp {
        var put = Etcdserverpb_PutRequest()
        put.key = Data(key.utf8)
        put.value = Data(value.utf8)
        put.prevKv = prevKv
        var op = Etcdserverpb_RequestOp()
        op.requestPut = put
        return op
    }

    static func rangeOp(_ key: String, _ rangeEnd: String = "") -> Etcdserverpb_RequestOp {
        var range = Etcdserverpb_RangeRequest()
        range.key = Data(key.utf8)
        range.rangeEnd = Data(rangeEnd.utf8)
        var op = Etcdserverpb_RequestOp()
        op.requestRange = range
        return op
    }

    static func deleteOp(_ key: String, _ rangeEnd: String = "", prevKv: Bool = false) -> Etcdserverpb_RequestOp {
        var delete = Etcdserverpb_DeleteRangeRequest()
        delete.key = Data(key.utf8)
        delete.rangeEnd = Data(rangeEnd.utf8)
        delete.prevKv = prevKv
        var op = Etcdserverpb_RequestOp()
        op.requestDeleteRange = delete
        return op
    }

    func txn(_ etcd: Fixture, compare: [Etcdserverpb_Compare] = [], success: [Etcdserverpb_RequestOp] = [], failure: [Etcdserverpb_RequestOp] = []) async throws -> Etcdserverpb_TxnResponse {
        var request = Etcdserverpb_TxnRequest()
        request.compare = compare
        request.success = success
        request.failure = failure
        return try await etcd.service.txn(request: request, context: Self.context)
    }

    @Test("each compare target and result decides the branch as etcd's does")
    func txnCompares() async throws {
        let etcd = try await Fixture()
        let created = try await etcd.put("k", "b").header.revision
        let modified = try await etcd.put("k", "m").header.revision

        let cases: [(Etcdserverpb_Compare, Bool)] = [
            (Self.compare("k", .value, .equal) { $0.value = Data("m".utf8) }, true),
            (Self.compare("k", .value, .greater) { $0.value = Data("a".utf8) }, true),
            (Self.compare("k", .value, .less) { $0.value = Data("a".utf8) }, false),
            (Self.compare("k", .value, .notEqual) { $0.value = Data("m".utf8) }, false),
            (Self.compare("k", .version, .equal) { $0.version = 2 }, true),
            (Self.compare("k", .version, .greater) { $0.version = 2 }, false),
            (Self.compare("k", .create, .equal) { $0.createRevision = created }, true),
            (Self.compare("k", .mod, .equal) { $0.modRevision = modified }, true),
            (Self.compare("k", .mod, .less) { $0.modRevision = modified + 1 }, true),
            // A missing key has version, create and mod revisions 0.
            (Self.compare("absent", .version, .equal) { $0.version = 0 }, true),
            (Self.compare("absent", .create, .equal) { $0.createRevision = 0 }, true),
            (Self.compare("absent", .mod, .greater) { $0.modRevision = 0 }, false),
            // A value compare on a missing key fails, whatever it asks.
            (Self.compare("absent", .value, .notEqual) { $0.value = Data("x".utf8) }, false),
            // A negative operand: `>` and `!=` always hold, `=` and `<` never.
            (Self.compare("k", .version, .greater) { $0.version = -1 }, true),
            (Self.compare("k", .mod, .equal) { $0.modRevision = -1 }, false),
            // A compare over a range holds when it holds for every key in it.
            (Self.compare("a", .version, .greater) {
                $0.rangeEnd = Data("z".utf8)
                $0.version = 0
            }, true),
        ]
        for (compare, holds) in cases {
            let answer = try await txn(etcd, compare: [compare], success: [Self.rangeOp("k")], failure: [Self.rangeOp("absent")])
            #expect(answer.succeeded == holds, "\(compare)")
            #expect(answer.responses.count == 1)
        }
        // All compares must hold.
        let mixed = try await txn(etcd, compare: [cases[0].0, cases[2].0])
        #expect(!mixed.succeeded)
        // No compares: success runs.
        #expect(try await txn(etcd).succeeded)

        let lease = await Self.failure { try await self.txn(etcd, compare: [Self.compare("k", .lease, .equal) { $0.lease = 1 }]) }
        #expect(lease?.code == .unimplemented)
        let mismatched = await Self.failure { try await self.txn(etcd, compare: [Self.compare("k", .version, .equal) { $0.value = Data() }]) }
        #expect(mismatched?.code == .invalidArgument)
    }

    @Test("a txn's branch runs as one revision; each answer carries its own header revision and prev_kv")
    func txnBranch() async throws {
        let etcd = try await Fixture()
        try await etcd.put("a", "1")
        try await etcd.put("gone", "x")
        let before = try await etcd.revision()

        let answer = try await txn(
            etcd,
            compare: [Self.compare("a", .value, .equal) { $0.value = Data("1".utf8) }],
            success: [Self.rangeOp("a"), Self.putOp("a", "2", prevKv: true), Self.deleteOp("gone", prevKv: true), Self.rangeOp("a")],
            failure: [Self.putOp("failed", "yes")]
        )
        #expect(answer.succeeded)
        #expect(answer.header.revision == before + 1)
        #expect(answer.responses.count == 4)
        // A read before the first write sees the revision the txn began at; after it, the txn's own.
        #expect(answer.responses[0].responseRange.header.revision == before)
        #expect(Self.values(answer.responses[0].responseRange.kvs) == ["1"])
        #expect(answer.responses[1].responsePut.header.revision == before + 1)
        #expect(String(decoding: answer.responses[1].responsePut.prevKv.value, as: UTF8.self) == "1")
        #expect(answer.responses[2].responseDeleteRange.deleted == 1)
        #expect(Self.keys(answer.responses[2].responseDeleteRange.prevKvs) == ["gone"])
        #expect(Self.values(answer.responses[3].responseRange.kvs) == ["2"])
        #expect(try await etcd.range("failed").kvs.isEmpty)

        // The other branch: one read changes nothing, and makes no revision.
        let failed = try await txn(
            etcd,
            compare: [Self.compare("a", .value, .equal) { $0.value = Data("1".utf8) }],
            success: [Self.putOp("a", "3")],
            failure: [Self.rangeOp("a")]
        )
        #expect(!failed.succeeded)
        #expect(failed.header.revision == before + 1)
        #expect(Self.values(failed.responses[0].responseRange.kvs) == ["2"])
    }

    @Test("a txn that writes a key twice (in a nested txn too) or has too many operations is refused whole")
    func txnRefusals() async throws {
        let etcd = try await Fixture()
        let before = try await etcd.revision()

        let twice = await Self.failure { try await self.txn(etcd, success: [Self.putOp("k", "1"), Self.putOp("k", "2")]) }
        #expect(twice?.code == .invalidArgument)
        #expect(twice?.message == "etcdserver: duplicate key given in txn request")

        // A nested transaction's duplicate, refused before the outer put ran.
        var inner = Etcdserverpb_TxnRequest()
        inner.success = [Self.putOp("outer", "2")]
        var nested = Etcdserverpb_RequestOp()
        nested.requestTxn = inner
        let nestedError = await Self.failure { try await self.txn(etcd, success: [Self.putOp("outer", "1"), nested]) }
        #expect(nestedError?.code == .invalidArgument)
        #expect(nestedError?.message == "etcdserver: duplicate key given in txn request")

        let many = (0...Limits.maxTransactionOperations).map { Self.putOp("k\($0)", "v") }
        let tooMany = await Self.failure { try await self.txn(etcd, success: many) }
        #expect(tooMany?.code == .invalidArgument)
        #expect(tooMany?.message == "etcdserver: too many operations in txn request")

        let noRequest = await Self.failure { try await self.txn(etcd, success: [Etcdserverpb_RequestOp()]) }
        #expect(noRequest?.code == .invalidArgument)

        // Nothing of any of them was written.
        #expect(try await etcd.revision() == before)
        #expect(try await etcd.all().count == 0)
    }

    // MARK: Compact

    @Test("compaction: to a past revision, not to the future, not twice to the same one")
    func compact() async throws {
        let etcd = try await Fixture()
        let first = try await etcd.put("k", "1").header.revision
        try await etcd.put("k", "2")
        let now = try await etcd.revision()

        func compact(_ revision: Int64) async throws -> Etcdserverpb_CompactionResponse {
            var request = Etcdserverpb_CompactionRequest()
            request.revision = revision
            return try await etcd.service.compact(request: request, context: Self.context)
        }

        let future = await Self.failure { try await compact(now + 1) }
        #expect(future?.code == .outOfRange)
        #expect(future?.message == "etcdserver: mvcc: required revision is a future revision")

        let answer = try await compact(first + 1)
        #expect(answer.header.revision == now)
        #expect(Self.values(try await etcd.range("k") { $0.revision = first + 1 }.kvs) == ["2"])
        let gone = await Self.failure { try await etcd.range("k") { $0.revision = first } }
        #expect(gone?.code == .outOfRange)

        let again = await Self.failure { try await compact(first + 1) }
        #expect(again?.code == .outOfRange)
        #expect(again?.message == "etcdserver: mvcc: required revision has been compacted")
        let older = await Self.failure { try await compact(first) }
        #expect(older?.code == .outOfRange)
        // The live keys are untouched.
        #expect(Self.values(try await etcd.range("k").kvs) == ["2"])
    }
}
