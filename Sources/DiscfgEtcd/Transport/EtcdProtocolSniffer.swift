import NIOCore

/// The first handler of an etcd API connection (under TLS, the first after it): reads
/// the client's first bytes and hands the connection to gRPC when they are HTTP/2's
/// preface, as gRPC clients send it from the first byte, or to the HTTP/JSON gateway
/// otherwise (HTTP/1.1), as etcd serves both on its client port. It decides on the
/// first byte that differs from the preface, so an HTTP/1.1 request is never held; a
/// client that sends nothing within the idle timeout is closed, as a connection that
/// does not finish its preface is.
final class EtcdProtocolSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The client preface of HTTP/2 (RFC 9113, 3.4).
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// Adds the handlers of one protocol after this one, on the loop.
    typealias Install = @Sendable (any Channel) throws -> Void

    private let http2: Install
    private let http1: Install
    private let idleTimeout: TimeAmount
    private var buffered: ByteBuffer?
    private var timer: Scheduled<Void>?
    private var decided = false

    init(idleTimeout: TimeAmount, http2: @escaping Install, http1: @escaping Install) {
        self.idleTimeout = idleTimeout
        self.http2 = http2
        self.http1 = http1
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: idleTimeout) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        guard !decided else {
            context.fireChannelRead(data)
            return
        }
        if buffered == nil {
            buffered = bytes
        } else {
            buffered!.writeBuffer(&bytes)
        }
        guard let seen = buffered, let isHTTP2 = Self.isHTTP2(seen) else { return }
        decided = true
        timer?.cancel()
        do {
            try (isHTTP2 ? http2 : http1)(context.channel)
        } catch {
            context.close(promise: nil)
            return
        }
        buffered = nil
        context.fireChannelRead(wrapInboundOut(seen))
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // A server winding down closes a connection that has not said what it speaks.
        if event is ChannelShouldQuiesceEvent, !decided {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Whether `bytes` begin HTTP/2's preface (true), differ from it (false), or are too
    /// few to tell (nil).
    static func isHTTP2(_ bytes: ByteBuffer) -> Bool? {
        let count = min(bytes.readableBytes, preface.count)
        guard let seen = bytes.getBytes(at: bytes.readerIndex, length: count) else { return nil }
        guard seen.elementsEqual(preface.prefix(count)) else { return false }
        return count == preface.count ? true : nil
    }
}
