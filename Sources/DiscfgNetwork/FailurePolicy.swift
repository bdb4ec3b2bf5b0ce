import DiscfgCore
import HTTPTypes
import Logging

/// What a caller is told of a failure, on every face (the REST router, the event-loop
/// paths, the etcd API and the Lambda function), written once.
///
/// - **The caller's own mistakes** (a ``DiscfgError`` of any code but the three below,
///   raised for what the request named) are shown as they are: code, message and field.
/// - **The server's, its store's or AWS's failures** (`internal`, `unavailable`,
///   `throttled`; an error the store raised about its own credentials, file or table;
///   anything that is not a ``DiscfgError``) name files, tables, accounts and library
///   error dumps the caller has no business seeing. The caller gets what happened in
///   general terms and a fresh correlation id; the log gets the details under the same
///   id, in one line.
/// - **A request cut off by its deadline** (`unavailable` with field `timeout`, or
///   `outcome` for a write the store could not confirm) is told as it is: those words are
///   the server's about the request, and say whether anything changed.
///
/// Each code's HTTP status and gRPC status code are here too; a face adds only its
/// encoding (etcd's own wording, which clients match).
///
/// ```swift
/// let shown = FailurePolicy.shown(error, logger: logger)
/// let status = FailurePolicy.httpStatus(for: shown.code)
/// ```
public enum FailurePolicy {
    /// Whether the caller may see `error` as it is.
    public static func isCallers(_ error: DiscfgError) -> Bool {
        switch error.code {
        case .unavailable: return error.field == "timeout" || error.field == "outcome"
        case .internal, .throttled: return false
        default: return !storeFields.contains(error.field ?? "")
        }
    }

    /// Fields a store names its own parts with: such an error is about the server's
    /// store, whatever its code (an AWS refusal of the server's credentials is no fault
    /// of the caller's token).
    static let storeFields: Set<String> = ["credentials", "store", "table"]

    /// What the caller is told of `error`. A failure that is not the caller's is logged
    /// at error level under a new correlation id, which the answer carries
    /// (``DiscfgError/correlationID``, and in its message).
    public static func shown(_ error: any Error, logger: Logger) -> DiscfgError {
        if let error = error as? DiscfgError, isCallers(error) { return error }
        let id = correlationID()
        let code: DiscfgError.Code
        let detail: String
        if let error = error as? DiscfgError {
            // A store's refusal of its own credentials is the store being unusable.
            code = [.internal, .throttled, .unavailable].contains(error.code) ? error.code : .unavailable
            detail = error.message
            logger.error("request failed", metadata: [
                "correlationId": "\(id)", "code": "\(error.code.rawValue)", "field": "\(error.field ?? "")", "error": "\(detail)",
            ])
        } else {
            code = .internal
            logger.error("request failed", metadata: ["correlationId": "\(id)", "error": "\(String(reflecting: error))"])
        }
        var answer = DiscfgError(code, message(code, id: id))
        answer.correlationID = id
        return answer
    }

    /// The words a caller reads for a failure that is not theirs.
    static func message(_ code: DiscfgError.Code, id: String) -> String {
        switch code {
        case .unavailable: "the store is unavailable; try again later (correlation id \(id) in the server's log)"
        case .throttled: "the store is throttling requests; try again shortly (correlation id \(id) in the server's log)"
        default: "internal error (correlation id \(id) in the server's log)"
        }
    }

    /// A new correlation id: 16 hexadecimal digits, random.
    public static func correlationID() -> String {
        let digits = String(UInt64.random(in: .min ... .max), radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The HTTP status for each kind of failure.
    public static func httpStatus(for code: DiscfgError.Code) -> HTTPResponse.Status {
        switch code {
        case .invalidArgument: .badRequest
        case .configNotFound, .keyNotFound, .pathNotFound: .notFound
        case .configExists: .conflict
        case .conditionFailed: .preconditionFailed
        case .tooLarge: .contentTooLarge
        // 507: WebDAV's status for a store out of space (RFC 4918).
        case .quotaExceeded: .init(code: 507, reasonPhrase: "Insufficient Storage")
        case .compacted: .gone
        case .notRepresentable, .patchFailed: .conflict
        case .unsupportedMediaType: .unsupportedMediaType
        case .schemaViolation: .unprocessableContent
        case .readOnly: .methodNotAllowed
        case .unauthenticated: .unauthorized
        case .permissionDenied: .forbidden
        case .throttled: .tooManyRequests
        case .unavailable: .serviceUnavailable
        case .internal: .internalServerError
        }
    }

    /// The gRPC status code for each kind of failure, as etcd's `togRPCError` answers.
    public static func grpcCode(for code: DiscfgError.Code) -> GRPCStatusCode {
        switch code {
        case .invalidArgument, .tooLarge, .notRepresentable, .unsupportedMediaType: .invalidArgument
        case .compacted: .outOfRange
        case .keyNotFound, .configNotFound, .pathNotFound: .notFound
        case .configExists: .alreadyExists
        case .conditionFailed, .patchFailed, .schemaViolation, .readOnly: .failedPrecondition
        case .unauthenticated: .unauthenticated
        case .permissionDenied: .permissionDenied
        // etcd's ErrGRPCNoSpace is RESOURCE_EXHAUSTED.
        case .throttled, .quotaExceeded: .resourceExhausted
        case .unavailable: .unavailable
        case .internal: .internalError
        }
    }
}

/// The gRPC status codes the policy answers with, by their wire numbers (gRPC's
/// `statuscodes.md`); a gRPC face turns them into its library's type by raw value.
public enum GRPCStatusCode: Int, Sendable, CaseIterable {
    case cancelled = 1
    case unknown = 2
    case invalidArgument = 3
    case notFound = 5
    case alreadyExists = 6
    case permissionDenied = 7
    case resourceExhausted = 8
    case failedPrecondition = 9
    case outOfRange = 11
    case internalError = 13
    case unavailable = 14
    case unauthenticated = 16
}
