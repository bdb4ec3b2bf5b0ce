import DiscfgCore
@testable import DiscfgEtcd
import Foundation
import GRPCCore
import Testing

/// Reads at a past revision inside a Txn, as etcd answers them and its STM uses them.
extension EtcdKVServiceTests {
    static func rangeOp(_ key: String, at revision: Int64) -> Etcdserverpb_RequestOp {
        var op = rangeOp(key)
        op.requestRange.revision = revision
        return op
    }

    @Test("a Txn's read at a past revision sees the key as it was, in its place among the branch's answers, in either branch")
    func txnPastReads() async throws {
        let etcd = try await Fixture()
        let first = try await etcd.put("a", "1").header.revision
        try await etcd.put("a", "2")
        let done = try await txn(etcd, success: [Self.putOp("b", "x"), Self.rangeOp("a", at: first), Self.rangeOp("a"), Self.rangeOp("b")])
        #expect(done.succeeded)
        #expect(done.responses.count == 4)
        #expect(Self.values(done.responses[1].responseRange.kvs) == ["1"], "as of the revision asked")
        #expect(done.responses[1].responseRange.count == 1)
        #expect(Self.values(done.responses[2].responseRange.kvs) == ["2"], "now")
        #expect(Self.values(done.responses[3].responseRange.kvs) == ["x"], "a read after a write sees it")
        if case .responsePut? = done.responses[0].response {} else { Issue.record("the put answers as a put") }

        // A revision of 0 or below is now, as Range reads it.
        let negative = try await txn(etcd, success: [Self.rangeOp("a", at: -1), Self.rangeOp("a", at: Int64.min)])
        #expect(negative.responses.map { Self.values($0.responseRange.kvs) } == [["2"], ["2"]])
        let huge = await Self.failure { try await self.txn(etcd, success: [Self.rangeOp("a", at: Int64.max)]) }
        #expect(huge?.message == "etcdserver: mvcc: required revision is a future revision")

        let never = Self.compare("a", .value, .equal) { $0.value = Data("nope".utf8) }
        let failed = try await txn(etcd, compare: [never], success: [Self.putOp("c", "1")], failure: [Self.rangeOp("a", at: first), Self.rangeOp("a")])
        #expect(!failed.succeeded)
        #expect(failed.responses.map { Self.values($0.responseRange.kvs) } == [["1"], ["2"]])
        #expect(try await etcd.range("c").kvs.isEmpty)
    }

    @Test("a Txn reading a future or compacted revision is refused as Range refuses it, and changes nothing")
    func txnPastReadRefusals() async throws {
        let etcd = try await Fixture()
        try await etcd.put("a", "1")
        try await etcd.put("a", "2")
        let before = try await etcd.revision()
        let future = await Self.failure { try await self.txn(etcd, success: [Self.putOp("b", "1"), Self.rangeOp("a", at: before + 1)]) }
        #expect(future?.message == "etcdserver: mvcc: required revision is a future revision")
        var compact = Etcdserverpb_CompactionRequest()
        compact.revision = before
        _ = try await etcd.service.compact(request: compact, context: Self.context)
        let compacted = await Self.failure { try await self.txn(etcd, success: [Self.putOp("b", "1"), Self.rangeOp("a", at: 1)]) }
        #expect(compacted?.code == .outOfRange)
        #expect(try await etcd.revision() == before)
        #expect(try await etcd.range("b").kvs.isEmpty)
    }

    /// What etcd's STM (`concurrency.NewSTM`, serializable snapshot) does for a transfer
    /// between two keys: reads both at one revision, then commits with compares on their
    /// mod revisions; a commit that loses reads both again, at the revision it saw, in
    /// its failure branch.
    @Test("an STM-style transfer between two keys: reads at one revision, a commit guarded by their mod revisions, a lost commit's re-reads at the past revision")
    func stmTransfer() async throws {
        let etcd = try await Fixture()
        try await etcd.put("from", "10")
        try await etcd.put("to", "0")
        let seen = try await etcd.revision()
        func read(_ key: String, at revision: Int64) async throws -> Mvccpb_KeyValue {
            try #require(try await etcd.range(key) { $0.revision = revision }.kvs.first)
        }
        let from = try await read("from", at: seen), to = try await read("to", at: seen)
        // Another client moves "from" meanwhile: the first commit loses.
        try await etcd.put("from", "7")
        func commit() async throws -> Etcdserverpb_TxnResponse {
            try await txn(
                etcd,
                compare: [
                    Self.compare("from", .mod, .less) { $0.modRevision = seen + 1 },
                    Self.compare("to", .mod, .less) { $0.modRevision = seen + 1 },
                ],
                success: [Self.putOp("from", "\(Int(String(decoding: from.value, as: UTF8.self))! - 5)"), Self.putOp("to", "5")],
                failure: [Self.rangeOp("from", at: seen), Self.rangeOp("to", at: seen)]
            )
        }
        let lost = try await commit()
        #expect(!lost.succeeded)
        #expect(lost.responses.map { Self.values($0.responseRange.kvs) } == [["10"], ["0"]], "the re-reads see the snapshot the STM began with")
        #expect(Self.values(try await etcd.range("from").kvs) == ["7"], "the lost commit changed nothing")
        #expect(to.modRevision <= seen)
    }
}
