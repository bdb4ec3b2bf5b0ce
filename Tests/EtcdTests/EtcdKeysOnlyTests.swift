import DiscfgCore
@testable import DiscfgEtcd
import DiscfgSQLite
import Foundation
import GRPCCore
import Testing

/// The etcd API reaches only the keys its encoding makes, and its answers are bounded
/// before they are built: driven through ``EtcdBackend`` and the KV service over memory
/// and a real SQLite file, beside keys another writer (REST, the CLI) put in the config.
@Suite("etcd API: only etcd keys, within one answer's budget")
struct EtcdKeysOnlyTests {
    typealias Backing = EtcdTestBacking

    /// A backend over a fresh config holding the foreign keys `/db/password` and `/b/x`.
    static func backend(_ backing: Backing) async throws -> (EtcdBackend, EtcdKVService, cleanUp: () -> Void) {
        let (store, backend, service, cleanUp) = try await backing.service()
        _ = try await store.set(try Key("/db/password"), to: Data("hunter2".utf8), in: backend.config)
        _ = try await store.set(try Key("/b/x"), to: Data("foreign".utf8), in: backend.config)
        return (backend, service, cleanUp)
    }

    static let context = ServerContext(descriptor: Etcdserverpb_KV.Method.Txn.descriptor, remotePeer: "test", localPeer: "test", cancellation: ServerContext.RPCCancellationHandle())

    static func compare(_ result: Etcdserverpb_Compare.CompareResult, value: String) -> Etcdserverpb_Compare {
        var compare = Etcdserverpb_Compare()
        compare.key = Data("db".utf8)
        compare.rangeEnd = Data("dc".utf8)
        compare.target = .value
        compare.result = result
        compare.value = Data(value.utf8)
        return compare
    }

    @Test("LESS and GREATER compares over a range holding only a foreign key answer the same for every probe", arguments: Backing.allCases)
    func compareProbes(_ backing: Backing) async throws {
        let (_, service, cleanUp) = try await Self.backend(backing)
        defer { cleanUp() }
        var answers: Set<Bool> = []
        for probe in ["", "h", "hunter2", "hunter3", "i", "\u{7F}"] {
            for result in [Etcdserverpb_Compare.CompareResult.less, .greater, .equal, .notEqual] {
                var request = Etcdserverpb_TxnRequest()
                request.compare = [Self.compare(result, value: probe)]
                answers.insert(try await service.txn(request: request, context: Self.context).succeeded)
            }
        }
        // As over an empty range: a value compare on no key fails, whatever the probe.
        #expect(answers == [false])
    }

    @Test("a range, a count, a txn range and a delete over [a, e) see the etcd key and leave the foreign one", arguments: Backing.allCases)
    func rangeAndDelete(_ backing: Backing) async throws {
        let (backend, service, cleanUp) = try await Self.backend(backing)
        defer { cleanUp() }
        _ = try await backend.transact(Transaction(success: [.put(try EtcdKeys.key(Array("c".utf8)), Data("etcd".utf8))]))
        var range = Etcdserverpb_RangeRequest()
        range.key = Data("a".utf8)
        range.rangeEnd = Data("e".utf8)
        let read = try await service.range(request: range, context: Self.context)
        #expect(read.kvs.map { String(decoding: $0.key, as: UTF8.self) } == ["c"])
        #expect(read.count == 1)

        var inner = Etcdserverpb_RequestOp()
        inner.requestRange = range
        var txn = Etcdserverpb_TxnRequest()
        txn.success = [inner]
        let txnRead = try await service.txn(request: txn, context: Self.context)
        #expect(txnRead.responses.first?.responseRange.kvs.count == 1)

        var delete = Etcdserverpb_DeleteRangeRequest()
        delete.key = Data("a".utf8)
        delete.rangeEnd = Data("e".utf8)
        delete.prevKv = true
        let deleted = try await service.deleteRange(request: delete, context: Self.context)
        #expect(deleted.deleted == 1)
        #expect(deleted.prevKvs.map { String(decoding: $0.key, as: UTF8.self) } == ["c"])

        var everything = Etcdserverpb_DeleteRangeRequest()
        everything.key = Data([0])
        everything.rangeEnd = Data([0])
        #expect(try await service.deleteRange(request: everything, context: Self.context).deleted == 0)
        #expect(try await backend.store.get(try Key("/b/x"), in: backend.config)?.value == Data("foreign".utf8))
        #expect(try await backend.store.get(try Key("/db/password"), in: backend.config)?.value == Data("hunter2".utf8))
    }

    @Test("a range over 8 MiB ends within one answer with more and the whole count; a txn over it is refused and changes nothing", arguments: Backing.allCases)
    func answerBudget(_ backing: Backing) async throws {
        let (backend, service, cleanUp) = try await Self.backend(backing)
        defer { cleanUp() }
        let value = Data(repeating: 0x76, count: 256 << 10)
        for index in 0..<32 {
            _ = try await backend.transact(Transaction(success: [.put(try EtcdKeys.key(Array(String(format: "big/%02d", index).utf8)), value)]))
        }
        var range = Etcdserverpb_RangeRequest()
        range.key = Data("big/".utf8)
        range.rangeEnd = Data("big0".utf8)
        let read = try await service.range(request: range, context: Self.context)
        #expect(read.more)
        #expect(read.count == 32)
        #expect(read.kvs.count == 15)
        let encoded: [UInt8] = try read.serializedBytes()
        #expect(encoded.count <= GRPCConnection.maxMessageBytes)

        // At past revisions too: the keys up to the live read's last, with later changes
        // undone, and the count as it was then.
        _ = try await backend.transact(Transaction(success: [.delete(try EtcdKeys.key(Array("big/00".utf8)))]))
        _ = try await backend.transact(Transaction(success: [.put(try EtcdKeys.key(Array("big/40".utf8)), value)]))
        var past = range
        past.revision = 35
        let all = try await service.range(request: past, context: Self.context)
        #expect(all.kvs.first?.key == Data("big/00".utf8))
        #expect(all.kvs.count == 15 && all.more && all.count == 32)
        past.revision = 11
        let early = try await service.range(request: past, context: Self.context)
        #expect(early.kvs.map { String(decoding: $0.key, as: UTF8.self) } == (0..<8).map { String(format: "big/%02d", $0) })
        #expect(early.count == 8 && !early.more)

        range.keysOnly = true
        let keys = try await service.range(request: range, context: Self.context)
        #expect(keys.kvs.count == 32 && !keys.more)

        range.keysOnly = false
        range.sortOrder = .descend
        range.sortTarget = .mod
        await #expect(throws: RPCError.self) { try await service.range(request: range, context: Self.context) }

        var whole = Etcdserverpb_RequestOp()
        whole.requestRange.key = Data([0])
        whole.requestRange.rangeEnd = Data([0])
        var put = Etcdserverpb_RequestOp()
        put.requestPut.key = Data("written".utf8)
        var txn = Etcdserverpb_TxnRequest()
        txn.success = [put] + Array(repeating: whole, count: 127)
        let before = try await backend.currentRevision()
        do {
            _ = try await service.txn(request: txn, context: Self.context)
            Issue.record("a txn answering 1 GiB was served")
        } catch let error as RPCError {
            #expect(error.code == .resourceExhausted)
            #expect(error.message.hasPrefix("grpc: trying to send message larger than max"))
        }
        #expect(try await backend.currentRevision() == before)
    }

    @Test("a Txn's counts are checked on the wire, before decoding: too many compares or ops are refused, a nested txn passes")
    func txnShape() throws {
        let compares = Array([[UInt8]](repeating: [0x0A, 0x00], count: 200).joined())
        #expect(throws: RPCError.self) { try EtcdTxnShape.check(compares) }
        do {
            try EtcdTxnShape.check(compares)
        } catch let error as RPCError {
            #expect(error.code == .invalidArgument)
            #expect(error.message == "etcdserver: too many operations in txn request")
        }
        var allowed = Etcdserverpb_TxnRequest()
        allowed.compare = Array(repeating: Etcdserverpb_Compare(), count: 128)
        allowed.success = Array(repeating: Etcdserverpb_RequestOp(), count: 128)
        let allowedBytes: [UInt8] = try allowed.serializedBytes()
        try EtcdTxnShape.check(allowedBytes)
        var nested = Etcdserverpb_TxnRequest()
        var op = Etcdserverpb_RequestOp()
        op.requestTxn = Etcdserverpb_TxnRequest()
        nested.failure = [op]
        let nestedBytes: [UInt8] = try nested.serializedBytes()
        try EtcdTxnShape.check(nestedBytes)
        // Bytes that are no message are the decoder's to refuse.
        try EtcdTxnShape.check([0xFF, 0xFF, 0xFF])
    }

    @Test("leases stop at the cap with RESOURCE_EXHAUSTED; TTLs of 0 and -1 get etcd's minimum, past its maximum are refused")
    func leaseCap() async throws {
        let backend = EtcdBackend(store: MemoryStore(), config: try ConfigName("etcd"))
        try await backend.prepare()
        let leases = EtcdLeases(backend: backend)
        #expect(try await leases.grant(id: 0, ttl: 0).ttl == EtcdLeases.minTTL)
        #expect(try await leases.grant(id: 0, ttl: -1).ttl == EtcdLeases.minTTL)
        await #expect(throws: EtcdError.leaseTTLTooLarge) { try await leases.grant(id: 0, ttl: .max) }
        for _ in 2..<EtcdLeases.maxLeases { _ = try await leases.grant(id: 0, ttl: 60) }
        await #expect(throws: EtcdError.tooManyLeases) { try await leases.grant(id: 0, ttl: 60) }
        #expect(RPCError(etcd: EtcdError.tooManyLeases).code == .resourceExhausted)
        try await leases.revoke(try #require(await leases.ids().first))
        _ = try await leases.grant(id: 0, ttl: 60)
    }

    @Test("a revision's events past one answer go out in runs within it: 32 deletes of 256 KiB values with prev_kv in 5 responses")
    func watchFragments() throws {
        let value = Data(repeating: 0x76, count: 256 << 10)
        let events = try (0..<32).map { index in
            let key = try EtcdKeys.key(Array("big/\(index)".utf8))
            let item = Item(key: key, value: value, version: 1, createRevision: 1, modRevision: 1, modifiedAt: Date(), expiresAt: nil)
            return Event(kind: .delete, revision: 2, key: key, at: Date(), item: nil, prevItem: item)
        }
        let runs = EtcdWatchService.fragments(events, prevKv: true)
        #expect(runs.map(\.count) == [7, 7, 7, 7, 4])
        #expect(runs.flatMap { $0 } == events)
        #expect(EtcdWatchService.fragments(Array(events.prefix(3)), prevKv: false).count == 1)
    }

    @Test("a lease with more keys than one transaction compares is revoked whole")
    func leaseWithManyKeys() async throws {
        let backend = EtcdBackend(store: MemoryStore(), config: try ConfigName("etcd"))
        try await backend.prepare()
        let leases = EtcdLeases(backend: backend)
        let (id, _) = try await leases.grant(id: 0, ttl: 60)
        let tag = try await leases.attachment(id)
        for index in 0..<300 {
            let key = try EtcdKeys.key(Array("l\(index)".utf8))
            _ = try await backend.transact(Transaction(success: [.put(key, Data("v".utf8), contentType: tag)]))
        }
        try await leases.revoke(id)
        let (items, _, _) = try await backend.liveItems(key: [0], rangeEnd: [0], budget: EtcdAnswer.budget(keysOnly: true, past: .cut))
        #expect(items.isEmpty)
    }
}
