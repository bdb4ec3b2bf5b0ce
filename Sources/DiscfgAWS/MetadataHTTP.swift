import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Small HTTP helper for the credential endpoints (ECS and IMDS), which answer tiny bodies fast or not at all.
struct MetadataHTTP: Sendable {
    let client: HTTPClient
    let timeout: TimeAmount

    struct Response: Sendable {
        let status: UInt
        let body: String
    }

    /// Performs one request with a hard deadline so an absent endpoint fails fast.
    func send(_ method: HTTPMethod, _ url: String, headers: [(String, String)] = []) async throws -> Response {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await client.execute(request, timeout: timeout)
        let buffer = try await response.body.collect(upTo: 1 << 20)
        return Response(status: response.status.code, body: String(buffer: buffer))
    }
}

/// The JSON both the container endpoint and IMDS return for role credentials.
struct TemporaryCredentialsDocument: Decodable {
    let AccessKeyId: String?
    let SecretAccessKey: String?
    let Token: String?
    let Expiration: String?
    let Code: String?
    let Message: String?

    /// Converts the document, explaining what is missing when it is incomplete.
    func credentials(source: String) throws -> AWSCredentials {
        if let code = Code, code != "Success" {
            throw CredentialProviderError(.failed, "\(source) answered Code=\(code)\(Message.map { ": \($0)" } ?? "")")
        }
        guard let key = AccessKeyId?.nonEmpty, let secret = SecretAccessKey?.nonEmpty else {
            throw CredentialProviderError(.failed, "\(source) answered without AccessKeyId/SecretAccessKey")
        }
        var expiration: Date?
        if let text = Expiration {
            guard let parsed = parseISO8601(text) else {
                throw CredentialProviderError(.failed, "\(source) answered an unreadable Expiration '\(text)'")
            }
            expiration = parsed
        }
        return AWSCredentials(accessKeyID: key, secretAccessKey: secret, sessionToken: Token?.nonEmpty, expiration: expiration)
    }

    static func decode(_ body: String, source: String) throws -> Self {
        do {
            return try JSONDecoder().decode(Self.self, from: Data(body.utf8))
        } catch {
            throw CredentialProviderError(.failed, "\(source) answered something that is not a credentials document")
        }
    }
}

/// Parses RFC 3339 timestamps with or without fractional seconds.
func parseISO8601(_ text: String) -> Date? {
    if let date = try? Date(text, strategy: Date.ISO8601FormatStyle()) { return date }
    return try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
}

/// Describes a transport failure in a few plain words, not the HTTP or NIO library's
/// type dump: `connection refused`, `timed out`, `connect timed out`, ….
public func describeTransportError(_ error: any Error) -> String {
    if let error = error as? HTTPClientError {
        switch error {
        case .deadlineExceeded, .readTimeout: return "timed out"
        case .connectTimeout: return "connect timed out"
        case .remoteConnectionClosed: return "the connection closed before the response arrived"
        case .cancelled: return "cancelled"
        default: break
        }
    }
    let text = String(describing: error)
    for (symptom, words) in [
        ("Connection refused", "connection refused"), ("Connection reset", "connection reset"),
        ("Broken pipe", "connection closed while sending"), ("timed out", "timed out"),
    ] where text.localizedCaseInsensitiveContains(symptom) {
        return words
    }
    return text.split(separator: "\n").first.map { String($0.prefix(200)) } ?? "network failure"
}
