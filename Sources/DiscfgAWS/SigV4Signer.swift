import Crypto
import Foundation

/// How the signer learns the payload hash that ends the canonical request.
public enum SigV4Payload: Sendable, Hashable {
    /// The body bytes; the signer hashes them.
    case bytes(Data)
    /// A precomputed lowercase hex SHA-256, for callers that already hashed a large body.
    case sha256Hex(String)
    /// `UNSIGNED-PAYLOAD`, for services that accept unsigned bodies.
    case unsigned

    /// The hash string placed in the canonical request.
    public var hashString: String {
        switch self {
        case .bytes(let data): return Hex.sha256(data)
        case .sha256Hex(let hex): return hex.lowercased()
        case .unsigned: return "UNSIGNED-PAYLOAD"
        }
    }
}

/// An HTTP request as the signer sees it: method, path and query as they go on the wire, and headers.
public struct SigV4Request: Sendable, Hashable {
    /// The HTTP method, e.g. `POST`.
    public var method: String
    /// The path as it appears in the request line (before normalization and SigV4 encoding).
    public var path: String
    /// The raw query string without the leading `?`, or empty.
    public var query: String
    /// Headers in wire order; the caller must include `Host`.
    public var headers: [HTTPHeaderField]

    /// Creates a request from its request-line parts.
    public init(method: String, path: String, query: String = "", headers: [HTTPHeaderField]) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
    }

    /// Creates a request for `url`, adding a `Host` header (with a non-default port) when absent,
    /// because SigV4 requires the host to be signed and transports add it only after signing.
    public init(method: String, url: URL, headers: [HTTPHeaderField] = []) {
        var headers = headers
        if headers.firstValue(named: "host") == nil, let host = url.host {
            var value = host
            if let port = url.port, !(url.scheme == "http" && port == 80), !(url.scheme == "https" && port == 443) {
                value += ":\(port)"
            }
            headers.insert(HTTPHeaderField(name: "Host", value: value), at: 0)
        }
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let path = components?.percentEncodedPath ?? "/"
        self.init(
            method: method,
            path: path.isEmpty ? "/" : path,
            query: components?.percentEncodedQuery ?? "",
            headers: headers
        )
    }
}

/// The outcome of signing: every intermediate string (for tests and debugging) and the headers to send.
public struct SigV4Signature: Sendable, Hashable {
    /// The canonical request (task 1 of SigV4).
    public let canonicalRequest: String
    /// The string to sign (task 2).
    public let stringToSign: String
    /// The hex HMAC signature (task 3).
    public let signature: String
    /// The complete `Authorization` header value.
    public let authorization: String
    /// The `;`-joined lowercase names of the signed headers.
    public let signedHeaders: String
    /// `date/region/service/aws4_request`.
    public let credentialScope: String
    /// The request headers to send: the input plus `X-Amz-Date`, the session token and `Authorization`.
    public let headers: [HTTPHeaderField]
}

/// AWS Signature Version 4 for header-based authentication.
///
/// discfg talks to AWS without an SDK, so it signs its own requests. The signer is a pure value:
/// the instant is an argument, which makes it deterministic for the published test vectors and for
/// comparisons against a reference implementation.
public struct SigV4Signer: Sendable {
    /// The region in the credential scope, e.g. `us-east-1`.
    public var region: String
    /// The service in the credential scope, e.g. `dynamodb`.
    public var service: String
    /// Whether to remove `.`/`..` and empty segments from the path; true for every service but S3.
    public var normalizesPath: Bool
    /// Whether the session token is part of the signed headers; a few services want it added after signing.
    public var signsSecurityToken: Bool
    /// Whether to add (and sign) an `x-amz-content-sha256` header carrying the payload hash.
    public var addsContentSHA256Header: Bool

    /// Creates a signer for one region and service.
    public init(
        region: String,
        service: String,
        normalizesPath: Bool = true,
        signsSecurityToken: Bool = true,
        addsContentSHA256Header: Bool = false
    ) {
        self.region = region
        self.service = service
        self.normalizesPath = normalizesPath
        self.signsSecurityToken = signsSecurityToken
        self.addsContentSHA256Header = addsContentSHA256Header
    }

    static let algorithm = "AWS4-HMAC-SHA256"

    /// Signs `request` at `date` with `credentials`.
    public func sign(
        _ request: SigV4Request,
        payload: SigV4Payload,
        credentials: AWSCredentials,
        date: Date
    ) -> SigV4Signature {
        let timestamp = AWSTimestamp(date)
        let payloadHash = payload.hashString

        var headers = request.headers
        headers.removeAll(named: "authorization")
        headers.replace(named: "X-Amz-Date", with: timestamp.dateTime)
        if addsContentSHA256Header {
            headers.replace(named: "x-amz-content-sha256", with: payloadHash)
        }
        if let token = credentials.sessionToken, signsSecurityToken {
            headers.replace(named: "X-Amz-Security-Token", with: token)
        }

        let canonicalHeaders = Self.canonicalHeaders(headers)
        let signedHeaders = canonicalHeaders.map(\.name).joined(separator: ";")
        let canonicalRequest = [
            request.method.uppercased(),
            Self.canonicalURI(request.path, normalize: normalizesPath),
            Self.canonicalQuery(request.query),
            canonicalHeaders.map { "\($0.name):\($0.value)\n" }.joined(),
            signedHeaders,
            payloadHash,
        ].joined(separator: "\n")

        let scope = "\(timestamp.date)/\(region)/\(service)/aws4_request"
        let stringToSign = [
            Self.algorithm,
            timestamp.dateTime,
            scope,
            Hex.sha256(Data(canonicalRequest.utf8)),
        ].joined(separator: "\n")

        let key = Self.signingKey(secret: credentials.secretAccessKey, date: timestamp.date, region: region, service: service)
        let signature = Hex.encode(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key))
        let authorization = "\(Self.algorithm) Credential=\(credentials.accessKeyID)/\(scope), "
            + "SignedHeaders=\(signedHeaders), Signature=\(signature)"

        if let token = credentials.sessionToken, !signsSecurityToken {
            headers.replace(named: "X-Amz-Security-Token", with: token)
        }
        headers.append(HTTPHeaderField(name: "Authorization", value: authorization))

        return SigV4Signature(
            canonicalRequest: canonicalRequest,
            stringToSign: stringToSign,
            signature: signature,
            authorization: authorization,
            signedHeaders: signedHeaders,
            credentialScope: scope,
            headers: headers
        )
    }

    /// Derives the per-day signing key, so the long-term secret never signs a request directly.
    static func signingKey(secret: String, date: String, region: String, service: String) -> SymmetricKey {
        func hmac(_ key: SymmetricKey, _ text: String) -> SymmetricKey {
            SymmetricKey(data: HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: key))
        }
        let kSecret = SymmetricKey(data: Data("AWS4\(secret)".utf8))
        return hmac(hmac(hmac(hmac(kSecret, date), region), service), "aws4_request")
    }

    // MARK: - Canonicalization

    /// Lowercased, sorted headers with duplicate names merged by commas and values trimmed.
    static func canonicalHeaders(_ headers: [HTTPHeaderField]) -> [(name: String, value: String)] {
        var order: [String] = []
        var values: [String: [String]] = [:]
        for field in headers {
            let name = field.name.lowercased().trimmingCharacters(in: .whitespaces)
            if values[name] == nil { order.append(name) }
            values[name, default: []].append(contentsOf: canonicalValues(field.value))
        }
        return order
            .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            .map { ($0, values[$0, default: []].joined(separator: ",")) }
    }

    /// Splits a possibly folded value into lines, trims each and collapses runs of spaces.
    ///
    /// An obsolete line-folded value is treated as several values of the same header, the way
    /// the AWS test suite expects (`value1,value2,value3`).
    static func canonicalValues(_ value: String) -> [String] {
        let lines = value.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
        let cleaned = lines.map { collapseWhitespace(String($0)) }
        if cleaned.count == 1 { return cleaned }
        let nonEmpty = cleaned.filter { !$0.isEmpty }
        return nonEmpty.isEmpty ? [""] : nonEmpty
    }

    /// Trims leading and trailing whitespace and turns every inner run of spaces or tabs into one space.
    static func collapseWhitespace(_ text: String) -> String {
        var out = ""
        var pendingSpace = false
        for ch in text {
            if ch == " " || ch == "\t" {
                pendingSpace = !out.isEmpty
            } else {
                if pendingSpace { out.append(" ") }
                pendingSpace = false
                out.append(ch)
            }
        }
        return out
    }

    /// The canonical URI: optionally normalized, each segment URI-encoded per SigV4.
    static func canonicalURI(_ path: String, normalize: Bool) -> String {
        let source = path.isEmpty ? "/" : path
        let segments: [Substring]
        let trailingSlash: Bool
        if normalize {
            var stack: [Substring] = []
            for segment in source.split(separator: "/", omittingEmptySubsequences: true) {
                switch segment {
                case ".": continue
                case "..": if !stack.isEmpty { stack.removeLast() }
                default: stack.append(segment)
                }
            }
            segments = stack
            trailingSlash = source.hasSuffix("/") && !stack.isEmpty
        } else {
            segments = source.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { $0 }
            trailingSlash = false
        }
        let encoded = "/" + segments.map { uriEncode(String($0)) }.joined(separator: "/")
        return trailingSlash ? encoded + "/" : encoded
    }

    /// The canonical query: parameters decoded, re-encoded per SigV4, and sorted by name then value.
    static func canonicalQuery(_ query: String) -> String {
        guard !query.isEmpty else { return "" }
        var pairs: [(String, String)] = []
        for part in query.split(separator: "&", omittingEmptySubsequences: true) {
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(pieces[0])
            let value = pieces.count > 1 ? String(pieces[1]) : ""
            pairs.append((uriEncode(name.removingPercentEncoding ?? name), uriEncode(value.removingPercentEncoding ?? value)))
        }
        pairs.sort { lhs, rhs in
            if lhs.0 != rhs.0 { return Array(lhs.0.utf8).lexicographicallyPrecedes(Array(rhs.0.utf8)) }
            return Array(lhs.1.utf8).lexicographicallyPrecedes(Array(rhs.1.utf8))
        }
        return pairs.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    /// Percent-encodes every byte of the UTF-8 form except the RFC 3986 unreserved set, in uppercase hex.
    static func uriEncode(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.append(byte)
            default:
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0f)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
