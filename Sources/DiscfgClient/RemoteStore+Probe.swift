import AsyncHTTPClient
import DiscfgAWS
import DiscfgCore
import DiscfgWire
import Foundation
import NIOCore

/// A discfg server's answer to one plain request, whatever its status: what `discfg
/// doctor` reads to tell a server that is down from one that wants a token, or refuses
/// the one it got.
public struct ServerAnswer: Sendable {
    /// The HTTP status.
    public var status: Int
    /// The server's error, when the body is an error envelope.
    public var error: DiscfgError?
    /// The server's clock, from its `Date` header, with ours when the answer arrived.
    public var clock: ServerClockReading?
}

extension RemoteStore {
    /// The server's address, as requests are sent to it.
    public var address: String { transport.baseURL }

    /// Whether requests carry a bearer token.
    public var sendsToken: Bool { transport.token != nil }

    /// Whether requests are signed with AWS SigV4 (an API behind API Gateway with IAM auth).
    public var signsRequests: Bool { transport.token == nil && transport.signing != nil }

    /// Sends `GET path` and returns the answer whatever its status.
    ///
    /// - Parameters:
    ///   - path: The path, already encoded, e.g. `/healthz`.
    ///   - anonymous: Send neither the token nor a signature, to learn whether the
    ///     server wants one.
    ///   - timeout: How long the request may take.
    /// - Throws: `unavailable` naming the server when it cannot be reached in time.
    public func probe(_ path: String, anonymous: Bool = false, timeout: Duration) async throws -> ServerAnswer {
        let transport = anonymous
            ? try HTTPTransport(url: URL(string: self.transport.baseURL)!, token: nil, client: self.transport.client, timeout: self.transport.timeout)
            : self.transport
        let reply = try await transport.send(.GET, path, timeout: TimeAmount(timeout))
        let envelope = try? JSONDecoder.discfg().decode(Envelope.self, from: reply.body)
        let clock = reply.headers.first(name: "Date").flatMap(AWSTimestamp.parseHTTPDate).map {
            ServerClockReading(serverDate: $0, localDate: Date())
        }
        return ServerAnswer(
            status: reply.status,
            error: envelope?.error.map { DiscfgError($0.code, $0.message, field: $0.field) },
            clock: clock
        )
    }
}
