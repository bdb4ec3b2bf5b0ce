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

    /// Appends `message`'s members in protobuf's JSON to `out` (an object's text without
    /// its braces), after a comma when `out` holds a member already; nothing for none.
    static func appendMembers(of message: some SwiftProtobuf.Message, to out: inout String) throws {
        let json = try message.jsonString(options: encoding)
        guard json.utf8.count > 2 else { return }
        if out.utf8.last != UInt8(ascii: "{") { out += "," }
        out += json.dropFirst().dropLast()
    }
}

/// An etcd answer: each carries the member's header (its field 1), which the gateway
/// writes itself, since protobuf's JSON leaves a zero revision out.
protocol EtcdHeadedResponse: SwiftProtobuf.Message {
    var header: Etcdserverpb_ResponseHeader { get set }
    var hasHeader: Bool { get }
    mutating func clearHeader()

    /// Appends this answer in JSON as etcd's gateway writes it to `out`, its headers with
    /// their revision.
    ///
    /// etcd's revisions start at 1, so its gateway's headers always hold a `revision`,
    /// and clients read it unguarded (patroni: `result['header']['revision']`). A config's
    /// revisions start at 0, which protobuf's JSON leaves out: an answer at revision 0
    /// says `"revision":"0"` in its header, and a transaction's in its operations' (a
    /// nested transaction's own header is empty, as etcd's).
    func appendGatewayJSON(to out: inout String) throws
}

extension EtcdHeadedResponse {
    /// This answer in JSON as etcd's gateway writes it (``appendGatewayJSON(to:)``).
    func gatewayJSON() throws -> String {
        var out = ""
        out.reserveCapacity(256)
        try appendGatewayJSON(to: &out)
        return out
    }

    /// The header (field 1, first as protobuf's JSON orders fields), then the rest of the
    /// answer in protobuf's JSON.
    func appendGatewayJSON(to out: inout String) throws {
        out += "{"
        if hasHeader { header.appendGatewayMember(to: &out) }
        var rest = self
        rest.clearHeader()
        try EtcdGateway.appendMembers(of: rest, to: &out)
        out += "}"
    }
}

extension Etcdserverpb_ResponseHeader {
    /// Appends `"header":{…}` as etcd's gateway writes it: protobuf's JSON (proto names,
    /// 64-bit integers as strings, zeros left out), but the revision written even when 0,
    /// unless `revisionAlways` is false.
    func appendGatewayMember(to out: inout String, revisionAlways: Bool = true) {
        out += #""header":{"#
        if clusterID != 0 { Self.append("cluster_id", clusterID, to: &out) }
        if memberID != 0 { Self.append("member_id", memberID, to: &out) }
        if revisionAlways || revision != 0 { Self.append("revision", revision.magnitude, negative: revision < 0, to: &out) }
        if raftTerm != 0 { Self.append("raft_term", raftTerm, to: &out) }
        out += "}"
    }

    /// Appends `"name":"value"`, after a comma unless it is the object's first member.
    /// The digits go straight into `out`: a header is written once per answer.
    private static func append(_ name: StaticString, _ value: UInt64, negative: Bool = false, to out: inout String) {
        if out.utf8.last != UInt8(ascii: "{") { out += "," }
        out += "\""
        out += name.description
        out += #"":""#
        if negative { out += "-" }
        var scale: UInt64 = 1
        while value / scale >= 10 { scale *= 10 }
        while scale > 0 {
            out.unicodeScalars.append(Unicode.Scalar(UInt8(ascii: "0") + UInt8(value / scale % 10)))
            scale /= 10
        }
        out += "\""
    }
}

extension Etcdserverpb_TxnResponse: EtcdHeadedResponse {
    /// Its header, `succeeded`, then `responses`, each operation's answer with its own
    /// header (fields 1, 2, 3, in protobuf's order).
    func appendGatewayJSON(to out: inout String) throws {
        try appendGatewayJSON(to: &out, nested: false)
    }

    /// As ``appendGatewayJSON(to:)``; a nested transaction's answer (`response_txn`)
    /// writes its header as protobuf's JSON does: etcd gives it an empty one,
    /// `"header":{}`, with no revision.
    func appendGatewayJSON(to out: inout String, nested: Bool) throws {
        out += "{"
        if hasHeader { header.appendGatewayMember(to: &out, revisionAlways: !nested) }
        var rest = self
        rest.clearHeader()
        rest.responses = []
        try EtcdGateway.appendMembers(of: rest, to: &out)
        if !responses.isEmpty {
            if out.utf8.last != UInt8(ascii: "{") { out += "," }
            out += #""responses":["#
            for (index, operation) in responses.enumerated() {
                if index > 0 { out += "," }
                try operation.appendGatewayJSON(to: &out)
            }
            out += "]"
        }
        out += "}"
    }
}

extension Etcdserverpb_ResponseOp {
    /// Appends the operation's answer under its field's name, written as its own answer is.
    func appendGatewayJSON(to out: inout String) throws {
        switch response {
        case .responseRange(let answer):
            out += #"{"response_range":"#
            try answer.appendGatewayJSON(to: &out)
        case .responsePut(let answer):
            out += #"{"response_put":"#
            try answer.appendGatewayJSON(to: &out)
        case .responseDeleteRange(let answer):
            out += #"{"response_delete_range":"#
            try answer.appendGatewayJSON(to: &out)
        case .responseTxn(let answer):
            out += #"{"response_txn":"#
            try answer.appendGatewayJSON(to: &out, nested: true)
        case nil:
            out += "{"
        }
        out += "}"
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
extension Etcdserverpb_AlarmResponse: EtcdHeadedResponse {}
extension Etcdserverpb_DefragmentResponse: EtcdHeadedResponse {}
extension Etcdserverpb_HashResponse: EtcdHeadedResponse {}
extension Etcdserverpb_MoveLeaderResponse: EtcdHeadedResponse {}
extension Etcdserverpb_AuthenticateResponse: EtcdHeadedResponse {}
