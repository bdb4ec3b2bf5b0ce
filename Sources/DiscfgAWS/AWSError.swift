import Foundation

/// A failed AWS JSON call, classified so discfg can react (retry, report a conflict, fix auth).
public struct AWSError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure, independent of the exact AWS error name.
    public enum Code: Sendable, Hashable {
        /// A write's condition expression did not hold (someone else changed the item).
        case conditionalCheckFailed
        /// A transaction was cancelled; ``AWSError/cancellationReasons`` says which item failed and why.
        case transactionCanceled
        /// The table or another named resource does not exist (or is still being created).
        case resourceNotFound
        /// The request was malformed or violated a limit.
        case validation
        /// The service kept throttling until the retry budget ran out.
        case throttling
        /// The credentials were rejected, expired, or lack permission.
        case authentication
        /// The service kept failing with 5xx until the retry budget ran out.
        case serviceUnavailable
        /// The endpoint could not be reached (refused, reset, timed out) even after retries.
        case network
        /// Anything else; see ``AWSError/awsCode``.
        case other
    }

    /// Why one item of a cancelled transaction failed (`Code` `None` means that item was fine).
    public struct CancellationReason: Sendable, Hashable {
        /// The reason code, e.g. `ConditionalCheckFailed`, `None`, `TransactionConflict`.
        public let code: String
        /// The service's explanation, when given.
        public let message: String?
        /// The item's old image as raw JSON, when the request asked for it.
        public let item: Data?

        /// Creates a reason.
        public init(code: String, message: String? = nil, item: Data? = nil) {
            self.code = code
            self.message = message
            self.item = item
        }
    }

    /// The classified kind.
    public let code: Code
    /// The AWS error name with any namespace removed, e.g. `ConditionalCheckFailedException`.
    public let awsCode: String
    /// The service's message, possibly empty.
    public let message: String
    /// The HTTP status, or nil when no response arrived.
    public let httpStatus: Int?
    /// How many retries were made before giving up (0 when the first answer was final).
    public let retries: Int
    /// Per-item reasons of a cancelled transaction, in request order.
    public let cancellationReasons: [CancellationReason]
    /// The service's request ID (`x-amzn-RequestId`), for support cases.
    public let requestID: String?
    /// Whether an attempt of this call may have been carried out although no success
    /// came back: the connection failed after the request could have been sent, or the
    /// service answered 5xx. A write that fails this way has an unknown outcome.
    public let mayHaveApplied: Bool
    /// The endpoint no connection could be made to, when that is what failed (refused,
    /// or a name that does not resolve): nothing was sent, and the last attempt told so.
    public let connectFailure: ConnectFailure?

    /// Creates an error.
    public init(
        code: Code,
        awsCode: String,
        message: String,
        httpStatus: Int?,
        retries: Int = 0,
        cancellationReasons: [CancellationReason] = [],
        requestID: String? = nil,
        mayHaveApplied: Bool = false,
        connectFailure: ConnectFailure? = nil
    ) {
        self.code = code
        self.awsCode = awsCode
        self.message = message
        self.httpStatus = httpStatus
        self.retries = retries
        self.cancellationReasons = cancellationReasons
        self.requestID = requestID
        self.mayHaveApplied = mayHaveApplied
        self.connectFailure = connectFailure
    }

    /// A copy recording `retries` and whether an attempt may have been carried out.
    func withRetries(_ retries: Int, mayHaveApplied: Bool) -> AWSError {
        AWSError(code: code, awsCode: awsCode, message: message, httpStatus: httpStatus,
                 retries: retries, cancellationReasons: cancellationReasons, requestID: requestID,
                 mayHaveApplied: mayHaveApplied || self.mayHaveApplied, connectFailure: connectFailure)
    }

    /// One line: what happened, the AWS code and status, and a hint at what to do.
    public var description: String {
        var text = "\(summary) (\(awsCode)"
        if let httpStatus { text += ", HTTP \(httpStatus)" }
        if retries > 0 { text += ", after \(retries) retr\(retries == 1 ? "y" : "ies")" }
        text += ")"
        if !message.isEmpty { text += ": \(message)" }
        if code == .transactionCanceled, !cancellationReasons.isEmpty {
            text += " [reasons: " + cancellationReasons.map(\.code).joined(separator: ", ") + "]"
        }
        return text + " — hint: \(hint)"
    }

    private var summary: String {
        switch code {
        case .conditionalCheckFailed: return "condition check failed"
        case .transactionCanceled: return "transaction cancelled"
        case .resourceNotFound: return "resource not found"
        case .validation: return "request rejected as invalid"
        case .throttling: return "request throttled"
        case .authentication: return "authentication failed"
        case .serviceUnavailable: return "service unavailable"
        case .network: return "endpoint unreachable"
        case .other: return "AWS request failed"
        }
    }

    private var hint: String {
        switch code {
        case .conditionalCheckFailed:
            return "the value changed concurrently; re-read it and retry the update"
        case .transactionCanceled:
            return "check the per-item reasons; ConditionalCheckFailed means a concurrent change"
        case .resourceNotFound:
            return "check the table name and region, or create the table first"
        case .validation:
            return "this is a bug in the request or a size/limit violation; retrying will not help"
        case .throttling:
            return "raise the table's capacity or use on-demand billing, or slow down"
        case .authentication:
            return "check the access key, secret, session token expiry, clock skew and IAM permissions"
        case .serviceUnavailable:
            return "AWS is having trouble; retry later"
        case .network:
            return "check the endpoint URL, region and network connectivity"
        case .other:
            return "see the AWS error code for details"
        }
    }

    // MARK: - Classification

    static let throttlingCodes: Set<String> = [
        "ThrottlingException", "ProvisionedThroughputExceededException", "RequestLimitExceeded",
        "Throttling", "ThrottledException", "RequestThrottledException", "TooManyRequestsException",
        "RequestThrottled", "SlowDown", "PriorRequestNotComplete", "TransactionInProgressException",
    ]

    static let authenticationCodes: Set<String> = [
        "UnrecognizedClientException", "InvalidSignatureException", "MissingAuthenticationToken",
        "MissingAuthenticationTokenException", "AccessDenied", "AccessDeniedException", "ExpiredToken",
        "ExpiredTokenException", "IncompleteSignature", "IncompleteSignatureException",
        "InvalidClientTokenId", "SignatureDoesNotMatch", "AuthFailure", "RequestExpired",
        "InvalidAccessKeyId", "NotAuthorized", "UnauthorizedOperation",
    ]

    static let validationCodes: Set<String> = [
        "ValidationException", "SerializationException", "InvalidParameterValue", "InvalidParameterException",
        "InvalidParameterCombination", "MissingParameter", "ItemCollectionSizeLimitExceededException",
        "IdempotentParameterMismatchException", "ResourceInUseException", "LimitExceededException",
    ]

    /// Classifies an AWS error name and status.
    static func classify(awsCode: String, status: Int?) -> Code {
        switch awsCode {
        case "ConditionalCheckFailedException": return .conditionalCheckFailed
        case "TransactionCanceledException": return .transactionCanceled
        case "ResourceNotFoundException": return .resourceNotFound
        case _ where throttlingCodes.contains(awsCode): return .throttling
        case _ where authenticationCodes.contains(awsCode): return .authentication
        case _ where validationCodes.contains(awsCode): return .validation
        default: break
        }
        switch status {
        case 429?: return .throttling
        case 401?, 403?: return .authentication
        case let status? where status >= 500: return .serviceUnavailable
        default: return .other
        }
    }

    /// Whether another attempt may succeed: throttling, 5xx and unreachable endpoints.
    var isRetryable: Bool {
        switch code {
        case .throttling, .serviceUnavailable, .network: return true
        case .other: return (httpStatus ?? 0) >= 500 || httpStatus == 429
        default: return false
        }
    }

    /// The AWS error name from `__type` (`namespace#Name`) or `x-amzn-ErrorType` (`Name:uri`).
    static func normalizedCode(_ raw: String) -> String {
        var code = Substring(raw)
        if let hash = code.lastIndex(of: "#") { code = code[code.index(after: hash)...] }
        if let colon = code.firstIndex(of: ":") { code = code[..<colon] }
        return code.trimmingCharacters(in: .whitespaces)
    }

    /// Builds the error for a non-2xx response from its body and error-type header.
    public static func from(status: Int, body: Data, errorTypeHeader: String?, requestID: String? = nil) -> AWSError {
        let document = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        let rawCode = (document?["__type"] as? String) ?? errorTypeHeader ?? (document?["code"] as? String) ?? ""
        var awsCode = normalizedCode(rawCode)
        if awsCode.isEmpty { awsCode = "HTTP\(status)" }
        var message = (document?["message"] as? String) ?? (document?["Message"] as? String) ?? ""
        if message.isEmpty, document == nil, !body.isEmpty, body.count < 512 {
            message = String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        var reasons: [CancellationReason] = []
        if let list = document?["CancellationReasons"] as? [[String: Any]] {
            reasons = list.map { entry in
                CancellationReason(
                    code: entry["Code"] as? String ?? "None",
                    message: entry["Message"] as? String,
                    item: entry["Item"].flatMap { try? JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]) }
                )
            }
        } else if awsCode == "TransactionCanceledException" {
            reasons = reasonsFromMessage(message)
        }
        return AWSError(
            code: classify(awsCode: awsCode, status: status),
            awsCode: awsCode,
            message: message,
            httpStatus: status,
            cancellationReasons: reasons,
            requestID: requestID
        )
    }

    /// Recovers reason codes from a message ending in `[Code1, Code2]`, for servers that send only the message.
    static func reasonsFromMessage(_ message: String) -> [CancellationReason] {
        guard let open = message.lastIndex(of: "["), let close = message.lastIndex(of: "]"), open < close else { return [] }
        return message[message.index(after: open)..<close]
            .split(separator: ",")
            .map { CancellationReason(code: $0.trimmingCharacters(in: .whitespaces)) }
            .filter { !$0.code.isEmpty }
    }
}
