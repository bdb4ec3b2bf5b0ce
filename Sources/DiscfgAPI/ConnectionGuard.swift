import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// What one server allows its connections: how many are served at once, and how long
/// a client may leave the server's answer unread.
///
/// Both protect the server from clients, not from load: a flood of connections gets a
/// quick `503` with `Retry-After` instead of piling up, and a client that stops reading
/// (an event stream nobody drains, a large page to a stalled peer) is disconnected
/// instead of holding its connection, its watch and its buffers for ever.
public final class ConnectionGuard: Sendable {
    /// The most connections served at once; more are answered `503` and closed.
    public let limit: Int
    /// How long a client may keep the connection's send buffer full (NIO's high-water
    /// mark, with the kernel's buffer below it full too) without draining it to the
    /// low-water mark: a client reading nothing, or a trickle.
    public let stallTimeout: Duration
    /// Connections being served now.
    private let open = Atomic<Int>(0)

    /// Creates the guard for one server.
    public init(limit: Int, stallTimeout: Duration) {
        self.limit = limit
        self.stallTimeout = stallTimeout
    }

    /// How many connections are being served now.
    public var openConnections: Int { open.load(ordering: .relaxed) }

    /// Counts a connection in; false when the server already serves `limit`.
    func admit() -> Bool {
        let now = open.add(1, ordering: .relaxed).newValue
        if now <= limit { return true }
        open.subtract(1, ordering: .relaxed)
        return false
    }

    func leave() { open.subtract(1, ordering: .relaxed) }

    /// The connections a server may have accepted before it stops accepting: the limit,
    /// plus room for the ones being turned away, so a flood still gets answers without
    /// the server running out of file descriptors.
    var acceptLimit: Int { Self.acceptLimit(for: limit) }

    /// The accept limit of a server serving `limit` connections at once.
    static func acceptLimit(for limit: Int) -> Int { limit + max(64, limit / 8) }

    /// The answer to a request on a connection over the limit.
    static let refusal: (head: HTTPResponseHead, body: String) = {
        let body = #"{"action":"connect","error":{"code":"unavailable","message":"the server is serving as many connections as it allows (--max-connections); retry in a second"}}"# + "\n"
        let headers = HTTPHeaders([
            ("Content-Type", "application/json"), ("Content-Length", String(body.utf8.count)), ("Retry-After", "1"), ("Connection", "close"),
        ])
        return (HTTPResponseHead(version: .http1_1, status: .serviceUnavailable, headers: headers), body)
    }()
}
