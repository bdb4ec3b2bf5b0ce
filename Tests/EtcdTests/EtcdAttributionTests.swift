import DiscfgCore
@testable import DiscfgEtcd
import Foundation
import GRPCCore
import Testing

/// Changes through the etcd API are recorded with who made them — without etcd
/// authentication, the anonymous etcd client — though etcd's own answers have no place
/// for it.
@Suite("etcd API: who made a change")
struct EtcdAttributionTests {
    static func context(_ descriptor: MethodDescriptor) -> ServerContext {
        ServerContext(descriptor: descriptor, remotePeer: "test", localPeer: "test", cancellation: ServerContext.RPCCancellationHandle())
    }

    @Test("Put, Txn and DeleteRange record the anonymous etcd client as who made each change")
    func putTxnAndDeleteRecordTheCaller() async throws {
        let (store, backend, service, cleanUp) = try await EtcdTestBacking.memory.service()
        defer { cleanUp() }
        var put = Etcdserverpb_PutRequest()
        put.key = Data("a".utf8)
        put.value = Data("1".utf8)
        _ = try await service.put(request: put, context: Self.context(Etcdserverpb_KV.Method.Put.descriptor))
        var txn = Etcdserverpb_TxnRequest()
        var request = Etcdserverpb_RequestOp()
        var inner = Etcdserverpb_PutRequest()
        inner.key = Data("b".utf8)
        inner.value = Data("2".utf8)
        request.requestPut = inner
        txn.success = [request]
        _ = try await service.txn(request: txn, context: Self.context(Etcdserverpb_KV.Method.Txn.descriptor))
        var delete = Etcdserverpb_DeleteRangeRequest()
        delete.key = Data("a".utf8)
        _ = try await service.deleteRange(request: delete, context: Self.context(Etcdserverpb_KV.Method.DeleteRange.descriptor))

        // From revision 2: the config's first, where etcd starts, is discfg's own (`EtcdBackend.revisionOneKey`).
        let events = try await store.events(in: backend.config, scope: .prefix(.root), from: Revision(2), limit: 100).events
        #expect(events.map(\.kind) == [.put, .put, .delete])
        #expect(events.map(\.attribution) == Array(repeating: EtcdBackend.unauthenticated, count: 3))
    }
}
