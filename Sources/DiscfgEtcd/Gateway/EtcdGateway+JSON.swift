import Foundation
import GRPCCore
import SwiftProtobuf

/// The gateway's JSON: a request read straight into its message, an answer written
/// from its message once, as etcd's gateway reads and writes them.
extension EtcdGateway {
    /// JSON as etcd's gateway writes it: the proto's own field names.
    static let encoding: JSONEncodingOptions = {
        var options = JSONEncodingOptions()
        options.preserveProtoFieldNames = true
        return options
    }()

    /// Unknown fields are ignored, as etcd's gateway ignores them.
    static let decoding: JSONDecodingOptions = {
        var options = JSONDecodingOptions()
        options.ignoreUnknownFields = true
        return options
    }()

    /// `json` as a `Request`: an empty body or `null` is the empty request, as etcd's
    /// gateway reads them. Anything else that is not such a request in JSON is refused
    /// `INVALID_ARGUMENT`, naming the message.
    static func decode<Request: SwiftProtobuf.Message>(_: Request.Type, _ json: Data) throws(RPCError) -> Request {
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        let text = json.drop(while: blank).reversed().drop(while: blank)
        if text.isEmpty || text.elementsEqual("llun".utf8) { return Request() }
        do {
            return try Request(jsonUTF8Bytes: json, options: decoding)
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

    /// A JSON object of `members` (each `"name":value`, in order), leaving out empty ones.
    static func object(_ members: [String]) -> String {
        "{" + members.filter { !$0.isEmpty }.joined(separator: ",") + "}"
    }

    /// The members of `message` in protobuf's JSON, as one `"a":…,"b":…` run (empty for
    /// none): an object's text without its braces.
    static func members(of message: some SwiftProtobuf.Message) throws -> String {
        String(try message.jsonString(options: encoding).dropFirst().dropLast())
    }
}

/// An etcd answer: each carries the member's header (its field 1), which the gateway
/// writes itself, since protobuf's JSON leaves a zero revision out.
protocol EtcdHeadedResponse: SwiftProtobuf.Message {
    var header: Etcdserverpb_ResponseHeader { get set }
    var hasHeader: Bool { get }
    mutating func clearHeader()

    /// This answer in JSON as etcd's gateway writes it, its headers with their revision.
    ///
    /// etcd's revisions start at 1, so its gateway's headers always hold a `revision`,
    /// and clients read it unguarded (patroni: `result['header']['revision']`). A config's
    /// revisions start at 0, which protobuf's JSON leaves out: an answer at revision 0
    /// says `"revision":"0"` in its header, and a transaction's in its nested ones.
    func gatewayJSON() throws -> String
}

extension EtcdHeadedResponse {
    /// The header (field 1, first as protobuf's JSON orders fields), then the rest of the
    /// answer in protobuf's JSON.
    func gatewayJSON() throws -> String {
        guard hasHeader else { return try jsonString(options: EtcdGateway.encoding) }
        var rest = self
        rest.clearHeader()
        return EtcdGateway.object([header.gatewayMember, try EtcdGateway.members(of: rest)])
    }
}

extension Etcdserverpb_ResponseHeader {
    /// `"header":{…}` as etcd's gateway writes it: protobuf's JSON (proto names, 64-bit
    /// integers as strings, zeros left out), but the revision written even when 0.
    var gatewayMember: String {
        var fields: [String] = []
        if clusterID != 0 { fields.append(#""cluster_id":"\#(clusterID)""#) }
        if memberID != 0 { fields.append(#""member_id":"\#(memberID)""#) }
        fields.append(#""revision":"\#(revision)""#)
        if raftTerm != 0 { fields.append(#""raft_term":"\#(raftTerm)""#) }
        return #""header":"# + EtcdGateway.object(fields)
    }
}

extension Etcdserverpb_TxnResponse: EtcdHeadedResponse {
    /// Its header, `succeeded`, then `responses`, each operation's answer with its own
    /// header (fields 1, 2, 3, in protobuf's order).
    func gatewayJSON() throws -> String {
        var rest = self
        rest.clearHeader()
        rest.responses = []
        let operations = responses.isEmpty ? "" : #""responses":["# + (try responses.map { try $0.gatewayJSON() }).joined(separator: ",") + "]"
        return EtcdGateway.object([hasHeader ? header.gatewayMember : "", try EtcdGateway.members(of: rest), operations])
    }
}

extension Etcdserverpb_ResponseOp {
    /// The operation's answer under its field's name, written as its own answer is.
    func gatewayJSON() throws -> String {
        switch response {
        case .responseRange(let answer): #"{"response_range":"# + (try answer.gatewayJSON()) + "}"
        case .responsePut(let answer): #"{"response_put":"# + (try answer.gatewayJSON()) + "}"
        case .responseDeleteRange(let answer): #"{"response_delete_range":"# + (try answer.gatewayJSON()) + "}"
        case .responseTxn(let answer): #"{"response_txn":"# + (try answer.gatewayJSON()) + "}"
        case nil: "{}"
        }
    }
}

extension Etcdserverpb_RangeResponse: EtcdHeadedResponse {}
extension Etcdserverpb_PutResponse: EtcdHeadedResponse {}
extension Etcdserverpb_DeleteRangeResponse: EtcdHeadedResponse {}
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
