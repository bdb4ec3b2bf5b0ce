import Foundation

/// A failed S3 call, with a message that names the bucket, the key and what to do.
///
/// S3 answers in XML (`<Error><Code>NoSuchBucket</Code>…`), and answers a `HEAD` with no
/// body at all; both become one of a few kinds a caller can act on.
public struct S3Error: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, independent of the exact S3 error name.
    public enum Code: Sendable, Hashable {
        /// The bucket does not exist.
        case noSuchBucket
        /// The object does not exist.
        case noSuchKey
        /// The caller may not make this call on this resource (or the signature was refused).
        case accessDenied
        /// A conditional write's `If-Match` / `If-None-Match` did not hold.
        case preconditionFailed
        /// The object is larger than the client accepts.
        case tooLarge
        /// S3 kept throttling (`SlowDown`, 503) until the retries ran out.
        case throttling
        /// The endpoint did not answer in time or could not be reached.
        case unreachable
        /// Anything else; see ``S3Error/awsCode``.
        case other
    }

    /// The classified kind.
    public let code: Code
    /// S3's error name (`NoSuchBucket`), or `HTTP<status>` for an answer without a body.
    public let awsCode: String
    /// The operation, as IAM names it: `s3:PutObject`, `s3:GetObject`.
    public let action: String
    /// The bucket of the call.
    public let bucket: String
    /// The object key of the call.
    public let key: String
    /// S3's own message, possibly empty.
    public let message: String
    /// The HTTP status, or nil when no answer arrived.
    public let httpStatus: Int?

    /// Creates an error.
    public init(code: Code, awsCode: String, action: String, bucket: String, key: String, message: String, httpStatus: Int?) {
        self.code = code
        self.awsCode = awsCode
        self.action = action
        self.bucket = bucket
        self.key = key
        self.message = message
        self.httpStatus = httpStatus
    }

    /// The object as `s3://BUCKET/KEY`.
    public var location: String { "s3://\(bucket)/\(key)" }

    /// One line saying what failed, on what, and what to do.
    public var description: String {
        switch code {
        case .noSuchBucket:
            return "bucket \(bucket) does not exist (check the name and the region, or create it)"
        case .noSuchKey:
            return "no object at \(location)"
        case .accessDenied:
            return "no permission to \(action) on arn:aws:s3:::\(bucket)/\(key)" + detail
                + " (grant it to the caller's role, and check the bucket policy)"
        case .preconditionFailed:
            return "\(location) changed while it was being written (\(action) condition failed)"
        case .tooLarge:
            return "\(location) is too large: \(message)"
        case .throttling:
            return "S3 is throttling \(action) on \(location)" + detail + "; retry later"
        case .unreachable:
            return "S3 endpoint unreachable for \(action) on \(location): \(message)"
                + " (check AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, the region and the network)"
        case .other:
            return "\(action) on \(location) failed" + detail
        }
    }

    private var detail: String {
        var parts: [String] = []
        if !awsCode.hasPrefix("HTTP") { parts.append(awsCode) }
        if let httpStatus { parts.append("HTTP \(httpStatus)") }
        var text = parts.isEmpty ? "" : " (\(parts.joined(separator: ", ")))"
        if !message.isEmpty { text += ": \(message)" }
        return text
    }

    /// Whether another attempt may succeed: throttling, 5xx and an unreachable endpoint.
    var isRetryable: Bool {
        switch code {
        case .throttling, .unreachable: true
        case .other: (httpStatus ?? 0) >= 500
        default: false
        }
    }

    /// The error for a non-2xx answer: its XML `Code` and `Message` when there is a body,
    /// else the status alone (a `HEAD`, or a proxy's empty refusal).
    static func from(status: Int, body: Data, action: String, bucket: String, key: String) -> S3Error {
        let document = S3ErrorDocument(body)
        let awsCode = document.code ?? (status == 304 ? "NotModified" : "HTTP\(status)")
        let code: Code
        switch awsCode {
        case "NoSuchBucket": code = .noSuchBucket
        case "NoSuchKey": code = .noSuchKey
        case "AccessDenied", "AllAccessDisabled", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken",
             "InvalidToken", "AccountProblem", "InvalidObjectState":
            code = .accessDenied
        case "PreconditionFailed", "ConditionalRequestConflict": code = .preconditionFailed
        case "SlowDown", "ServiceUnavailable", "RequestLimitExceeded": code = .throttling
        case "EntityTooLarge": code = .tooLarge
        default:
            switch status {
            case 403, 401: code = .accessDenied
            case 404: code = .noSuchKey
            case 409 where awsCode == "HTTP409": code = .preconditionFailed
            case 412: code = .preconditionFailed
            case 429, 503: code = .throttling
            default: code = .other
            }
        }
        return S3Error(code: code, awsCode: awsCode, action: action, bucket: bucket, key: key,
                       message: document.message ?? "", httpStatus: status)
    }
}

/// The two fields discfg reads from S3's XML error body, found by plain search in its
/// first few kilobytes: no XML parser runs on what an endpoint sends.
struct S3ErrorDocument {
    /// `<Code>`, when present and short.
    var code: String?
    /// `<Message>`, when present, at most 300 characters.
    var message: String?

    /// How much of a body is looked at.
    static let scannedBytes = 8 << 10

    init(_ body: Data) {
        let text = String(decoding: body.prefix(Self.scannedBytes), as: UTF8.self)
        code = Self.element("Code", in: text).flatMap { $0.count <= 64 && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } ? $0 : nil }
        message = Self.element("Message", in: text).map { String($0.prefix(300)) }
    }

    /// The text of the first `<name>…</name>`, entities decoded, control characters dropped.
    static func element(_ name: String, in text: String) -> String? {
        guard let open = text.range(of: "<\(name)>"),
              let close = text.range(of: "</\(name)>", range: open.upperBound..<text.endIndex)
        else { return nil }
        let raw = text[open.upperBound..<close.lowerBound]
        let decoded = raw
            .replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"")
            .replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
        let cleaned = String(decoded.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) })
        return cleaned.trimmingCharacters(in: .whitespaces)
    }
}
