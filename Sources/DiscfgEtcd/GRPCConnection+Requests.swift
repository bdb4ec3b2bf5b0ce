import GRPCCore
import NIOCore

extension GRPCConnection {
    /// Opens a stream for a well-formed request head, or answers it at once: 415 for a
    /// request that is not gRPC, `UNIMPLEMENTED` for an unknown method or a compressed one.
    func open(_ id: UInt32, head: GRPCRequestHead, endStream: Bool) {
        guard let context else { return }
        guard head.contentType?.hasPrefix("application/grpc") == true else {
            // Not gRPC at all: an HTTP answer.
            answerWithoutStream(id, .fields([(":status", "415"), ("content-type", "text/plain")]), requestEnded: endStream)
            return
        }
        guard let method = methods[head.path] else {
            answerWithoutStream(id, .trailersOnly(RPCError(code: .unimplemented, message: "unknown method \(head.path)")), requestEnded: endStream)
            return
        }
        if let refusal = method.refusal() {
            // The server's access rule (EtcdAccess) refuses every call now.
            answerWithoutStream(id, .trailersOnly(refusal), requestEnded: endStream)
            return
        }
        if let encoding = head.encoding, encoding != "identity" {
            let refusal = RPCError(code: .unimplemented, message: "message compression \(encoding) is not supported; send messages uncompressed")
            answerWithoutStream(id, .trailersOnly(refusal), requestEnded: endStream)
            return
        }
        let bytes = StreamBytes(connection: connectionBytes, server: serverBytes)
        do {
            if case .bidirectional = method.kind {
                try bytes.take(Self.streamingOverheadBytes)
            } else {
                try bytes.take(Self.streamOverheadBytes)
            }
        } catch {
            // The connection (or the server) holds all it may: no new request until it
            // holds less.
            answerWithoutStream(id, .trailersOnly(Self.overBudget(error)), requestEnded: endStream)
            return
        }
        let stream = Stream(id: id, method: method, bytes: bytes, pending: context.channel.allocator.buffer(capacity: 0), sendWindow: peerInitialWindow)
        streams[id] = stream
        idleSince = nil
        if case .bidirectional(let body) = method.kind {
            let (queued, continuation) = AsyncThrowingStream<[UInt8], any Error>.makeStream()
            stream.requests = continuation
            // A message read by the method no longer counts against the budgets.
            let requests = RPCAsyncSequence(wrapping: queued.map { message in
                bytes.taken(5 + message.count + Self.messageOverheadBytes)
                return message
            })
            let loop = LoopBoundConnection(self, context.eventLoop)
            let writer = GRPCResponseWriter { bytes in try await loop.send(bytes, on: id) }
            let serverContext = serverContext(method, context)
            stream.task = Task(executorPreference: executor) {
                do {
                    try await body(requests, writer, serverContext)
                    loop.finish(id, nil)
                } catch {
                    loop.finish(id, error)
                }
            }
        }
        if endStream { requestsEnded(stream) }
    }

    /// Bytes of a request's messages, as DATA brought them.
    func received(_ data: ByteBuffer, on stream: Stream, endStream: Bool) {
        var data = data
        let count = data.readableBytes
        if count > 0 {
            do {
                try stream.bytes.take(count)
            } catch {
                fail(stream, Self.overBudget(error))
                return
            }
            stream.pending.writeBuffer(&data)
            let buffered = stream.pending.readableBytes
            guard takeMessages(stream) else { return }
            // The clock of a message not yet whole starts at its first byte.
            if stream.pending.readableBytes == 0 {
                stream.messageSince = nil
            } else if stream.messageSince == nil || stream.pending.readableBytes < buffered {
                stream.messageSince = now
            }
        }
        if endStream { requestsEnded(stream) }
    }

    /// Takes every whole message from the stream's bytes; false when the stream failed.
    private func takeMessages(_ stream: Stream) -> Bool {
        while stream.pending.readableBytes >= 5 {
            guard let flag: UInt8 = stream.pending.getInteger(at: stream.pending.readerIndex),
                  let length: UInt32 = stream.pending.getInteger(at: stream.pending.readerIndex + 1)
            else { return true }
            guard Int(length) <= Self.maxMessageBytes else {
                fail(stream, RPCError(code: .resourceExhausted, message: "a request message of \(length) bytes is over the limit of \(Self.maxMessageBytes)"))
                return false
            }
            guard flag == 0 else {
                fail(stream, RPCError(code: .internalError, message: "a compressed request message with no grpc-encoding"))
                return false
            }
            guard stream.pending.readableBytes >= 5 + Int(length) else { return true }
            // A message apart from the stream's bytes costs more than its bytes.
            do {
                try stream.bytes.take(Self.messageOverheadBytes)
            } catch {
                fail(stream, Self.overBudget(error))
                return false
            }
            stream.pending.moveReaderIndex(forwardBy: 5)
            let message = stream.pending.readBytes(length: Int(length)) ?? []
            if let requests = stream.requests {
                requests.yield(message)
            } else if stream.request == nil {
                stream.request = message
            } else {
                fail(stream, RPCError(code: .unimplemented, message: "more than one request message for the unary method \(stream.method.descriptor)"))
                return false
            }
        }
        stream.pending.discardReadBytes()
        return true
    }

    /// The client sent its last request message.
    func requestsEnded(_ stream: Stream) {
        stream.requestsEnded = true
        guard stream.pending.readableBytes == 0 else {
            fail(stream, RPCError(code: .internalError, message: "the request stream ended inside a message"))
            return
        }
        switch stream.method.kind {
        case .bidirectional:
            stream.requests?.finish()
        case .unary(let body):
            guard stream.task == nil, stream.trailers == nil, let context else { return }
            guard let request = stream.request else {
                fail(stream, RPCError(code: .internalError, message: "no request message for \(stream.method.descriptor)"))
                return
            }
            let loop = LoopBoundConnection(self, context.eventLoop)
            let serverContext = serverContext(stream.method, context)
            let id = stream.id
            stream.task = Task(executorPreference: executor) {
                do {
                    let response = try await body(request, serverContext)
                    loop.respond(id, response)
                } catch {
                    loop.finish(id, error)
                }
            }
        }
    }

    private func serverContext(_ method: GRPCMethod, _ context: ChannelHandlerContext) -> ServerContext {
        let peers = peers ?? (context.remoteAddress.map { "\($0)" } ?? "unknown", context.localAddress.map { "\($0)" } ?? "unknown")
        self.peers = peers
        return ServerContext(descriptor: method.descriptor, remotePeer: peers.remote, localPeer: peers.local, cancellation: ServerContext.RPCCancellationHandle())
    }

    /// The answer to a request whose bytes would pass a budget.
    private static func overBudget(_ refusal: StreamBytes.Refusal) -> RPCError {
        switch refusal {
        case .connection(let limit):
            RPCError(code: .resourceExhausted, message: "this connection already holds \(limit >> 20) MiB of requests not yet answered or read and of answers not yet taken, its limit; wait for answers before sending more")
        case .server(let limit):
            RPCError(code: .resourceExhausted, message: "the server already holds \(limit >> 20) MiB of requests and answers over all connections, its limit for them; retry shortly")
        }
    }

    /// Ends a stream with an error, whatever its method was doing.
    func fail(_ stream: Stream, _ error: RPCError) {
        stream.task?.cancel()
        finish(stream.id, error)
    }
}
