import DiscfgCore
@testable import DiscfgEtcd
import Foundation
import GRPCCore
import Testing

/// Nested transactions (`request_txn`), as etcd 3.4 answers them: every compare of the
/// path taken decided before any op runs, one revision, a `response_txn` per nested op.
extension EtcdKVServiceTests {
    static func txnOp(compare: [Etcdserverpb_Compare] = [], success: [Etcdserverpb_RequestOp] = [], failure: [Etcdserverpb_RequestOp] = []) -> Etcdserverpb_RequestOp {
        var op = Etcdserverpb_RequestOp()
        op.requestTxn.compare = compare
        op.requestTxn.success = success
        op.requestTxn.failure = failure
        return op
    }

    @Test("nested compares see the keys as the txn began; ranges inside see the puts before them; one revision; a response_txn per nested txn")
    func nestedTxn() async throws {
        let etcd = try await Fixture()
        let start = try await etcd.put("a", "1").header.revision
        let answer = try await txn(
            etcd,
            compare: [Self.compare("a", .version, .equal) { $0.version = 1 }],
            success: [
                Self.putOp("a", "2"),
                Self.txnOp(
                    compare: [Self.compare("a", .value, .equal) { $0.value = Data("1".utf8) }],
                    success: [Self.rangeOp("a"), Self.putOp("b", "b", prevKv: true)],
                    failure: [Self.deleteOp("z")]
                ),
                Self.txnOp(compare: [Self.compare("b", .version, .greater) { $0.version = 0 }], success: [Self.putOp("never", "x")], failure: [Self.rangeOp("b")]),
                Self.rangeOp("a", "c"),
            ]
        )
        #expect(answer.succeeded)
        #expect(answer.header.revision == start + 1)
        #expect(try await etcd.revision() == start + 1)
        #expect(answer.responses.count == 4)
        #expect(answer.responses[0].responsePut.header.revision == start + 1)
        let first = answer.responses[1].responseTxn
        #expect(first.succeeded, "decided on a = 1, as it was before the put")
        #expect(answer.responses[1].responseTxn.hasHeader && first.header == Etcdserverpb_ResponseHeader(), "etcd's nested header is empty")
        #expect(Self.values(first.responses[0].responseRange.kvs) == ["2"])
        #expect(first.responses[0].responseRange.header.revision == start + 1)
        #expect(!first.responses[1].responsePut.hasPrevKv)
        let second = answer.responses[2].responseTxn
        #expect(!second.succeeded, "decided on b absent, as it was before the nested put")
        #expect(Self.values(second.responses[0].responseRange.kvs) == ["b"])
        #expect(Self.keys(answer.responses[3].responseRange.kvs) == ["a", "b"])
        #expect(try await etcd.range("never").kvs.isEmpty)
        #expect(answer.changeRevision == start + 1)
    }

    @Test("a nested txn's read at a past revision answers from history; a nested txn that only reads changes nothing")
    func nestedPastReads() async throws {
        let etcd = try await Fixture()
        let first = try await etcd.put("k", "1").header.revision
        let now = try await etcd.put("k", "2").header.revision
        var past = Self.rangeOp("k")
        past.requestRange.revision = first
        let answer = try await txn(etcd, success: [Self.txnOp(success: [past, Self.rangeOp("k")])])
        let nested = answer.responses[0].responseTxn
        #expect(Self.values(nested.responses[0].responseRange.kvs) == ["1"])
        #expect(Self.values(nested.responses[1].responseRange.kvs) == ["2"])
        #expect(answer.header.revision == now)
        #expect(answer.changeRevision == nil)
    }

    @Test("keys written twice across the tree are refused as etcd refuses them; the two branches of one nested txn may put the same key")
    func nestedDuplicateKeys() async throws {
        let etcd = try await Fixture()
        let start = try await etcd.put("a", "1").header.revision
        let refused: [[Etcdserverpb_RequestOp]] = [
            [Self.putOp("a", "2"), Self.txnOp(success: [Self.putOp("a", "3")])],
            [Self.txnOp(success: [Self.putOp("a", "2")]), Self.txnOp(failure: [Self.putOp("a", "3")])],
            [Self.txnOp(success: [Self.deleteOp("a", "c")]), Self.putOp("b", "2")],
            [Self.txnOp(success: [Self.txnOp(success: [Self.putOp("a", "2")])]), Self.putOp("a", "3")],
        ]
        for success in refused {
            let error = await Self.failure { try await txn(etcd, success: success) }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message == "etcdserver: duplicate key given in txn request")
        }
        let either = try await txn(etcd, success: [Self.txnOp(success: [Self.putOp("a", "then")], failure: [Self.putOp("a", "else")])])
        #expect(either.responses[0].responseTxn.succeeded)
        #expect(Self.values(try await etcd.range("a").kvs) == ["then"])
        #expect(try await etcd.revision() == start + 1)
    }

    @Test("depth bombs and fan-out: past 16 deep (a thousand here) or 1,024 entries in all, refused with INVALID_ARGUMENT before anything runs; 16 deep runs")
    func nestedBounds() async throws {
        let etcd = try await Fixture()
        let start = try await etcd.revision()
        var deep = Self.putOp("deep", "x")
        // In memory a thousand deep (the gateway's attack test sends ten thousand, which
        // its scan refuses before decoding; a message as deep never reaches a handler).
        for _ in 0..<1_000 { deep = Self.txnOp(success: [deep]) }
        let tooDeep = await Self.failure { try await txn(etcd, success: [deep]) }
        #expect(tooDeep?.code == .invalidArgument)
        #expect(tooDeep?.message.contains("nest at most \(Limits.maxTransactionDepth) deep") == true, "\(String(describing: tooDeep))")
        let wide = Array(repeating: Self.txnOp(compare: Array(repeating: Self.compare("a", .version, .equal) { $0.version = 0 }, count: 8)), count: 128)
        let tooWide = await Self.failure { try await txn(etcd, success: wide) }
        #expect(tooWide?.code == .invalidArgument)
        #expect(tooWide?.message.hasPrefix("etcdserver: too many operations in txn request") == true)
        let crowded = await Self.failure { try await txn(etcd, success: [Self.txnOp(failure: Array(repeating: Self.rangeOp("a"), count: 129))]) }
        #expect(crowded?.message == "etcdserver: too many operations in txn request")
        #expect(try await etcd.revision() == start)
        var allowed = Self.putOp("deep", "x")
        for _ in 1..<Limits.maxTransactionDepth { allowed = Self.txnOp(success: [allowed]) }
        let answer = try await txn(etcd, success: [allowed])
        #expect(answer.header.revision == start + 1)
        #expect(Self.values(try await etcd.range("deep").kvs) == ["x"])
    }

    @Test("the wire shape checks count every nested list, and refuse depth and fan-out before decoding")
    func nestedShapeOnTheWire() throws {
        var deep = Etcdserverpb_TxnRequest()
        deep.success = [Self.putOp("k", "v")]
        for _ in 1..<Limits.maxTransactionDepth { deep.success = [Self.txnOp(success: deep.success)] }
        try EtcdTxnShape.check(try deep.serializedBytes())
        try EtcdTxnShape.checkJSON(try deep.jsonUTF8Data())
        var deeper = deep
        deeper.success = [Self.txnOp(success: deep.success)]
        for check in [{ try EtcdTxnShape.check(try deeper.serializedBytes()) }, { try EtcdTxnShape.checkJSON(try deeper.jsonUTF8Data()) }] {
            let error = try #require(throws: RPCError.self) { try check() }
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("nest at most"))
        }
        var crowded = Etcdserverpb_TxnRequest()
        crowded.failure = [Self.txnOp(success: [Self.txnOp(compare: Array(repeating: Etcdserverpb_Compare(), count: 129))])]
        for check in [{ try EtcdTxnShape.check(try crowded.serializedBytes()) }, { try EtcdTxnShape.checkJSON(try crowded.jsonUTF8Data()) }] {
            let error = try #require(throws: RPCError.self) { try check() }
            #expect(error.message == "etcdserver: too many operations in txn request")
        }
        var wide = Etcdserverpb_TxnRequest()
        wide.success = Array(repeating: Self.txnOp(compare: Array(repeating: Etcdserverpb_Compare(), count: 8)), count: 128)
        for check in [{ try EtcdTxnShape.check(try wide.serializedBytes()) }, { try EtcdTxnShape.checkJSON(try wide.jsonUTF8Data()) }] {
            let error = try #require(throws: RPCError.self) { try check() }
            #expect(error.message.contains("\(Limits.maxTransactionEntries)"))
        }
        // Two thousand deep, as bytes a client could send (no message that deep is built):
        // refused at the 17th level, the rest never looked at.
        func delimited(_ field: UInt8, _ body: [UInt8]) -> [UInt8] {
            var length = UInt64(body.count)
            var bytes = [field << 3 | 2]
            while length >= 0x80 {
                bytes.append(UInt8(length & 0x7F) | 0x80)
                length >>= 7
            }
            return bytes + [UInt8(length)] + body
        }
        var bomb: [UInt8] = []
        for _ in 0..<2_000 { bomb = delimited(2, delimited(4, bomb)) }
        let bombError = try #require(throws: RPCError.self) { try EtcdTxnShape.check(bomb) }
        #expect(bombError.message.contains("nest at most"))
        // A request_txn key outside a branch's item is not a nested transaction.
        try EtcdTxnShape.checkJSON(Data(#"{"compare":[{"request_txn":{"success":[{"request_txn":{}}]}}],"success":[{"x":{"request_txn":[]}}]}"#.utf8))
    }
}
