import DiscfgNetwork
import HummingbirdCore
import NIOCore
import NIOHTTPTypes

/// One REST connection as the router's task serves it: its channel, and the client
/// certificate its TLS handshake verified, when the server asks for one.
struct ServerChannelConnection: ServerChildChannelValue {
    let asyncChannel: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>
    /// Filled in when the handshake completes; nil without client certificates.
    let peer: PeerCertificate?

    var channel: any Channel { asyncChannel.channel }
}

/// The client certificate of the connection whose requests the current task answers,
/// for the request context (``APIRequestContext``): set once per connection, around
/// all of its requests, and only on servers that ask for client certificates.
enum ConnectionCertificate {
    @TaskLocal static var peer: PeerCertificate?
}

extension ServerChannel {
    /// Puts TLS first in a new connection's pipeline, before the HTTP codec, so every
    /// handler after it — the event loop's answers included — reads and writes plain
    /// HTTP as on a connection without TLS; and a guard that closes the connection if
    /// its handshake stalls (it counts against the cap meanwhile, as ``ServerConnection``
    /// counts it in on activation).
    /// - Returns: where the client certificate's subject will be, when `tls` asks for one.
    static func addTLS(_ tls: ServerTLS, to pipeline: ChannelPipeline.SynchronousOperations) throws -> PeerCertificate? {
        let peer = tls.requiresClientCertificates ? PeerCertificate() : nil
        try pipeline.addHandler(tls.handler(for: .http1))
        try pipeline.addHandler(TLSHandshakeGuard(timeout: TimeAmount(tls.handshakeTimeout), peer: peer))
        return peer
    }
}
