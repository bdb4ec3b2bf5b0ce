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
/// which answers the key reads the views can answer on the event loop, and then the
/// router's channel for everything else, as Hummingbird's own HTTP/1 channel would run it.
struct ServerChannel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    let responder: HTTPChannelHandler.Responder
    let connections: ConnectionGuard
    let reads: KeyReads?
    let accessLog: AccessLog?
    let idleTimeout: TimeAmount?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            // As Hummingbird's HTTP1Channel: the router's channel answers pipelined requests
            // in turn, the router answers errors, HTTPTypes checks header values.
            try pipeline.configureHTTPServerPipeline(
                withPipeliningAssistance: false, withErrorHandling: false, withOutboundHeaderValidation: false,
                withEncoderConfiguration: .init(), withDecoderLimitConfiguration: .init()
            )
            try pipeline.addHandler(ServerConnection(
                connections: connections, idleTimeout: idleTimeout, reads: reads, log: accessLog?.buffer(for: channel.eventLoop),
                peerIsLoopback: channel.remoteAddress.map(Loopback.contains)
            ))
            try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
            return try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
        }
    }

    func handle(value asyncChannel: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: asyncChannel, logger: logger)
    }
}

/// One connection's keeper, between the HTTP codec and the router's channel.
///
/// - **Limits** (``ConnectionGuard``): a connection over the server's limit gets one
///   `503` and is closed; one whose client leaves the answers unread for longer than the
///   guard allows is closed.
/// - **Idle and shutdown**: a connection with no request for the idle timeout is closed
///   (a request head sent too slowly counts as none, a body that stops coming too); on
///   graceful shutdown, idle connections close at once and busy ones after their answer.
/// - **Key reads and writes** (``KeyReads``): reads answered here when the views can,
///   plain writes whose whole request came in one read handed straight to the store;
///   everything else handed on to the router. A request is answered here only when no earlier request of
///   the connection is still waiting for the router's answer, so pipelined answers stay
///   in order, and only while the connection is writable, so a client that does not
///   read its answers is held back by the router's channel.
final class ServerConnection: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let connections: ConnectionGuard
    private let idleTimeout: TimeAmount?
    private let reads: KeyReads?
    private let log: AccessLog.Buffer?
    private let peerIsLoopback: Bool?

    private var admitted = false
    private var refused = false
    private var stall: Scheduled<Void>?

    /// Requests whose head arrived and whose answer has not ended.
    private var inProgress = 0
    /// Whether a request's head arrived and its end has not.
    private var reading = false
    private var lastActive = NIODeadline.now()
    private var idleCheck: Scheduled<Void>?
    private var closeWhenIdle = false

    /// A candidate read or write whose head arrived and whose end has not, with the
    /// write's body so far.
    private var held: (head: HTTPRequestHead, candidate: KeyReads.Candidate, body: ByteBuffer?)?
    /// Whether a write taken here is with the store. Meanwhile the socket is not read,
    /// and what was already read waits in `queued`, so no answer overtakes the write's.
    private var writing = false
    private var queued: [HTTPServerRequestPart] = []
    /// A read of the socket asked for while writing, made once the write is answered.
    private var readPending = false
    /// Requests handed to the router and not yet answered, oldest first, each with the
    /// config to view if the router answers it 200 (a read the views missed).
    private var handedOn: [ConfigName?] = []
    private var handedOnSinceReadComplete = false
    private var needsFlush = false

    init(connections: ConnectionGuard, idleTimeout: TimeAmount?, reads: KeyReads?, log: AccessLog.Buffer?, peerIsLoopback: Bool?) {
        self.connections = connections
        self.idleTimeout = idleTimeout
        self.reads = reads
        self.log = log
        self.peerIsLoopback = peerIsLoopback
    }

    // MARK: Arriving and leaving

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arrive(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if !admitted, !refused { arrive(context) }
        context.fireChannelActive()
    }

    private func arrive(_ context: ChannelHandlerContext) {
        if connections.admit() { admitted = true } else { refused = true }
        lastActive = .now()
        scheduleIdleCheck(context)
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
        idleCheck?.cancel()
        idleCheck = nil
        if admitted {
            admitted = false
            connections.leave()
        }
    }

    // MARK: Requests

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        lastActive = .now()
        if refused {
            refuse(part, context: context)
            return
        }
        if writing {
            queued.append(part)
            return
        }
        handle(part, context: context)
    }

    private func handle(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        switch part {
        case .head(let head):
            inProgress += 1
            reading = true
            if handedOn.isEmpty, let reads, context.channel.isWritable, let candidate = reads.candidate(head) {
                held = (head, candidate, nil)
            } else {
                handOn(head, wanting: nil, context: context)
            }
        case .body(let buffer):
            if var taken = held {
                if taken.candidate.isWrite, (taken.body?.readableBytes ?? 0) + buffer.readableBytes <= taken.candidate.contentLength {
                    if taken.body == nil {
                        taken.body = buffer
                    } else {
                        var received = buffer
                        taken.body!.writeBuffer(&received)
                    }
                    held = taken
                    return
                }
                // A read with a body, or a body longer than announced: the router's to judge.
                held = nil
                handOn(taken.head, wanting: nil, context: context)
                if let body = taken.body { forward(wrapInboundOut(.body(body)), context: context) }
            }
            forward(wrapInboundOut(part), context: context)
        case .end:
            reading = false
            guard let (head, candidate, body) = held else {
                forward(wrapInboundOut(part), context: context)
                return
            }
            held = nil
            if candidate.isWrite {
                let value = body ?? context.channel.allocator.buffer(capacity: 0)
                if let reads, value.readableBytes == candidate.contentLength,
                   let write = reads.write(candidate, body: value, peerIsLoopback: peerIsLoopback) {
                    startWrite(write, candidate: candidate, reads: reads, context: context)
                } else {
                    handOn(head, wanting: nil, context: context)
                    if let body { forward(wrapInboundOut(.body(body)), context: context) }
                    forward(wrapInboundOut(part), context: context)
                }
                return
            }
            if let reads, let answer = reads.answer(candidate, peerIsLoopback: peerIsLoopback, log: log) {
                context.write(wrapOutboundOut(.head(answer.head)), promise: nil)
                if let body = answer.body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
                context.write(wrapOutboundOut(.end(nil)), promise: nil)
                needsFlush = true
                answered(context)
            } else {
                handOn(head, wanting: reads.flatMap { _ in try? ConfigName(String(candidate.configName)) }, context: context)
                forward(wrapInboundOut(part), context: context)
            }
        }
    }

    /// Hands a write to the store; its answer is written on this event loop when the
    /// store has committed it (or failed), and what arrived meanwhile is taken up then.
    private func startWrite(
        _ write: (config: ConfigName, key: Key, value: Data, options: SetOptions), candidate: KeyReads.Candidate, reads: KeyReads,
        context: ChannelHandlerContext
    ) {
        writing = true
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let store = reads.store
        Task {
            let result: Result<Event, any Error>
            do {
                result = .success(try await store.set(write.key, to: write.value, in: write.config, options: write.options))
            } catch {
                result = .failure(error)
            }
            loopBound.eventLoop.execute {
                let (handler, context) = loopBound.value
                handler.finishWrite(result, in: write.config, candidate: candidate, reads: reads, context: context)
            }
        }
    }

    private func finishWrite(
        _ result: Result<Event, any Error>, in config: ConfigName, candidate: KeyReads.Candidate, reads: KeyReads, context: ChannelHandlerContext
    ) {
        writing = false
        let answer = reads.answer(write: result, in: config, candidate: candidate, log: log)
        context.write(wrapOutboundOut(.head(answer.head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(answer.body))), promise: nil)
        context.write(wrapOutboundOut(.end(nil)), promise: nil)
        needsFlush = true
        answered(context)
        // What arrived during the write, in order, until another write starts.
        while !writing, !queued.isEmpty {
            handle(queued.removeFirst(), context: context)
        }
        channelReadComplete(context: context)
        if !writing, readPending {
            readPending = false
            context.read()
        }
    }

    func read(context: ChannelHandlerContext) {
        if writing {
            readPending = true
        } else {
            context.read()
        }
    }

    private func handOn(_ head: HTTPRequestHead, wanting config: ConfigName?, context: ChannelHandlerContext) {
        handedOn.append(config)
        forward(wrapInboundOut(.head(head)), context: context)
    }

    private func forward(_ data: NIOAny, context: ChannelHandlerContext) {
        handedOnSinceReadComplete = true
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // A request not whole by the end of a read (a body still coming) is the router's,
        // which bounds how long it may take.
        if let taken = held {
            held = nil
            handOn(taken.head, wanting: nil, context: context)
            if let body = taken.body { forward(wrapInboundOut(.body(body)), context: context) }
        }
        if needsFlush {
            needsFlush = false
            context.flush()
        }
        // The router's channel hears of read cycles that brought it something.
        if handedOnSinceReadComplete {
            handedOnSinceReadComplete = false
            context.fireChannelReadComplete()
        }
    }

    /// Answers the first request of a connection over the limit once its head has arrived
    /// (closing before reading it would reset the connection and lose the answer), and
    /// drops everything else it sends.
    private func refuse(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        guard case .head = part else { return }
        refused = false
        let refusal = ConnectionGuard.refusal
        context.write(wrapOutboundOut(.head(refusal.head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: refusal.body)))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }

    // MARK: Answers

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let response) where response.status.code >= 200 || response.status == .switchingProtocols:
            if response.status == .ok, let config = handedOn.first ?? nil { reads?.views.want(config) }
            context.write(data, promise: promise)
        case .end:
            if !handedOn.isEmpty { handedOn.removeFirst() }
            context.write(data, promise: promise)
            answered(context)
        default:
            context.write(data, promise: promise)
        }
    }

    /// A request's answer has ended.
    private func answered(_ context: ChannelHandlerContext) {
        inProgress -= 1
        guard inProgress == 0 else { return }
        if closeWhenIdle {
            context.flush()
            context.close(promise: nil)
            return
        }
        lastActive = .now()
        scheduleIdleCheck(context)
    }

    // MARK: Idle connections and shutdown

    private func scheduleIdleCheck(_ context: ChannelHandlerContext) {
        guard let idleTimeout, idleCheck == nil else { return }
        let deadline = lastActive + idleTimeout
        idleCheck = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            idleCheck = nil
            // Answering a request that has been read: not idle; checked again once answered.
            if !reading, inProgress > 0 { return }
            if NIODeadline.now() >= lastActive + idleTimeout {
                context.close(promise: nil)
            } else {
                scheduleIdleCheck(context)
            }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        if inProgress == 0 {
            context.close(promise: nil)
        } else {
            closeWhenIdle = true
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            stall?.cancel()
            stall = nil
        } else if stall == nil {
            let channel = context.channel
            let (seconds, attoseconds) = connections.stallTimeout.components
            let timeout = TimeAmount.nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
            stall = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
                channel.close(promise: nil)
            }
        }
        context.fireChannelWritabilityChanged()
    }
}
