import GRPCCore
import NIOCore
import NIOHPACK
import NIOHTTP2
import SwiftProtobuf

/// One gRPC method as a connection calls it, its messages as serialized bytes.
struct GRPCMethod: Sendable {
    enum Kind: Sendable {
        /// One request message in, one response message out.
        case unary(@Sendable (_ request: [UInt8], _ context: ServerContext) async throws -> [UInt8])
        /// Request messages in as they come, response messages out through the writer.
        case bidirectional(@Sendable (_ requests: RPCAsyncSequence<[UInt8], any Error>, _ responses: GRPCResponseWriter, _ context: ServerContext) async throws -> Void)
    }

    let descriptor: MethodDescriptor
    let kind: Kind

    /// A unary method whose handler takes and returns decoded messages.
    static func unary<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ descriptor: MethodDescriptor, _ body: @escaping @Sendable (Request, ServerContext) async throws -> Response
    ) -> GRPCMethod {
        GRPCMethod(descriptor: descriptor, kind: .unary { bytes, context in
            let request = try decode(Request.self, bytes)
            return try await body(request, context).serializedBytes()
        })
    }

    /// A bidirectional streaming method whose handler reads and writes decoded messages.
    static func bidirectional<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ descriptor: MethodDescriptor,
        _ body: @escaping @Sendable (RPCAsyncSequence<Request, any Error>, RPCWriter<Response>, ServerContext) async throws -> Void
    ) -> GRPCMethod {
        GRPCMethod(descriptor: descriptor, kind: .bidirectional { requests, responses, context in
            let decoded = requests.map { try decode(Request.self, $0) }
            try await body(RPCAsyncSequence(wrapping: decoded), RPCWriter(wrapping: MessageWriter<Response>(responses)), context)
        })
    }

    private static func decode<Request: SwiftProtobuf.Message>(_ type: Request.Type, _ bytes: [UInt8]) throws -> Request {
        do {
            return try Request(serializedBytes: bytes)
        } catch {
            throw RPCError(code: .internalError, message: "could not decode the \(Request.protoMessageName) request: \(error)")
        }
    }
}

/// Writes a streaming method's encoded responses; a write returns once the response
/// left for the client, so a client that does not read holds its writer (HTTP/2 flow
/// control is the back-pressure).
struct GRPCResponseWriter: Sendable {
    let send: @Sendable ([UInt8]) async throws -> Void
}

/// The writer a streaming handler sees, encoding each message.
private struct MessageWriter<Response: SwiftProtobuf.Message>: RPCWriterProtocol {
    let writer: GRPCResponseWriter

    init(_ writer: GRPCResponseWriter) { self.writer = writer }

    func write(_ element: Response) async throws {
        try await writer.send(try element.serializedBytes())
    }

    func write(contentsOf elements: some Sequence<Response>) async throws {
        for element in elements { try await write(element) }
    }
}

/// gRPC over one HTTP/2 connection, on the connection's event loop: frames in, each
/// stream's request messages to its method, responses and trailers out.
///
/// Each request runs as one task that starts when the request is whole (unary) or when
/// the stream opens (streaming); nothing else leaves the event loop. Requests are
/// plain gRPC: `application/grpc` with no message compression (as etcd clients send
/// them), each message at most ``maxMessageBytes``.
final class GRPCConnection: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// A request stream in progress.
    private final class Stream {
        let id: HTTP2StreamID
        let method: GRPCMethod
        /// What the stream's requests hold of the connection's and the server's budgets.
        let bytes: StreamBytes
        /// What the stream's window is owed of the bytes read on it.
        var credit = WindowCredit()
        /// Bytes of request messages not yet whole.
        var pending: ByteBuffer
        /// A unary method's request message.
        var request: [UInt8]?
        /// A streaming method's request messages.
        var requests: AsyncThrowingStream<[UInt8], any Error>.Continuation?
        var task: Task<Void, Never>?
        var sentHeaders = false

        init(id: HTTP2StreamID, method: GRPCMethod, bytes: StreamBytes, pending: ByteBuffer) {
            self.id = id
            self.method = method
            self.bytes = bytes
            self.pending = pending
        }
    }

    /// The largest request message taken (etcd's default request limit is 1.5 MiB).
    static let maxMessageBytes = 4 << 20
    /// Each stream's flow-control window (the server's initial window size setting), and
    /// the connection's once widened.
    static let windowBytes = 1 << 20
    /// Every HTTP/2 window's size before any WINDOW_UPDATE (RFC 9113, 6.9.2).
    static let defaultWindowBytes = 65_535
    /// The most bytes of requests one connection holds before its methods took them:
    /// four whole messages of the largest size.
    static let maxConnectionRequestBytes = 4 * maxMessageBytes

    private let methods: [String: GRPCMethod]
    /// Bytes of requests this connection holds, and all connections together.
    private let connectionBytes = Budget(limit: GRPCConnection.maxConnectionRequestBytes)
    private let serverBytes: Budget
    /// How long a new connection may take to send its first frame.
    private let handshakeTimeout: TimeAmount
    private var handshake: Scheduled<Void>?
    /// What the connection's window is owed: the bytes of request data read, and at first
    /// its widening from HTTP/2's 65,535 bytes to ``windowBytes``.
    private var connectionCredit = WindowCredit(owed: GRPCConnection.windowBytes - GRPCConnection.defaultWindowBytes)
    private var streams: [HTTP2StreamID: Stream] = [:]
    private var context: ChannelHandlerContext?
    /// Where this connection's requests run: its own event loop.
    private var executor: EventLoopExecutor?
    /// Whether a flush is already due on the loop (answers finished in one turn of the
    /// loop leave in one write).
    private var flushScheduled = false
    /// The client's and this end's addresses as a request's context names them; asked of
    /// the socket once, not for every request.
    private var peers: (remote: String, local: String)?

    /// A connection serving `methods`, holding its requests' bytes within its own limit
    /// and within `serverBytes`, which all connections share.
    init(methods: [String: GRPCMethod], handshakeTimeout: TimeAmount, serverBytes: Budget) {
        self.methods = methods
        self.handshakeTimeout = handshakeTimeout
        self.serverBytes = serverBytes
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        executor = EventLoopExecutor(context.eventLoop)
        // A client that never finishes the HTTP/2 preface holds nothing for long.
        let channel = context.channel
        handshake = context.eventLoop.scheduleTask(in: handshakeTimeout) { channel.close(promise: nil) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        handshake?.cancel()
        for stream in streams.values {
            stream.task?.cancel()
            stream.requests?.finish(throwing: CancellationError())
            stream.bytes.end()
        }
        streams = [:]
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        handshake?.cancel()
        handshake = nil
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            if let stream = streams[frame.streamID] {
                // Trailers from the client: only the end of its requests matters.
                do {
                    try GRPCRequestHead.checkTrailers(headers.headers)
                } catch {
                    refuseMalformed(frame.streamID, context: context)
                    return
                }
                if headers.endStream { requestsEnded(stream) }
            } else {
                let head: GRPCRequestHead
                do {
                    head = try GRPCRequestHead(headers.headers)
                } catch {
                    refuseMalformed(frame.streamID, context: context)
                    return
                }
                open(frame.streamID, head: head, endStream: headers.endStream, context: context)
            }
        case .data(let payload):
            guard case .byteBuffer(var bytes) = payload.data else { return }
            let count = bytes.readableBytes
            // Whatever happens to the stream, the connection's window gets the bytes back.
            if let increment = connectionCredit.read(count) {
                context.write(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: increment))), promise: nil)
            }
            guard let stream = streams[frame.streamID] else { return }
            if !payload.endStream, let increment = stream.credit.read(count) {
                context.write(wrapOutboundOut(HTTP2Frame(streamID: stream.id, payload: .windowUpdate(windowSizeIncrement: increment))), promise: nil)
            }
            do {
                try stream.bytes.take(count)
            } catch {
                fail(stream, Self.overBudget(error))
                return
            }
            stream.pending.writeBuffer(&bytes)
            guard takeMessages(stream) else { return }
            if payload.endStream { requestsEnded(stream) }
        case .rstStream:
            guard let stream = remove(frame.streamID) else { return }
            stream.task?.cancel()
            stream.requests?.finish(throwing: CancellationError())
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A protocol error from the HTTP/2 layer: the connection cannot go on.
        context.close(promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
        context.fireChannelReadComplete()
    }

    // MARK: Requests

    /// Ends a stream whose header block is malformed (``GRPCRequestHead``), and whatever
    /// the stream had started.
    private func refuseMalformed(_ id: HTTP2StreamID, context: ChannelHandlerContext) {
        if let stream = remove(id) {
            stream.task?.cancel()
            stream.requests?.finish(throwing: CancellationError())
        }
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.protocolError))), promise: nil)
        scheduleFlush(context)
    }

    private func open(_ id: HTTP2StreamID, head: GRPCRequestHead, endStream: Bool, context: ChannelHandlerContext) {
        guard head.contentType?.hasPrefix("application/grpc") == true else {
            // Not gRPC at all: an HTTP answer.
            let answer: HPACKHeaders = [":status": "415", "content-type": "text/plain"]
            context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: answer, endStream: true)))), promise: nil)
            return
        }
        guard let method = methods[head.path] else {
            finishWithoutStream(id, RPCError(code: .unimplemented, message: "unknown method \(head.path)"))
            return
        }
        if let encoding = head.encoding, encoding != "identity" {
            finishWithoutStream(id, RPCError(code: .unimplemented, message: "message compression \(encoding) is not supported; send messages uncompressed"))
            return
        }
        let bytes = StreamBytes(connection: connectionBytes, server: serverBytes)
        let stream = Stream(id: id, method: method, bytes: bytes, pending: context.channel.allocator.buffer(capacity: 0))
        streams[id] = stream
        if case .bidirectional(let body) = method.kind {
            let (queued, continuation) = AsyncThrowingStream<[UInt8], any Error>.makeStream()
            stream.requests = continuation
            // A message read by the method no longer counts against the budgets.
            let requests = RPCAsyncSequence(wrapping: queued.map { message in
                bytes.taken(5 + message.count)
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
    private func requestsEnded(_ stream: Stream) {
        guard stream.pending.readableBytes == 0 else {
            fail(stream, RPCError(code: .internalError, message: "the request stream ended inside a message"))
            return
        }
        switch stream.method.kind {
        case .bidirectional:
            stream.requests?.finish()
        case .unary(let body):
            guard let request = stream.request, stream.task == nil, let context else {
                if stream.task == nil { fail(stream, RPCError(code: .internalError, message: "no request message for \(stream.method.descriptor)")) }
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

    // MARK: Responses (on the event loop)

    private static let responseHeaders: HPACKHeaders = [":status": "200", "content-type": "application/grpc"]
    private static let okTrailers = trailers(nil)

    /// A unary response: headers, the message and trailers, in one flush.
    fileprivate func respond(_ id: HTTP2StreamID, _ message: [UInt8]) {
        guard let context, remove(id) != nil else { return }
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: Self.responseHeaders)))), promise: nil)
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(framed(message, context)))))), promise: nil)
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: Self.okTrailers, endStream: true)))), promise: nil)
        scheduleFlush(context)
    }

    /// Flushes once the loop has run what is queued on it now, so answers that finish
    /// together leave together.
    private func scheduleFlush(_ context: ChannelHandlerContext) {
        guard !flushScheduled else { return }
        flushScheduled = true
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.execute {
            handler.value.flushScheduled = false
            handler.value.context?.flush()
        }
    }

    /// A streaming response message; the future completes once it left for the client.
    fileprivate func send(_ message: [UInt8], on id: HTTP2StreamID) -> EventLoopFuture<Void>? {
        guard let context, let stream = streams[id] else { return nil }
        if !stream.sentHeaders {
            stream.sentHeaders = true
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: Self.responseHeaders)))), promise: nil)
        }
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(framed(message, context)))))), promise: promise)
        return promise.futureResult
    }

    /// Ends a stream with its status: trailers after any response, or a trailers-only
    /// answer.
    fileprivate func finish(_ id: HTTP2StreamID, _ error: (any Error)?) {
        guard let context, let stream = remove(id) else { return }
        stream.requests?.finish()
        // A trailers-only answer when nothing was sent yet; pseudo-headers come first.
        var headers = stream.sentHeaders ? [:] : Self.responseHeaders
        headers.add(contentsOf: Self.trailers(error))
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers, endStream: true)))), promise: nil)
        scheduleFlush(context)
    }

    /// Forgets a stream that ended; what its requests held goes back to the budgets.
    private func remove(_ id: HTTP2StreamID) -> Stream? {
        let stream = streams.removeValue(forKey: id)
        stream?.bytes.end()
        return stream
    }

    /// The answer to a request whose bytes would pass a budget.
    private static func overBudget(_ refusal: StreamBytes.Refusal) -> RPCError {
        switch refusal {
        case .connection(let limit):
            RPCError(code: .resourceExhausted, message: "this connection already holds \(limit >> 20) MiB of requests not yet answered or read, its limit; wait for answers before sending more")
        case .server(let limit):
            RPCError(code: .resourceExhausted, message: "the server already holds \(limit >> 20) MiB of requests not yet answered or read over all connections, its limit; retry shortly")
        }
    }

    private func fail(_ stream: Stream, _ error: RPCError) {
        stream.task?.cancel()
        finish(stream.id, error)
    }

    private func finishWithoutStream(_ id: HTTP2StreamID, _ error: RPCError) {
        var headers = Self.responseHeaders
        headers.add(contentsOf: Self.trailers(error))
        context?.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers, endStream: true)))), promise: nil)
    }

    private func framed(_ message: [UInt8], _ context: ChannelHandlerContext) -> ByteBuffer {
        var buffer = context.channel.allocator.buffer(capacity: message.count + 5)
        buffer.writeInteger(UInt8(0))
        buffer.writeInteger(UInt32(message.count))
        buffer.writeBytes(message)
        return buffer
    }

    /// `grpc-status` and `grpc-message` for an outcome: OK, the code and message of an
    /// `RPCError`, or `unknown` for anything else.
    static func trailers(_ error: (any Error)?) -> HPACKHeaders {
        guard let error else { return ["grpc-status": "0"] }
        let (code, message): (Int, String) = switch error {
        case let error as RPCError: (error.code.rawValue, error.message)
        case is CancellationError: (RPCError.Code.cancelled.rawValue, "the request was cancelled")
        default: (RPCError.Code.unknown.rawValue, "\(error)")
        }
        return ["grpc-status": String(code), "grpc-message": percentEncoded(message)]
    }

    /// gRPC's encoding of `grpc-message`: printable ASCII but `%` as it is, every other
    /// byte of the UTF-8 as `%XX`.
    static func percentEncoded(_ message: String) -> String {
        var out = ""
        for byte in message.utf8 {
            if byte >= 0x20, byte <= 0x7E, byte != UInt8(ascii: "%") {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// A connection reached from a request's task: every call hops onto its event loop.
private struct LoopBoundConnection: Sendable {
    let connection: NIOLoopBound<GRPCConnection>
    let loop: any EventLoop

    init(_ connection: GRPCConnection, _ loop: any EventLoop) {
        self.connection = NIOLoopBound(connection, eventLoop: loop)
        self.loop = loop
    }

    func respond(_ id: HTTP2StreamID, _ message: [UInt8]) {
        onLoop { $0.respond(id, message) }
    }

    func finish(_ id: HTTP2StreamID, _ error: (any Error)?) {
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
    func send(_ message: [UInt8], on id: HTTP2StreamID) async throws {
        let written = try await loop.submit { connection.value.send(message, on: id) }.get()
        guard let written else { throw CancellationError() }
        try await written.get()
    }
}

/// Flow-control credit a window of ``GRPCConnection/windowBytes`` is owed, given back in
/// batches: once half the window was read, one WINDOW_UPDATE returns all of it. One per
/// message would be a frame, and often a packet, the client must read for every message
/// it sent; here small messages cost none, and the window the client sees never falls
/// below half (every byte is read as soon as it comes).
private struct WindowCredit {
    private var owed: Int

    init(owed: Int = 0) {
        self.owed = owed
    }

    /// Notes `count` bytes read; returns the increment to give back now, if one is due.
    mutating func read(_ count: Int) -> Int? {
        guard count > 0 else { return nil }
        owed += count
        guard owed >= GRPCConnection.windowBytes / 2 else { return nil }
        defer { owed = 0 }
        return owed
    }
}
