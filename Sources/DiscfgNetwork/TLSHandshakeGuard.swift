import NIOCore
import NIOSSL
import NIOTLS

/// Bounds a connection's TLS handshake, and notes the subject of the client certificate
/// it verified: placed right after the ``ServerTLS`` handler, it closes a connection
/// whose handshake has not completed within the timeout (a client that connects and
/// stalls holds a slot of the connection cap only so long), and removes itself once the
/// handshake completes, so the connection's reads pass one handler fewer.
///
/// ```swift
/// try pipeline.addHandler(tls.handler(for: .http1))
/// try pipeline.addHandler(TLSHandshakeGuard(timeout: TimeAmount(tls.handshakeTimeout), peer: peer))
/// ```
public final class TLSHandshakeGuard: ChannelInboundHandler, RemovableChannelHandler {
    public typealias InboundIn = ByteBuffer

    private let timeout: TimeAmount
    private let peer: PeerCertificate?
    private let admits: (@Sendable (CertificateSubject?) -> Bool)?
    private var timer: Scheduled<Void>?
    private var completed = false

    /// A guard of one connection.
    /// - Parameters:
    ///   - timeout: how long the handshake may take.
    ///   - peer: where the client certificate's subject is noted (mutual TLS); nil not
    ///     to look.
    ///   - admits: whether a connection of this client certificate may go on; one that
    ///     may not is closed at once. Nil to admit every connection.
    public init(timeout: TimeAmount, peer: PeerCertificate?, admits: (@Sendable (CertificateSubject?) -> Bool)? = nil) {
        self.timeout = timeout
        self.peer = peer
        self.admits = admits
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    public func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    public func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        disarm()
    }

    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let tls = event as? TLSUserEvent, case .handshakeCompleted = tls, !completed else {
            return context.fireUserInboundEventTriggered(event)
        }
        completed = true
        disarm()
        var subject: CertificateSubject?
        if peer != nil || admits != nil {
            let certificate = try? context.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self).peerCertificate
            subject = certificate.map(CertificateSubject.init)
            peer?.set(subject)
        }
        if let admits, !admits(subject) {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    private func arm(_ context: ChannelHandlerContext) {
        guard timer == nil, !completed else { return }
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: timeout) {
            bound.value.close(promise: nil)
        }
    }

    private func disarm() {
        timer?.cancel()
        timer = nil
    }
}
