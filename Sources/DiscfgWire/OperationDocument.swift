import DiscfgCore
import Foundation
import DiscfgJSON

/// The JSON form of a ``TransactionOperation``.
public struct OperationDocument: Codable, Hashable, Sendable {
    /// `put`, `delete` or `get`.
    public var op: String
    /// The key (or `prefix`, for `delete` and `get`).
    public var key: String?
    /// Every key under this prefix (`delete` and `get`).
    public var prefix: String?
    /// Every key from this path on (inclusive), up to `to` (`delete` and `get`).
    public var from: String?
    /// With `from`: the first path after the range (exclusive); absent for no end.
    public var to: String?
    /// The value to put.
    public var value: String?
    /// `base64` for a binary value.
    public var encoding: String?
    /// Seconds until the put key expires.
    public var ttl: Int64?
    /// The put value's media type.
    public var contentType: String?
    /// For a patch: an RFC 7386 merge patch.
    public var merge: JSONValue?
    /// For a patch: an RFC 6902 JSON patch (an array of operations).
    public var patch: JSONValue?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case op, key, prefix, from, to, value, encoding, ttl, contentType, merge, patch
    }

    /// Reads the JSON form, refusing fields it does not define and fields given as null.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(CodingKeys.self, of: "an operation")
        op = try container.decode(String.self, forKey: .op)
        key = try container.decodeIfPresent(String.self, forKey: .key)
        prefix = try container.decodeIfPresent(String.self, forKey: .prefix)
        from = try container.decodeIfPresent(String.self, forKey: .from)
        to = try container.decodeIfPresent(String.self, forKey: .to)
        value = try container.decodeIfPresent(String.self, forKey: .value)
        encoding = try container.decodeIfPresent(String.self, forKey: .encoding)
        do {
            ttl = try container.decodeIfPresent(Int64.self, forKey: .ttl)
        } catch where !(error is DecodingError) {
            // Foundation reports 1.5 or 1e30 for an integer with an error of its own that
            // the decoder, up the stack, turns into "not valid JSON" without saying where.
            throw DecodingError.dataCorruptedError(forKey: .ttl, in: container, debugDescription: "ttl must be a whole number of seconds from 1 to \(Limits.maxTTLSeconds)")
        }
        contentType = try container.decodeIfPresent(String.self, forKey: .contentType)
        merge = try container.decodeIfPresent(JSONValue.self, forKey: .merge)
        patch = try container.decodeIfPresent(JSONValue.self, forKey: .patch)
    }

    /// The document for an operation.
    public init(_ operation: TransactionOperation) {
        switch operation {
        case .put(let key, let data, let ttlSeconds, let contentType):
            op = "put"
            self.key = key.path
            let (text, encoding) = ValueEncoding.encode(data)
            value = text
            self.encoding = encoding
            ttl = ttlSeconds
            self.contentType = contentType
        case .patch(let key, let patch):
            op = "patch"
            self.key = key.path
            switch patch {
            case .merge(let value): merge = value
            case .json: self.patch = patch.document
            }
        case .delete(let key): op = "delete"; self.key = key.path
        case .deletePrefix(let prefix): op = "delete"; self.prefix = prefix.path
        case .get(let key): op = "get"; self.key = key.path
        case .getPrefix(let prefix): op = "get"; self.prefix = prefix.path
        case .deleteRange(let range): op = "delete"; (from, to) = (range.lower, range.upperPath)
        case .getRange(let range): op = "get"; (from, to) = (range.lower, range.upperPath)
        case .nested:
            // The REST API's transactions do not nest (only the etcd API's do): "txn" is
            // an op it refuses, and a remote store refuses such a transaction before
            // sending it.
            op = "txn"
        }
    }

    /// The operation this document describes; `field` names it in errors.
    public func operation(field: String) throws -> TransactionOperation {
        if op != "patch", let extra = [("merge", merge != nil), ("patch", patch != nil)].first(where: \.1)?.0 {
            throw DiscfgError.invalid("\(field).\(extra)", "\(field) is a \(op.debugEscaped), which takes no \"\(extra)\"; only a patch does")
        }
        if op == "patch" {
            return try patchOperation(field: field)
        }
        if op == "delete" || op == "get", let extra = [("value", value != nil), ("encoding", encoding != nil), ("ttl", ttl != nil), ("contentType", contentType != nil)].first(where: \.1)?.0 {
            throw DiscfgError.invalid("\(field).\(extra)", "\(field) is a \(op), which takes no \"\(extra)\"; only a put does")
        }
        if let range = try KeyRange(from: from, to: to, field: field) {
            guard key == nil, prefix == nil else {
                throw DiscfgError.invalid(field, "\(field) names a key, a prefix or a range: give exactly one of \"key\", \"prefix\" and \"from\"")
            }
            switch op {
            case "delete": return .deleteRange(range)
            case "get": return .getRange(range)
            case "put": throw DiscfgError.invalid(field, "\(field) is a put: give \"key\" (a put takes no range)")
            default: throw DiscfgError.invalid("\(field).op", "\(field).op is \"\(op.debugEscaped)\"; use put, patch, delete or get")
            }
        }
        switch (op, key, prefix) {
        case ("put", let key?, nil):
            guard let value else { throw DiscfgError.invalid("\(field).value", "\(field) puts \(key.debugEscaped) but gives no \"value\"") }
            let data = try ValueEncoding.decode(value, encoding: encoding)
            try Limits.validateValue(data)
            let operation = TransactionOperation.put(try Key(key), data, ttlSeconds: ttl, contentType: contentType)
            if let ttl { try Limits.validateTTL(seconds: ttl) }
            if let contentType { try Limits.validateContentType(contentType) }
            return operation
        case ("put", _, _): throw DiscfgError.invalid(field, "\(field) is a put: give \"key\" (a put takes no prefix)")
        case ("delete", let key?, nil): return .delete(try Key(key))
        case ("delete", nil, let prefix?): return .deletePrefix(try KeyPrefix(prefix))
        case ("get", let key?, nil): return .get(try Key(key))
        case ("get", nil, let prefix?): return .getPrefix(try KeyPrefix(prefix))
        case ("delete", _, _), ("get", _, _): throw DiscfgError.invalid(field, "\(field) names a key or a prefix: give exactly one of \"key\" and \"prefix\"")
        default: throw DiscfgError.invalid("\(field).op", "\(field).op is \"\(op.debugEscaped)\"; use put, patch, delete or get")
        }
    }

    /// A patch: a key and exactly one of `merge` and `patch`.
    private func patchOperation(field: String) throws -> TransactionOperation {
        if let extra = [("prefix", prefix != nil), ("from", from != nil), ("to", to != nil), ("value", value != nil), ("encoding", encoding != nil), ("ttl", ttl != nil), ("contentType", contentType != nil)].first(where: \.1)?.0 {
            throw DiscfgError.invalid("\(field).\(extra)", "\(field) is a patch, which takes no \"\(extra)\": give \"key\" and one of \"merge\" and \"patch\"")
        }
        guard let key else { throw DiscfgError.invalid("\(field).key", "\(field) is a patch: give the \"key\" it patches") }
        switch (merge, patch) {
        case (let merge?, nil): return .patch(try Key(key), .merge(merge))
        case (nil, let patch?): return .patch(try Key(key), try ValuePatch(jsonPatch: patch))
        default: throw DiscfgError.invalid(field, "\(field) is a patch: give exactly one of \"merge\" (RFC 7386) and \"patch\" (RFC 6902)")
        }
    }
}
