import DiscfgNetwork
import DiscfgCore
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// The HTTP/1.1 connections of `discfg serve`: NIO's codec, then ``ServerConnection``,
/// which keeps the connection's life and answers the key reads and writes the event loop
/// can take, and then the router's channel for everything else, as Hummingbird's own
/// HTTP/1 channel would run it (but without its `HTTPConnectionStateHandler`, whose
/// concerns ``ConnectionStateMachine`` keeps for every request of the connection).
struct ServerChannel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = ServerChannelConnection

    let responder: HTTPChannelHandler.Responder
    let cap: ConnectionCap
    let reads: KeyReads?
    let accessLog: AccessLog?
    let idleTimeout: TimeAmount?
    /// TLS for every connection; nil for plain HTTP.
    let tls: ServerTLS?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            let peer = try tls.flatMap { try Self.addTLS($0, to: pipeline) }
            // As Hummingbird's HTTP1Channel (the router's channel answers pipelined requests
            // in turn, the router answers errors, HTTPTypes checks header values), but with
            // an encoder that is not told each request's method: the answers given on the
            // event loop are written below it, so it would wait for heads they never give.
            // A `HEAD` answer's body is the router's to leave out, as Hummingbird's does.
            try pipeline.addHandler(HTTPResponseEncoder(configuration: .init()))
            try pipeline.addHandler(ByteToMessageHandler(HTTPRequestDecoder(
                leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .drop, limitConfiguration: .init()
            )))
            try pipeline.addHandler(ServerConnection(
                cap: cap, idleTimeout: idleTimeout, reads: reads, log: accessLog?.buffer(for: channel.eventLoop),
                peerIsLoopback: channel.remoteAddress.map(Loopback.contains), peer: peer
            ))
            try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: tls != nil))
            let asyncChannel = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true)
            )
            return ServerChannelConnection(asyncChannel: asyncChannel, peer: peer)
        }
    }

    func handle(value connection: Value, logger: Logger) async {
        guard let peer = connection.peer else { return await handleHTTP(asyncChannel: connection.asyncChannel, logger: logger) }
        await ConnectionCertificate.$peer.withValue(peer) { await handleHTTP(asyncChannel: connection.asyncChannel, logger: logger) }
    }
}
