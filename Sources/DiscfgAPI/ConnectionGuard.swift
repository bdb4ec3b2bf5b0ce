import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes
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

    /// A handler for one new connection, for the HTTP pipeline.
    func handler() -> ConnectionGuardHandler { ConnectionGuardHandler(guard: self) }

    /// Counts a connection in; false when the server already serves `limit`.
    fileprivate func admit() -> Bool {
        let now = open.add(1, ordering: .relaxed).newValue
        if now <= limit { return true }
        open.subtract(1, ordering: .relaxed)
        return false
    }

    fileprivate func leave() { open.subtract(1, ordering: .relaxed) }

    /// The connections a server may have accepted before it stops accepting: the limit,
    /// plus room for the ones being turned away, so a flood still gets answers without
    /// the server running out of file descriptors.
    var acceptLimit: Int { limit + max(64, limit / 8) }

    /// The answer to a request on a connection over the limit.
    fileprivate static let refusal: (head: HTTPResponse, body: String) = {
        let body = #"{"action":"connect","error":{"code":"unavailable","message":"the server is serving as many connections as it allows (--max-connections); retry in a second"}}"# + "\n"
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        fields[.contentLength] = String(body.utf8.count)
        fields[.retryAfter] = "1"
        fields[.connection] = "close"
        return (HTTPResponse(status: .serviceUnavailable, headerFields: fields), body)
    }()
}

/// Sits after the HTTP codec of each connection: turns the connection away when the
/// server is full, and closes it when the client leaves the server's writes unread for
/// longer than the guard allows (the channel stays unwritable: the kernel's send buffer
/// is full and nothing drains it).
final class ConnectionGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let connectionGuard: ConnectionGuard
    private var admitted = false
    private var refused = false
    private var stall: Scheduled<Void>?

    init(guard connectionGuard: ConnectionGuard) {
        self.connectionGuard = connectionGuard
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arrive() }
    }

    func channelActive(context: ChannelHandlerContext) {
        if !admitted, !refused { arrive() }
        context.fireChannelActive()
    }

    private func arrive() {
        if connectionGuard.admit() { admitted = true } else { refused = true }
    }

    func channelInactive(context: ChannelHandlerContext) {
        depart()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        depart()
    }

    private func depart() {
        stall?.cancel()
        stall = nil
        if admitted {
            admitted = false
            connectionGuard.leave()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard refused else {
            context.fireChannelRead(data)
            return
        }
        // Answer the first request of a refused connection once its head has arrived
        // (closing before reading it would reset the connection and lose the answer),
        // and drop everything else it sends.
        guard case .head = unwrapInboundIn(data) else { return }
        refused = false
        let refusal = ConnectionGuard.refusal
        context.write(wrapOutboundOut(.head(refusal.head)), promise: nil)
        context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(string: refusal.body))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            stall?.cancel()
            stall = nil
        } else if stall == nil {
            let channel = context.channel
            let (seconds, attoseconds) = connectionGuard.stallTimeout.components
            let timeout = TimeAmount.nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
            stall = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
                channel.close(promise: nil)
            }
        }
        context.fireChannelWritabilityChanged()
    }
}
