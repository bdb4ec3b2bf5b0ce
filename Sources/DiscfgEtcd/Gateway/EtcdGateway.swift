import DiscfgNetwork
import Foundation
import GRPCCore
import SwiftProtobuf

/// etcd's HTTP/JSON gateway (the grpc-gateway etcd serves beside gRPC on its client
/// port) over the server's gRPC methods: each route names a method of the same table
/// gRPC calls (``EtcdMethodTable``), so its key isolation, limits, authorization, audit
/// and failure policy are the same; the gateway only turns JSON into the request's
/// protobuf bytes and the answer's bytes into JSON, as etcd's gateway writes it (proto
/// field names, 64-bit integers as strings, bytes in base64, zero values left out,
/// enums by name). Web pages may not use it: it asks the REST API's browser guards
/// (``DiscfgNetwork/BrowserGuard``) about every request, and its own refusals have their
/// audit lines as calls do.
///
/// ```swift
/// let gateway = EtcdGateway(methods: methods, version: "3.5.0", browserGuard: BrowserGuard(boundHost: "127.0.0.1"), audit: audit)
/// let route = gateway.routes["/v3/kv/range"]
/// ```
struct EtcdGateway: Sendable {
    /// How one path is served.
    struct Route: Sendable {
        enum Kind: Sendable {
            /// One JSON request in, one JSON answer out.
            case unary(@Sendable ([UInt8], ServerContext) async throws -> [UInt8])
            /// JSON requests in, one `{"result":…}` line per answer out. `endsWithBody`:
            /// the method is told the requests ended once the body did (LeaseKeepAlive);
            /// otherwise answers stream until the client goes away (Watch).
            case streaming(@Sendable (RPCAsyncSequence<[UInt8], any Error>, GRPCResponseWriter, ServerContext) async throws -> Void, endsWithBody: Bool)
        }

        let method: GRPCMethod
        let kind: Kind
        /// A JSON request (one of a streaming route's) as the method's protobuf bytes.
        let decode: @Sendable (Data) throws -> [UInt8]
        /// An answer's protobuf bytes as JSON.
        let encode: @Sendable ([UInt8]) throws -> String
    }

    /// The routes by path, aliases included.
    let routes: [String: Route]
    /// `GET /version`'s answer.
    let versionBody: String
    /// The Host and Origin rules every HTTP face of the server applies.
    let browserGuard: BrowserGuard
    /// Where the gateway's own refusals are noted, beside its methods' calls.
    let audit: EtcdAudit

    /// The gateway over `methods` (by gRPC path), reporting etcd version `version`,
    /// refusing what `browserGuard` refuses and noting its refusals in `audit`.
    init(methods: [String: GRPCMethod], version: String, browserGuard: BrowserGuard, audit: EtcdAudit) {
        self.browserGuard = browserGuard
        self.audit = audit
        typealias P = Etcdserverpb_KV.Method
        typealias L = Etcdserverpb_Lease.Method
        var routes: [String: Route] = [:]
        func add<Request: SwiftProtobuf.Message, Response: EtcdHeadedResponse>(
            _ paths: [String], _ descriptor: MethodDescriptor, _: Request.Type, _: Response.Type, endsWithBody: Bool = true,
            shape: @escaping @Sendable (Data) throws -> Void = { _ in }
        ) {
            guard let method = methods[EtcdMethodTable.path(descriptor)] else { return }
            let kind: Route.Kind = switch method.kind {
            case .unary(let body): .unary(body)
            case .bidirectional(let body): .streaming(body, endsWithBody: endsWithBody)
            }
            let route = Route(method: method, kind: kind, decode: { json in
                try shape(json)
                return try Self.decode(Request.self, json)
            }, encode: { bytes in
                try Self.json(Response(serializedBytes: bytes))
            })
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
        add(["maintenance/status"], Etcdserverpb_Maintenance.Method.Status.descriptor, Etcdserverpb_StatusRequest.self, Etcdserverpb_StatusResponse.self)
        add(["auth/authenticate"], Etcdserverpb_Auth.Method.Authenticate.descriptor, Etcdserverpb_AuthenticateRequest.self, Etcdserverpb_AuthenticateResponse.self)
        self.routes = routes
        // A member reports the cluster's version as its major and minor, as etcd does.
        let cluster = version.split(separator: ".").prefix(2).joined(separator: ".") + ".0"
        versionBody = #"{"etcdserver":"\#(version)","etcdcluster":"\#(cluster)"}"#
    }

    /// JSON as etcd's gateway writes it: the proto's own field names.
    static let encoding: JSONEncodingOptions = {
        var options = JSONEncodingOptions()
        options.preserveProtoFieldNames = true
        return options
    }()

    /// `response` in JSON as etcd's gateway writes it, its headers with their revision.
    ///
    /// etcd's revisions start at 1, so its gateway's headers always hold a `revision`,
    /// and clients read it unguarded (patroni: `result['header']['revision']`). A config's
    /// revisions start at 0, which protobuf's JSON leaves out: an answer at revision 0
    /// says `"revision":"0"` in its header and in its transaction's nested ones.
    static func json<Response: EtcdHeadedResponse>(_ response: Response) throws -> String {
        let json = try response.jsonString(options: encoding)
        guard response.hasHeader, response.header.revision == 0 else { return json }
        let header = try response.header.jsonString(options: encoding)
        let revision = #""revision":"0""#
        // The header's fields in their order: cluster_id, member_id, revision, raft_term.
        let spelled: String
        if let raftTerm = header.range(of: #""raft_term":"#) {
            spelled = header.replacingCharacters(in: raftTerm.lowerBound..<raftTerm.lowerBound, with: revision + ",")
        } else {
            spelled = header == "{}" ? "{\(revision)}" : String(header.dropLast()) + ",\(revision)}"
        }
        // The header is field 1, so it comes first; nested headers hold only a revision.
        let top = #"{"header":"#
        guard json.hasPrefix(top + header) else { return json }
        return (top + spelled + json.dropFirst(top.count + header.count))
            .replacingOccurrences(of: #""header":{}"#, with: #""header":{"# + revision + "}")
    }

    /// Unknown fields are ignored, as etcd's gateway ignores them.
    static let decoding: JSONDecodingOptions = {
        var options = JSONDecodingOptions()
        options.ignoreUnknownFields = true
        return options
    }()

    /// `json` as a `Request`'s protobuf bytes: an empty body or `null` is the empty
    /// request, as etcd's gateway reads them. Anything else that is not such a request
    /// in JSON is refused `INVALID_ARGUMENT`, naming the message.
    static func decode<Request: SwiftProtobuf.Message>(_: Request.Type, _ json: Data) throws(RPCError) -> [UInt8] {
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        let text = json.drop(while: blank).reversed().drop(while: blank)
        if text.isEmpty || text.elementsEqual("llun".utf8) { return [] }
        do {
            return try Request(jsonUTF8Bytes: json, options: decoding).serializedBytes()
        } catch {
            let detail = (error as? JSONDecodingError).map { " (\(Self.words($0)))" } ?? ""
            throw RPCError(code: .invalidArgument, message: "the request body is not a JSON \(Request.protoMessageName)\(detail)")
        }
    }

    /// What a JSON decoding failure was, in words.
    private static func words(_ error: JSONDecodingError) -> String {
        switch error {
        case .malformedString: "a malformed string"
        case .malformedNumber, .numberRange: "a number that is not valid for its field"
        case .malformedBool: "a malformed boolean"
        case .unquotedMapKey: "an unquoted object key"
        case .unrecognizedEnumValue: "an enum value the field does not name"
        case .truncated: "the JSON ends early"
        case .trailingGarbage: "bytes after the JSON value"
        case .messageDepthLimit: "objects nested too deep"
        default: "a field's value is not of its type, or the JSON is malformed"
        }
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

/// An etcd answer: each carries the member's header (its field 1).
protocol EtcdHeadedResponse: SwiftProtobuf.Message {
    var header: Etcdserverpb_ResponseHeader { get }
    var hasHeader: Bool { get }
}

extension Etcdserverpb_RangeResponse: EtcdHeadedResponse {}
extension Etcdserverpb_PutResponse: EtcdHeadedResponse {}
extension Etcdserverpb_DeleteRangeResponse: EtcdHeadedResponse {}
extension Etcdserverpb_TxnResponse: EtcdHeadedResponse {}
extension Etcdserverpb_CompactionResponse: EtcdHeadedResponse {}
extension Etcdserverpb_WatchResponse: EtcdHeadedResponse {}
extension Etcdserverpb_LeaseGrantResponse: EtcdHeadedResponse {}
extension Etcdserverpb_LeaseRevokeResponse: EtcdHeadedResponse {}
extension Etcdserverpb_LeaseKeepAliveResponse: EtcdHeadedResponse {}
extension Etcdserverpb_LeaseTimeToLiveResponse: EtcdHeadedResponse {}
extension Etcdserverpb_LeaseLeasesResponse: EtcdHeadedResponse {}
extension Etcdserverpb_MemberListResponse: EtcdHeadedResponse {}
extension Etcdserverpb_StatusResponse: EtcdHeadedResponse {}
extension Etcdserverpb_AuthenticateResponse: EtcdHeadedResponse {}
