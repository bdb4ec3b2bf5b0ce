import AsyncHTTPClient
import DiscfgAWS
import DiscfgCore
import DiscfgWire
import Foundation
import NIOCore
import NIOHTTP1

/// Sends discfg API requests and turns replies into envelopes or ``DiscfgError``s.
struct HTTPTransport: Sendable {
    struct Reply: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var body: Data
    }

    let baseURL: String
    let token: String?
    let signing: AWSRequestSigning?
    let client: HTTPClient
    let timeout: TimeAmount

    init(url: URL, token: String?, signing: AWSRequestSigning? = nil, client: HTTPClient, timeout: TimeAmount) throws {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil else {
            throw DiscfgError.invalid("store", "\(url) is not an http:// or https:// server address")
        }
        var base = url.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        baseURL = base
        self.token = token
        self.signing = signing
        self.client = client
        self.timeout = timeout
    }

    /// The request for `path` (already encoded) with the token or SigV4 signature and `headers`.
    func makeRequest(_ method: HTTPMethod, _ path: String, body: Data? = nil, headers: [(String, String)] = []) async throws -> HTTPClientRequest {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        var fields = headers.map { HTTPHeaderField(name: $0.0, value: $0.1) }
        if method != .GET, let message = Attribution.current?.message {
            // Only the message travels: the server records the principal it authenticated.
            fields.append(HTTPHeaderField(name: ChangeMessageHeader.name, value: ChangeMessageHeader.value(message)))
        }
        if let token { fields.append(HTTPHeaderField(name: "Authorization", value: "Bearer \(token)")) }
        if let signing, token == nil, let url = URL(string: baseURL + path) {
            let credentials: AWSCredentials
            do {
                credentials = try await signing.credentials.credentials()
            } catch {
                throw DiscfgError(.unauthenticated, "cannot sign the request with AWS credentials: \(error)", field: "credentials")
            }
            let unsigned = SigV4Request(method: method.rawValue, url: url, headers: fields)
            fields = signing.signer.sign(unsigned, payload: .bytes(body ?? Data()), credentials: credentials, date: Date()).headers
        }
        // Not signed: CloudFront in front of an edge-optimized API may rewrite it.
        fields.append(HTTPHeaderField(name: "User-Agent", value: "discfg-client"))
        for field in fields { request.headers.add(name: field.name, value: field.value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        return request
    }

    /// Sends a request and reads the whole reply; network failures are `unavailable`.
    func send(_ method: HTTPMethod, _ path: String, body: Data? = nil, headers: [(String, String)] = [], timeout: TimeAmount? = nil) async throws -> Reply {
        let request = try await makeRequest(method, path, body: body, headers: headers)
        do {
            let response = try await client.execute(request, timeout: timeout ?? self.timeout)
            let bytes = try await response.body.collect(upTo: 64 * 1024 * 1024)
            return Reply(status: Int(response.status.code), headers: response.headers, body: Data(bytes.readableBytesView))
        } catch let error as DiscfgError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw Self.unreachable(baseURL, error)
        }
    }

    /// A request the server at `baseURL` did not answer, in one sentence a person can act
    /// on: `cannot connect to discfg at http://127.0.0.1:8899: connection refused`, not
    /// the HTTP or NIO library's description of `error`.
    static func unreachable(_ baseURL: String, _ error: any Error) -> DiscfgError {
        if let handshake = ClientTLS.explain(error) {
            return DiscfgError(.unavailable, "cannot reach the discfg server at \(baseURL): \(handshake)", field: "store")
        }
        let words = describeTransportError(error)
        let connecting = words == "connection refused" || words == "connect timed out" || words.hasPrefix("DNS error")
        return DiscfgError(
            .unavailable, connecting ? "cannot connect to discfg at \(baseURL): \(words)" : "cannot reach the discfg server at \(baseURL): \(words)", field: "store"
        )
    }

    /// Sends a request and decodes the envelope, throwing the server's error as a
    /// ``DiscfgError`` (with the current item of a failed condition).
    func envelope(_ method: HTTPMethod, _ path: String, body: Data? = nil, headers: [(String, String)] = [], timeout: TimeAmount? = nil) async throws -> Envelope {
        let reply = try await send(method, path, body: body, headers: headers, timeout: timeout)
        return try Self.decode(reply, baseURL: baseURL)
    }

    static func decode(_ reply: Reply, baseURL: String) throws -> Envelope {
        let envelope: Envelope
        do {
            envelope = try JSONDecoder.discfg().decode(Envelope.self, from: reply.body)
        } catch {
            throw DiscfgError(.unavailable, "the server at \(baseURL) answered \(reply.status) with something that is not a discfg envelope", field: "store")
        }
        if let error = envelope.error {
            var failure = DiscfgError(error.code, error.message, field: error.field, currentItem: try envelope.item?.item(), violations: error.violations ?? [])
            failure.correlationID = error.correlationId
            throw failure
        }
        guard (200..<300).contains(reply.status) else {
            throw DiscfgError(.unavailable, "the server at \(baseURL) answered \(reply.status)", field: "store")
        }
        return envelope
    }
}

/// Percent-encoding for the parts of API URLs.
enum URLPart {
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// One path segment or query value.
    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// A key path without its leading slash, each segment encoded.
    static func keyPath(_ key: Key) -> String {
        key.path.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map { encode(String($0)) }.joined(separator: "/")
    }

    /// The path of a prefix under `/v1/{config}`: `/keys/app/db/` for `/app/db/`, `/keys` for
    /// the root.
    static func prefixPath(_ prefix: KeyPrefix) -> String {
        guard prefix != .root else { return "/keys" }
        return "/keys/" + prefix.path.dropFirst().dropLast().split(separator: "/", omittingEmptySubsequences: false).map { encode(String($0)) }.joined(separator: "/") + "/"
    }

    /// `?a=b&c=d` from the pairs whose value is not nil.
    static func query(_ pairs: [(String, String?)]) -> String {
        let present = pairs.compactMap { name, value in value.map { "\(name)=\(encode($0))" } }
        return present.isEmpty ? "" : "?" + present.joined(separator: "&")
    }
}
