import DiscfgCore
import DiscfgFlags
import DiscfgJSON
import Foundation
import HTTPTypes

/// The OpenFeature Remote Evaluation Protocol's documents (open-feature/protocol
/// `service/openapi.yaml`), written once for every face that evaluates flags: the request's
/// evaluation context, an evaluation's answer and its status, the bulk answer and its entity
/// tag, and the `refetchEvaluation` event.
///
/// Values are written as the flag set spells them (``JSONSerializer/Options/numbersAsWritten``):
/// a float variant `10.0` stays `10.0`, which OpenFeature SDKs read as a float.
///
/// ```swift
/// let context = try OFREP.context(from: body)
/// let answer = FlagEvaluator().evaluate("new-ui", in: catalog, context: context)
/// let (status, json) = (OFREP.status(of: answer), OFREP.document(answer))
/// ```
public enum OFREP {
    /// The largest request body, in bytes.
    public static let maxRequestBytes = 256 * 1024
    /// The deepest nesting of a request body.
    public static let maxRequestDepth = 32

    /// A request the protocol refuses whole: its error code and one sentence.
    public struct Refusal: Error, Sendable, Equatable {
        /// `PARSE_ERROR` (not JSON) or `INVALID_CONTEXT` (not an evaluation request).
        public let code: EvaluationErrorCode
        /// What is wrong, for a person.
        public let details: String

        public init(_ code: EvaluationErrorCode, _ details: String) {
            self.code = code
            self.details = details
        }
    }

    /// The evaluation context of a request body `{"context": {…}}`; an empty body, or one
    /// without `context`, is the empty context.
    ///
    /// - Throws: ``Refusal`` for a body that is not JSON, too large or deep, not an object,
    ///   or whose `context` is not an object.
    public static func context(from body: Data) throws(Refusal) -> JSONObject {
        guard body.count <= maxRequestBytes else {
            throw Refusal(.invalidContext, "the request body is \(body.count) bytes; an evaluation request may have at most \(maxRequestBytes)")
        }
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return JSONObject() }
        let value: JSONValue
        do {
            value = try JSONParser.parse(Array(body), options: JSONParser.Options(maxDepth: maxRequestDepth, maxBytes: maxRequestBytes))
        } catch {
            throw Refusal(.parseError, "the request body is not JSON the server reads (\(error)); send {\"context\": {…}}")
        }
        guard case .object(let request) = value else {
            throw Refusal(.invalidContext, "the request body must be an object such as {\"context\": {\"targetingKey\": \"u1\"}}, not \(value.kindName)")
        }
        switch request["context"] {
        case nil: return JSONObject()
        case .object(let context)?: return context
        case let other?: throw Refusal(.invalidContext, "context must be an object of evaluation attributes, not \(other.kindName)")
        }
    }

    /// The HTTP status of a single evaluation's answer: 200, 404 for `FLAG_NOT_FOUND`, else
    /// 400.
    public static func status(of answer: FlagEvaluation) -> HTTPResponse.Status {
        switch answer.errorCode {
        case nil: .ok
        case .flagNotFound?: .notFound
        case _?: .badRequest
        }
    }

    /// An evaluation as the protocol writes it: `{key, reason, variant, value, metadata}`
    /// (value and variant left out for the caller's own default), or
    /// `{key, errorCode, errorDetails}`.
    public static func document(_ answer: FlagEvaluation) -> JSONValue {
        var object = JSONObject()
        object["key"] = .string(answer.key)
        if let code = answer.errorCode {
            object["errorCode"] = .string(code.rawValue)
            object["errorDetails"] = .string(answer.errorMessage ?? code.rawValue)
        } else {
            object["reason"] = .string(answer.reason.rawValue)
            if let variant = answer.variant { object["variant"] = .string(variant) }
            if let value = answer.value { object["value"] = value }
        }
        if !answer.metadata.isEmpty { object["metadata"] = .object(answer.metadata) }
        return .object(object)
    }

    /// A refusal as the protocol writes it: `{key, errorCode, errorDetails}`, without `key`
    /// for a bulk request.
    public static func document(_ refusal: Refusal, key: String?) -> JSONValue {
        var object = JSONObject()
        if let key { object["key"] = .string(key) }
        object["errorCode"] = .string(refusal.code.rawValue)
        object["errorDetails"] = .string(refusal.details)
        return .object(object)
    }

    /// Every flag of `catalog` evaluated for `context`, in key order, with the event stream
    /// that announces changes (nil where the face cannot stream).
    public static func bulkDocument(_ catalog: FlagCatalog, context: JSONObject, evaluator: FlagEvaluator, eventStream: String?) -> JSONValue {
        let flags = catalog.entries.keys.sorted().map { document(evaluator.evaluate($0, in: catalog, context: context)) }
        var object = JSONObject()
        object["flags"] = .array(flags)
        if let eventStream {
            var endpoint = JSONObject()
            endpoint["requestUri"] = .string(eventStream)
            var stream = JSONObject()
            stream["type"] = .string("sse")
            stream["endpoint"] = .object(endpoint)
            object["eventStreams"] = .array([.object(stream)])
        }
        return .object(object)
    }

    /// The bytes of a document, numbers as written, ending in a newline.
    public static func bytes(_ document: JSONValue) -> [UInt8] {
        // The documents are made of values already parsed within the parser's depth.
        var bytes = (try? JSONSerializer.serialize(document, options: JSONSerializer.Options(numbersAsWritten: true))) ?? Array("{}".utf8)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// The entity tag of a bulk answer's bytes: the answer depends on the context as much as
    /// on the flags, so the tag is a digest of what was answered, not a revision.
    public static func entityTag(of bytes: [UInt8]) -> String {
        // FNV-1a, 64 bits, twice with different offsets: a tag, not a secret.
        var first: UInt64 = 0xcbf2_9ce4_8422_2325
        var second: UInt64 = 0x8422_2325_cbf2_9ce4
        for byte in bytes {
            first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            second = (second ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return "\"" + hex(first) + hex(second) + "\""
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The data of the event that tells a provider to evaluate again.
    public static let refetchEventData = #"{"type":"refetchEvaluation"}"#
}

extension JSONValue {
    /// What kind of value it is, for a sentence.
    fileprivate var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
