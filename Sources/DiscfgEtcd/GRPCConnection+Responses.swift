import GRPCCore
import NIOCore

/// Responses, on the event loop: headers, messages as DATA within the client's
/// flow-control windows, trailers once the messages before them left.
extension GRPCConnection {
    /// A header block this end sends.
    enum ResponseBlock {
        /// A response's headers: `:status: 200`, `content-type: application/grpc`.
        case headers
        /// The trailers of a call that succeeded: `grpc-status: 0`.
        case okTrailers
        /// Any other block.
        case fields([(name: String, value: String)])

        /// The trailers of a call that ended with `error`.
        static func trailers(_ error: (any Error)?) -> ResponseBlock {
            error == nil ? .okTrailers : .fields(GRPCStatus.fields(error))
        }

        /// A response's headers and its trailers in one block, for an answer with no message.
        static func trailersOnly(_ error: (any Error)?) -> ResponseBlock {
            .fields([(":status", "200"), ("content-type", "application/grpc")] + GRPCStatus.fields(error))
        }
    }

    /// What an answer message is charged from the moment it is built until it left.
    static func charge(_ message: [UInt8]) -> Int {
        5 + message.count + messageOverheadBytes
    }

    /// A unary response: headers, the message and trailers; or, when the connection or
    /// the server cannot hold the message, `RESOURCE_EXHAUSTED` in its place.
    func respond(_ id: UInt32, _ message: [UInt8]) {
        guard let stream = streams[id], stream.trailers == nil else { return }
        let charge = Self.charge(message)
        do {
            try StreamBytes.takeAnswer(charge, connection: connectionBytes, server: serverBytes)
        } catch {
            finish(id, Self.answerOverBudget(error))
            return
        }
        writeHeaders(.headers, on: id, endStream: false)
        stream.sentHeaders = true
        enqueue(message, charge: charge, on: stream, promise: nil)
        stream.trailers = .okTrailers
        sendQueued(stream)
        scheduleFlush()
    }

    /// A streaming response message; the future completes once it left for the client
    /// (failed with `RESOURCE_EXHAUSTED` when the connection or the server cannot hold
    /// it), nil when the stream is gone.
    func send(_ message: [UInt8], on id: UInt32) -> EventLoopFuture<Void>? {
        guard let context, let stream = streams[id], stream.trailers == nil else { return nil }
        let charge = Self.charge(message)
        do {
            try StreamBytes.takeAnswer(charge, connection: connectionBytes, server: serverBytes)
        } catch {
            return context.eventLoop.makeFailedFuture(Self.answerOverBudget(error))
        }
        if !stream.sentHeaders {
            stream.sentHeaders = true
            writeHeaders(.headers, on: id, endStream: false)
        }
        let promise = context.eventLoop.makePromise(of: Void.self)
        enqueue(message, charge: charge, on: stream, promise: promise)
        sendQueued(stream)
        scheduleFlush()
        return promise.futureResult
    }

    /// Ends a stream with its status: trailers after any response, or a trailers-only
    /// answer.
    func finish(_ id: UInt32, _ error: (any Error)?) {
        guard let stream = streams[id], stream.trailers == nil else { return }
        stream.requests?.finish()
        if stream.sentHeaders {
            stream.trailers = .trailers(error)
        } else {
            stream.sentHeaders = true
            stream.trailers = .trailersOnly(error)
        }
        sendQueued(stream)
        scheduleFlush()
    }

    /// Answers a request that opened no stream with `headers`, which end it.
    func answerWithoutStream(_ id: UInt32, _ block: ResponseBlock, requestEnded: Bool) {
        // A call answered at once is a call all the same: the idle clock starts again,
        // as it would after a stream that opened and ended.
        if streams.isEmpty { idleSince = now }
        writeHeaders(block, on: id, endStream: true)
        // The answer is whole: the client need not send the rest of its request.
        if !requestEnded { outbound.writeHTTP2Reset(stream: id, code: .noError) }
        scheduleFlush()
    }

    /// The answer to a method whose answer the connection or the server cannot hold.
    static func answerOverBudget(_ refusal: StreamBytes.Refusal) -> RPCError {
        switch refusal {
        case .connection(let limit):
            RPCError(code: .resourceExhausted, message: "this connection already holds \(limit >> 20) MiB of requests and of answers its client has not taken, its limit; read the answers (open the flow-control window) before asking for more")
        case .server(let limit):
            RPCError(code: .resourceExhausted, message: "the server already holds \(limit >> 20) MiB of requests and answers over all connections, its limit for them; retry shortly")
        }
    }

    /// Queues a message as gRPC frames it (a flag byte, its length, its bytes); `charge`
    /// was taken of the budgets for it, and goes back once it left.
    private func enqueue(_ message: [UInt8], charge: Int, on stream: Stream, promise: EventLoopPromise<Void>?) {
        let length = 5 + message.count
        if stream.queued.isEmpty, length <= min(sendWindow, stream.sendWindow, peerMaxFrameSize) {
            // Room for it now: written straight into the connection's output.
            outbound.writeHTTP2FrameHeader(length: length, type: .data, stream: stream.id)
            outbound.writeGRPCMessage(message)
            sendWindow -= length
            stream.sendWindow -= length
            outboundCharge += charge
            if let promise { outboundPromises.append(promise) }
            return
        }
        var framed = ByteBufferAllocator().buffer(capacity: length)
        framed.writeGRPCMessage(message)
        stream.queued.append(QueuedMessage(bytes: framed, promise: promise, charge: charge))
    }

    /// Sends what the windows allow of the stream's queued DATA, then, once none is left,
    /// its trailers, which end it.
    func sendQueued(_ stream: Stream) {
        var sent = false
        while var first = stream.queued.first {
            let room = min(sendWindow, stream.sendWindow, peerMaxFrameSize)
            guard room > 0 else {
                // WINDOW_UPDATE lets it go on: the stream's, or the connection's. Until
                // then the clock of the write timeout runs (from the last byte sent).
                if sendWindow <= 0, !blocked.contains(stream.id) { blocked.append(stream.id) }
                if sent || stream.waitingSince == nil { stream.waitingSince = now }
                return
            }
            sent = true
            let count = min(room, first.bytes.readableBytes)
            var part = first.bytes.readSlice(length: count)!
            outbound.writeHTTP2FrameHeader(length: count, type: .data, stream: stream.id)
            outbound.writeBuffer(&part)
            sendWindow -= count
            stream.sendWindow -= count
            if first.bytes.readableBytes == 0 {
                stream.queued.removeFirst()
                outboundCharge += first.charge
                if let promise = first.promise { outboundPromises.append(promise) }
            } else {
                stream.queued[stream.queued.startIndex] = first
            }
        }
        stream.waitingSince = nil
        guard let trailers = stream.trailers else { return }
        writeHeaders(trailers, on: stream.id, endStream: true)
        remove(stream.id)
        // The answer is whole: the client need not send the rest of its request.
        if !stream.requestsEnded { outbound.writeHTTP2Reset(stream: stream.id, code: .noError) }
    }

    /// Writes a header block as HEADERS, and CONTINUATION frames if the client's largest
    /// frame cannot hold it.
    func writeHeaders(_ block: ResponseBlock, on id: UInt32, endStream: Bool) {
        let start = outbound.writerIndex
        outbound.writeRepeatingByte(0, count: HTTP2Wire.frameHeaderBytes)
        switch block {
        case .headers: encoder.writeResponseHeaders(to: &outbound)
        case .okTrailers: encoder.writeOKTrailers(to: &outbound)
        case .fields(let fields): encoder.write(fields, to: &outbound)
        }
        let length = outbound.writerIndex - start - HTTP2Wire.frameHeaderBytes
        let last = HTTP2Wire.Flag.endHeaders | (endStream ? HTTP2Wire.Flag.endStream : 0)
        guard length > peerMaxFrameSize else {
            outbound.setHTTP2FrameHeader(at: start, length: length, type: .headers, flags: last, stream: id)
            return
        }
        var block = ByteBuffer(bytes: outbound.getBytes(at: start + HTTP2Wire.frameHeaderBytes, length: length)!)
        outbound.moveWriterIndex(to: start)
        var type = HTTP2Wire.FrameType.headers
        while block.readableBytes > 0 {
            let part = block.readSlice(length: min(peerMaxFrameSize, block.readableBytes))!
            var flags: UInt8 = block.readableBytes == 0 ? HTTP2Wire.Flag.endHeaders : 0
            if type == .headers, endStream { flags |= HTTP2Wire.Flag.endStream }
            outbound.writeHTTP2Frame(type: type, flags: flags, stream: id, payload: part)
            type = .continuation
        }
    }

    /// Forgets a stream; what its requests held goes back to the budgets. A connection
    /// going away (the client's GOAWAY or the server's shutdown) closes once its last
    /// stream is gone.
    @discardableResult
    func remove(_ id: UInt32) -> Stream? {
        guard let stream = streams.removeValue(forKey: id) else { return nil }
        stream.bytes.end()
        if streams.isEmpty { idleSince = now }
        if peerGoingAway || draining, streams.isEmpty, let context {
            // After what is framed now (the stream's trailers among it) left.
            let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
            context.eventLoop.execute { handler.value.closeAfterFlush() }
        }
        return stream
    }

    /// Ends what a stream that ended early was doing: its method, its requests, the
    /// messages it had not sent.
    func drop(_ stream: Stream) {
        stream.task?.cancel()
        stream.requests?.finish(throwing: CancellationError())
        while let item = stream.queued.popFirst() {
            StreamBytes.give(item.charge, connection: connectionBytes, server: serverBytes)
            item.promise?.fail(CancellationError())
        }
        stream.waitingSince = nil
    }

    /// Flushes once the loop has run what is queued on it now, so answers that finish
    /// together leave together.
    func scheduleFlush() {
        guard !flushScheduled, let context else { return }
        flushScheduled = true
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.execute {
            handler.value.flushScheduled = false
            handler.value.flush()
        }
    }

    /// Writes what was framed since the last flush, in one write.
    func flush() {
        guard let context, outbound.readableBytes > 0 else { return }
        let bytes = outbound
        outbound = context.channel.allocator.buffer(capacity: 1024)
        let promises = outboundPromises
        outboundPromises = []
        var promise: EventLoopPromise<Void>?
        if promises.count == 1 {
            promise = promises[0]
        } else if !promises.isEmpty {
            promise = context.eventLoop.makePromise(of: Void.self)
            promise!.futureResult.whenComplete { result in
                for each in promises { each.completeWith(result) }
            }
        }
        if outboundCharge > 0 {
            // The answers in this write are held until it completed (a socket whose
            // buffer is full keeps them in memory too).
            let charge = outboundCharge
            outboundCharge = 0
            let (connection, server) = (connectionBytes, serverBytes)
            if promise == nil { promise = context.eventLoop.makePromise(of: Void.self) }
            promise!.futureResult.whenComplete { _ in StreamBytes.give(charge, connection: connection, server: server) }
        }
        context.writeAndFlush(wrapOutboundOut(bytes), promise: promise)
    }

    /// Fails whatever was framed and not yet written.
    func failOutbound(_ error: any Error) {
        outbound.clear()
        StreamBytes.give(outboundCharge, connection: connectionBytes, server: serverBytes)
        outboundCharge = 0
        let promises = outboundPromises
        outboundPromises = []
        for promise in promises { promise.fail(error) }
    }
}

extension ByteBuffer {
    /// Writes an uncompressed gRPC message: a flag byte of 0, its length, its bytes.
    fileprivate mutating func writeGRPCMessage(_ message: [UInt8]) {
        writeInteger(UInt8(0))
        writeInteger(UInt32(message.count))
        writeBytes(message)
    }
}

/// A connection reached from a request's task: every call hops onto its event loop.
struct LoopBoundConnection: Sendable {
    let connection: NIOLoopBound<GRPCConnection>
    let loop: any EventLoop

    init(_ connection: GRPCConnection, _ loop: any EventLoop) {
        self.connection = NIOLoopBound(connection, eventLoop: loop)
        self.loop = loop
    }

    func respond(_ id: UInt32, _ message: [UInt8]) {
        onLoop { $0.respond(id, message) }
    }

    func finish(_ id: UInt32, _ error: (any Error)?) {
        onLoop { $0.finish(id, error) }
    }

    /// Runs `body` now when on the loop (a request's task runs there), else on it.
    private func onLoop(_ body: @escaping @Sendable (GRPCConnection) -> Void) {
        if loop.inEventLoop {
            body(connection.value)
        } else {
            loop.execute { body(connection.value) }
        }
    }

    /// Sends a streaming response and waits until it left; throws when the stream is gone.
    func send(_ message: [UInt8], on id: UInt32) async throws {
        let written = try await loop.submit { connection.value.send(message, on: id) }.get()
        guard let written else { throw CancellationError() }
        try await written.get()
    }
}
