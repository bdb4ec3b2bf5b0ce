import DiscfgNetwork
import Foundation
import GRPCCore
import SwiftProtobuf

/// etcd's HTTP/JSON gateway (the grpc-gateway etcd serves beside gRPC on its client
/// port) over the server's gRPC methods: each route names a method of the same table
/// gRPC calls (``EtcdMethodTable``) and calls its handler over decoded messages
/// (``GRPCMethod/handler``), so its action, admission, key isolation, authorization,
/// audit and failure policy are a gRPC call's; the gateway only reads JSON into the
/// request message and writes the response message as JSON, as etcd's gateway writes
/// it (proto field names, 64-bit integers as strings, bytes in base64, zero values left
/// out, enums by name, a header's revision always). Web pages may not use it: it asks
/// the REST API's browser guards (``DiscfgNetwork/BrowserGuard``) about every request,
/// and its own refusals have their audit lines as calls do.
///
/// ```swift
/// let gateway = EtcdGateway(methods: methods, version: "3.5.0", browserGuard: BrowserGuard(boundHost: "127.0.0.1"), audit: audit)
/// let route = gateway.routes["/v3/kv/range"]
/// ```
struct EtcdGateway: Sendable {
    /// A unary route's call, its request read: runs the method, answers its JSON.
    typealias UnaryCall = @Sendable (ServerContext) async throws -> String

    /// How one path is served.
    struct Route: Sendable {
        enum Kind: Sendable {
            /// One JSON request in, one JSON answer out: the request read (throwing
            /// the gateway's refusal of it) as a call of the method.
            case unary(@Sendable (_ json: Data) throws -> UnaryCall)
            /// JSON requests in, one `{"result":…}` line per response out: the
            /// requests read (or refused) as a call of the method.
            case streaming(@Sendable (_ json: [Data]) throws -> StreamingCall)
        }

        let method: GRPCMethod
        let kind: Kind
    }

    /// A streaming route's call, its requests read.
    struct StreamingCall: Sendable {
        /// Runs the method over the requests, handing each response's JSON to `send`,
        /// which returns once it left for the client.
        let run: @Sendable (_ send: @escaping @Sendable (String) async throws -> Void, ServerContext) async throws -> Void
        /// Ends the requests: nil when the answer ended, the error when the client went
        /// away. LeaseKeepAlive's end with the body already; a watch's run until then.
        let end: @Sendable ((any Error)?) -> Void
    }

    /// The routes by path, aliases included.
    let routes: [String: Route]
    /// `GET /version`'s answer.
    let versionBody: String
    /// The Host and Origin rules every HTTP face of the server applies.
    let browserGuard: BrowserGuard
    /// Where the gateway's own refusals are noted, beside its methods' calls.
    let audit: EtcdAudit
    /// Whether the member can serve, for `GET /health` and `/readyz`: nil when it can,
    /// else why not (its store did not answer).
    let health: @Sendable () async -> String?
    /// `GET /metrics`'s answer, Prometheus' text (``EtcdMetrics``).
    let metrics: @Sendable () async -> String

    /// The gateway over `methods` (by gRPC path), reporting etcd version `version`,
    /// refusing what `browserGuard` refuses and noting its refusals in `audit`. A route
    /// whose method's handler takes other messages than the route reads stops the
    /// server as it starts, as a method table that differs from the generated code does.
    init(
        methods: [String: GRPCMethod], version: String, browserGuard: BrowserGuard, audit: EtcdAudit,
        health: @escaping @Sendable () async -> String? = { nil }, metrics: @escaping @Sendable () async -> String = { "" }
    ) {
        self.browserGuard = browserGuard
        self.audit = audit
        self.health = health
        self.metrics = metrics
        typealias P = Etcdserverpb_KV.Method
        typealias L = Etcdserverpb_Lease.Method
        var routes: [String: Route] = [:]
        func add<Request: SwiftProtobuf.Message, Response: EtcdHeadedResponse>(
            _ paths: [String], _ descriptor: MethodDescriptor, _: Request.Type, _: Response.Type, endsWithBody: Bool = true,
            shape: @escaping @Sendable (Data) throws -> Void = { _ in }
        ) {
            let path = EtcdMethodTable.path(descriptor)
            guard let method = methods[path] else { return }
            let kind: Route.Kind
            switch method.handler {
            case let handler as GRPCUnaryHandler<Request, Response>:
                kind = .unary { json in
                    try shape(json)
                    let request = try Self.decode(Request.self, json)
                    return { context in try await handler.body(request, context).gatewayJSON() }
                }
            case let handler as GRPCStreamingHandler<Request, Response>:
                kind = .streaming { values in
                    Self.streamingCall(handler, try values.map { try Self.decode(Request.self, $0) }, endsWithBody: endsWithBody)
                }
            default:
                preconditionFailure("the gateway reads \(path) as \(Request.protoMessageName) to \(Response.protoMessageName), which its method does not take")
            }
            let route = Route(method: method, kind: kind)
            // etcd 3.4 serves /v3beta/ as /v3/ (clients of etcd 3.3 probe it).
            for path in paths {
                routes["/v3/" + path] = route
                routes["/v3beta/" + path] = route
            }
        }
        add(["kv/range"], P.Range.descriptor, Etcdserverpb_RangeRequest.self, Etcdserverpb_RangeResponse.self)
        add(["kv/put"], P.Put.descriptor, Etcdserverpb_PutRequest.self, Etcdserverpb_PutResponse.self)
        add(["kv/deleterange"], P.DeleteRange.descriptor, Etcdserverpb_DeleteRangeRequest.self, Etcdserverpb_DeleteRangeResponse.self)
        // A Txn's operations are counted before it is decoded, as its protobuf bytes are.
        add(["kv/txn"], P.Txn.descriptor, Etcdserverpb_TxnRequest.self, Etcdserverpb_TxnResponse.self, shape: { try EtcdTxnShape.checkJSON($0) })
        add(["kv/compaction"], P.Compact.descriptor, Etcdserverpb_CompactionRequest.self, Etcdserverpb_CompactionResponse.self)
        add(["watch"], Etcdserverpb_Watch.Method.Watch.descriptor, Etcdserverpb_WatchRequest.self, Etcdserverpb_WatchResponse.self, endsWithBody: false)
        add(["lease/grant"], L.LeaseGrant.descriptor, Etcdserverpb_LeaseGrantRequest.self, Etcdserverpb_LeaseGrantResponse.self)
        add(["lease/revoke", "kv/lease/revoke"], L.LeaseRevoke.descriptor, Etcdserverpb_LeaseRevokeRequest.self, Etcdserverpb_LeaseRevokeResponse.self)
        add(["lease/keepalive"], L.LeaseKeepAlive.descriptor, Etcdserverpb_LeaseKeepAliveRequest.self, Etcdserverpb_LeaseKeepAliveResponse.self)
        add(
            ["lease/timetolive", "kv/lease/timetolive"], L.LeaseTimeToLive.descriptor, Etcdserverpb_LeaseTimeToLiveRequest.self,
            Etcdserverpb_LeaseTimeToLiveResponse.self
        )
        add(["lease/leases", "kv/lease/leases"], L.LeaseLeases.descriptor, Etcdserverpb_LeaseLeasesRequest.self, Etcdserverpb_LeaseLeasesResponse.self)
        add(["cluster/member/list"], Etcdserverpb_Cluster.Method.MemberList.descriptor, Etcdserverpb_MemberListRequest.self, Etcdserverpb_MemberListResponse.self)
        typealias M = Etcdserverpb_Maintenance.Method
        add(["maintenance/status"], M.Status.descriptor, Etcdserverpb_StatusRequest.self, Etcdserverpb_StatusResponse.self)
        add(["maintenance/alarm"], M.Alarm.descriptor, Etcdserverpb_AlarmRequest.self, Etcdserverpb_AlarmResponse.self)
        add(["maintenance/defragment"], M.Defragment.descriptor, Etcdserverpb_DefragmentRequest.self, Etcdserverpb_DefragmentResponse.self)
        add(["maintenance/hash"], M.Hash.descriptor, Etcdserverpb_HashRequest.self, Etcdserverpb_HashResponse.self)
        add(["maintenance/transfer-leadership"], M.MoveLeader.descriptor, Etcdserverpb_MoveLeaderRequest.self, Etcdserverpb_MoveLeaderResponse.self)
        add(["auth/authenticate"], Etcdserverpb_Auth.Method.Authenticate.descriptor, Etcdserverpb_AuthenticateRequest.self, Etcdserverpb_AuthenticateResponse.self)
        self.routes = routes
        // A member reports the cluster's version as its major and minor, as etcd does.
        let cluster = version.split(separator: ".").prefix(2).joined(separator: ".") + ".0"
        versionBody = #"{"etcdserver":"\#(version)","etcdcluster":"\#(cluster)"}"#
    }

    /// A streaming call of `handler` over `requests`, which end with the body when
    /// `endsWithBody` (LeaseKeepAlive) and otherwise when the client goes away (Watch).
    private static func streamingCall<Request: SwiftProtobuf.Message, Response: EtcdHeadedResponse>(
        _ handler: GRPCStreamingHandler<Request, Response>, _ requests: [Request], endsWithBody: Bool
    ) -> StreamingCall {
        let (queued, continuation) = AsyncThrowingStream<Request, any Error>.makeStream()
        for request in requests { continuation.yield(request) }
        if endsWithBody { continuation.finish() }
        return StreamingCall(
            run: { send, context in
                let writer = SendingWriter<Response> { response in try await send(try response.gatewayJSON()) }
                try await handler.body(RPCAsyncSequence(wrapping: queued), RPCWriter(wrapping: writer), context)
            },
            end: { error in
                if let error { continuation.finish(throwing: error) } else { continuation.finish() }
            }
        )
    }

    /// The HTTP status etcd's gateway answers a gRPC code with (grpc-gateway's mapping).
    static func httpStatus(_ code: Int) -> Int {
        switch code {
        case 0: 200
        case 1: 408  // CANCELLED
        case 3, 11: 400  // INVALID_ARGUMENT, OUT_OF_RANGE
        case 4: 504  // DEADLINE_EXCEEDED
        case 5: 404  // NOT_FOUND
        case 6, 10: 409  // ALREADY_EXISTS, ABORTED
        case 7: 403  // PERMISSION_DENIED
        case 8: 429  // RESOURCE_EXHAUSTED
        case 9: 412  // FAILED_PRECONDITION
        case 12: 501  // UNIMPLEMENTED
        case 14: 503  // UNAVAILABLE
        case 16: 401  // UNAUTHENTICATED
        default: 500  // UNKNOWN, INTERNAL, DATA_LOSS
        }
    }

    /// The error body etcd's gateway writes: `{"error":…,"message":…,"code":…}`.
    static func errorBody(code: Int, message: String) -> String {
        let quoted = quote(message)
        return #"{"error":\#(quoted),"message":\#(quoted),"code":\#(code)}"#
    }

    /// A failure in a stream whose answer already began, as one line of it.
    static func streamErrorLine(code: Int, message: String) -> String {
        let status = httpStatus(code)
        return #"{"error":{"grpc_code":\#(code),"http_code":\#(status),"message":\#(quote(message)),"http_status":\#(quote(reason(status)))}}"#
    }

    /// `text` as a JSON string.
    static func quote(_ text: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])) ?? Data("[\"\"]".utf8)
        return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
    }

    /// The reason phrase of an HTTP status the gateway answers.
    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 412: "Precondition Failed"
        case 413: "Payload Too Large"
        case 429: "Too Many Requests"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Internal Server Error"
        }
    }
}
