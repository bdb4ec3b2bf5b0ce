@testable import DiscfgEtcd
import DiscfgNetwork
import Foundation
import GRPCCore
import SwiftProtobuf
import Testing

/// The JSON gateway's messages: a request read straight into its message, the method's
/// handler called with it, and the answer written once, its headers' revisions always
/// there (0 included, and a transaction's nested ones) and otherwise as protobuf writes.
@Suite("etcd API: the JSON gateway's messages")
struct GatewayJSONTests {
    static func header(_ revision: Int64) -> Etcdserverpb_ResponseHeader {
        var header = Etcdserverpb_ResponseHeader()
        header.clusterID = 14_841_639_068_965_178_418
        header.memberID = 10_276_657_743_932_975_437
        header.revision = revision
        header.raftTerm = 2
        return header
    }

    static func keyValue(_ key: String, _ value: String, revision: Int64) -> Mvccpb_KeyValue {
        var kv = Mvccpb_KeyValue()
        kv.key = Data(key.utf8)
        kv.value = Data(value.utf8)
        kv.createRevision = revision
        kv.modRevision = revision
        kv.version = 1
        return kv
    }

    /// A transaction's answer at `revision`: a put's, a range's and a nested delete's.
    static func txn(_ revision: Int64) -> Etcdserverpb_TxnResponse {
        var response = Etcdserverpb_TxnResponse()
        response.header = header(revision)
        response.succeeded = true
        var nested = Etcdserverpb_ResponseHeader()
        nested.revision = revision
        var put = Etcdserverpb_PutResponse()
        put.header = nested
        var range = Etcdserverpb_RangeResponse()
        range.header = nested
        range.kvs = [keyValue("a", "1", revision: revision)]
        range.count = 1
        var deleted = Etcdserverpb_DeleteRangeResponse()
        deleted.header = nested
        var inner = Etcdserverpb_TxnResponse()
        inner.header = nested
        inner.responses = [Etcdserverpb_ResponseOp.with { $0.responseDeleteRange = deleted }]
        response.responses = [
            Etcdserverpb_ResponseOp.with { $0.responsePut = put }, Etcdserverpb_ResponseOp.with { $0.responseRange = range },
            Etcdserverpb_ResponseOp.with { $0.responseTxn = inner }, Etcdserverpb_ResponseOp(),
        ]
        return response
    }

    @Test("at a revision past 0 an answer is protobuf's own JSON, byte for byte, nested headers included")
    func sameAsProtobuf() throws {
        var range = Etcdserverpb_RangeResponse()
        range.header = Self.header(7)
        range.kvs = [Self.keyValue("k", "v", revision: 7), Self.keyValue("l", "", revision: 3)]
        range.more = true
        range.count = 2
        var watch = Etcdserverpb_WatchResponse()
        watch.header = Self.header(9)
        watch.watchID = 3
        watch.events = [Mvccpb_Event.with { $0.type = .delete; $0.kv = Self.keyValue("k", "", revision: 9) }]
        var grant = Etcdserverpb_LeaseGrantResponse()
        grant.header = Self.header(1)
        grant.id = 42
        grant.ttl = 60
        var bare = Etcdserverpb_PutResponse()
        bare.prevKv = Self.keyValue("k", "v", revision: 0)
        let answers: [any EtcdHeadedResponse] = [range, watch, grant, Self.txn(12), bare, Etcdserverpb_StatusResponse()]
        for answer in answers {
            #expect(try answer.gatewayJSON() == answer.jsonString(options: EtcdGateway.encoding))
        }
    }

    @Test("at revision 0 the header says \"revision\":\"0\" in its place, and an empty header holds only it")
    func revisionZero() throws {
        var range = Etcdserverpb_RangeResponse()
        range.header = Self.header(0)
        #expect(try range.gatewayJSON() == #"{"header":{"cluster_id":"14841639068965178418","member_id":"10276657743932975437","revision":"0","raft_term":"2"}}"#)
        range.count = 1
        range.kvs = [Self.keyValue("a", "1", revision: 0)]
        let json = try range.gatewayJSON()
        #expect(json.hasPrefix(#"{"header":{"cluster_id":"14841639068965178418","member_id":"10276657743932975437","revision":"0","raft_term":"2"},"kvs":[{"#))
        #expect(json.hasSuffix(#"}],"count":"1"}"#))
        var put = Etcdserverpb_PutResponse()
        put.header = Etcdserverpb_ResponseHeader()
        #expect(try put.gatewayJSON() == #"{"header":{"revision":"0"}}"#)
        // Read back, it is the same answer.
        #expect(try Etcdserverpb_RangeResponse(jsonString: json) == range)
    }

    @Test("a transaction at revision 0: its header and every operation's answer say it; a nested transaction's empty header stays empty, as etcd's")
    func nestedTxnHeaders() throws {
        let json = try Self.txn(0).gatewayJSON()
        let top = #"{"header":{"cluster_id":"14841639068965178418","member_id":"10276657743932975437","revision":"0","raft_term":"2"},"succeeded":true,"#
        #expect(json.hasPrefix(top + #""responses":[{"response_put":{"header":{"revision":"0"}}},{"response_range":{"header":{"revision":"0"},"kvs":[{"#))
        #expect(json.hasSuffix(
            #"}],"count":"1"}},{"response_txn":{"header":{},"responses":[{"response_delete_range":{"header":{"revision":"0"}}}]}},{}]}"#
        ))
        #expect(try Etcdserverpb_TxnResponse(jsonString: json) == Self.txn(0))
        var failed = Etcdserverpb_TxnResponse()
        failed.header = Etcdserverpb_ResponseHeader()
        #expect(try failed.gatewayJSON() == #"{"header":{"revision":"0"}}"#)
    }

    /// A gateway over a Range that answers at revision 0 with the request's limit as its
    /// count, and a Watch that answers each request with one created response.
    static func gateway() -> EtcdGateway {
        let range = GRPCMethod.unary(Etcdserverpb_KV.Method.Range.descriptor, .range) { (request: Etcdserverpb_RangeRequest, _) -> Etcdserverpb_RangeResponse in
            var response = Etcdserverpb_RangeResponse()
            response.header = Etcdserverpb_ResponseHeader()
            response.count = request.limit
            return response
        }
        let watch = GRPCMethod.bidirectional(Etcdserverpb_Watch.Method.Watch.descriptor, .watch) {
            (requests: RPCAsyncSequence<Etcdserverpb_WatchRequest, any Error>, responses: RPCWriter<Etcdserverpb_WatchResponse>, _) in
            for try await request in requests {
                var response = Etcdserverpb_WatchResponse()
                response.header = Etcdserverpb_ResponseHeader()
                response.watchID = request.createRequest.watchID
                response.created = true
                try await responses.write(response)
            }
        }
        let methods = Dictionary(uniqueKeysWithValues: [range, watch].map { (EtcdMethodTable.path($0.descriptor), $0) })
        return EtcdGateway(methods: methods, version: "3.5.0", browserGuard: BrowserGuard(boundHost: "127.0.0.1"), audit: EtcdAudit(trail: nil, config: ""))
    }

    static func context(_ descriptor: MethodDescriptor) -> ServerContext {
        ServerContext(descriptor: descriptor, remotePeer: "test", localPeer: "test", cancellation: ServerContext.RPCCancellationHandle())
    }

    @Test("a unary route reads its JSON into the request, calls the method's handler and writes its answer; JSON that is not the request is refused")
    func unaryRoute() async throws {
        let gateway = Self.gateway()
        guard case .unary(let read) = try #require(gateway.routes["/v3/kv/range"]).kind else {
            Issue.record("range is not unary")
            return
        }
        let context = Self.context(Etcdserverpb_KV.Method.Range.descriptor)
        #expect(try await read(Data(#"{"key":"YQ==","limit":"5","unknown":1}"#.utf8))(context) == #"{"header":{"revision":"0"},"count":"5"}"#)
        #expect(try await read(Data(" null ".utf8))(context) == #"{"header":{"revision":"0"}}"#)
        let refusal = #expect(throws: RPCError.self) { try read(Data(#"{"limit":"x"}"#.utf8)) }
        #expect(refusal?.code == .invalidArgument && refusal?.message.contains("etcdserverpb.RangeRequest") == true)
        #expect(gateway.routes["/v3beta/kv/range"] != nil && gateway.routes["/v3/kv/put"] == nil)
    }

    @Test("a streaming route reads each JSON request of the body into a message and writes each response as one JSON answer")
    func streamingRoute() async throws {
        guard case .streaming(let read) = try #require(Self.gateway().routes["/v3/watch"]).kind else {
            Issue.record("watch is not streaming")
            return
        }
        let body = [#"{"create_request":{"key":"YQ==","watch_id":"1"}}"#, #"{"create_request":{"key":"Yg==","watch_id":"2"}}"#].map { Data($0.utf8) }
        let call = try read(body)
        let (lines, sent) = AsyncStream<String>.makeStream()
        let running = Task { try await call.run({ _ = sent.yield($0) }, Self.context(Etcdserverpb_Watch.Method.Watch.descriptor)) }
        var answers: [String] = []
        for await line in lines {
            answers.append(line)
            if answers.count == 2 { break }
        }
        #expect(answers == [#"{"header":{"revision":"0"},"watch_id":"1","created":true}"#, #"{"header":{"revision":"0"},"watch_id":"2","created":true}"#])
        // A watch's requests go on until the client goes away.
        call.end(nil)
        try await running.value
    }
}

extension GatewayJSONTests {
    @Test(
        "a guarded stream's handler over messages, which the gateway calls, asks the gate again as its bytes do: a stream opened before tokens were required ends",
        .timeLimit(.minutes(1))
    )
    func streamHandlerRechecked() async throws {
        let fixture = try EtcdAccessTests.Store()
        defer { fixture.cleanUp() }
        let gate = EtcdAccessGate(.tokensOnceIssued(fixture.store))
        await gate.read()
        let echo = GRPCMethod.bidirectional(Etcdserverpb_Watch.Method.Watch.descriptor, .watch) {
            (requests: RPCAsyncSequence<Etcdserverpb_WatchRequest, any Error>, responses: RPCWriter<Etcdserverpb_WatchResponse>, _) in
            for try await request in requests {
                var response = Etcdserverpb_WatchResponse()
                response.watchID = request.createRequest.watchID
                try await responses.write(response)
            }
        }
        let guarded = echo.guarded(by: gate)
        let handler = try #require(guarded.handler as? GRPCStreamingHandler<Etcdserverpb_WatchRequest, Etcdserverpb_WatchResponse>)
        let (requests, more) = AsyncThrowingStream<Etcdserverpb_WatchRequest, any Error>.makeStream()
        let (written, wrote) = AsyncStream<Int64>.makeStream()
        let writer = SendingWriter<Etcdserverpb_WatchResponse> { wrote.yield($0.watchID) }
        let running = Task {
            try await handler.body(RPCAsyncSequence(wrapping: requests), RPCWriter(wrapping: writer), Self.context(Etcdserverpb_Watch.Method.Watch.descriptor))
        }
        var answers = written.makeAsyncIterator()
        more.yield(Etcdserverpb_WatchRequest.with { $0.createRequest.watchID = 1 })
        #expect(await answers.next() == 1, "admitted while no token exists")
        _ = try await fixture.token(.read)
        await gate.read()
        more.yield(Etcdserverpb_WatchRequest.with { $0.createRequest.watchID = 2 })
        let ended = await running.result
        #expect(throws: EtcdAuthError.userEmpty) { try ended.get() }
    }
}
