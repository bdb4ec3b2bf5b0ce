import DiscfgCore
import DiscfgService
import GRPCCore
import NIOCore
import NIOHPACK

/// Requests: what the gRPC adapter makes of a stream the machine opened and of the
/// bytes it carries (content type, method, `grpc-timeout`, length-prefixed messages).
extension GRPCConnection {
    /// A stream the client opened: refused (a malformed head resets it), answered at
    /// once (415 for a request that is not gRPC; `UNIMPLEMENTED` for an unknown method
    /// or a compressed one; `INTERNAL` for a malformed `grpc-timeout`; the server's
    /// refusal; `RESOURCE_EXHAUSTED` past a budget), or taken as a call.
    /// A block with a `number` decodes as every other block with it did
    /// (``HTTP2RecentBlocks``), so its head and method are read once.
    func opened(_ id: UInt32, _ fields: HPACKHeaders, endStream: Bool, number: UInt64? = nil) {
        guard let context else { return }
        let head: GRPCRequestHead
        let found: GRPCMethod?
        if let number, let known = recentHeads.read(number) {
            (head, found) = known
        } else {
            do {
                head = try GRPCRequestHead(fields)
            } catch {
                // A malformed request (RFC 9113, 8.1.1): its stream is reset, nothing else.
                machine.reset(id, .protocolError, now: now)
                scheduleFlush()
                return
            }
            found = methods[head.path]
            if let number { recentHeads.note(number, head: head, method: found) }
        }
        guard head.contentType?.hasPrefix("application/grpc") == true else {
            // Not gRPC at all: an HTTP answer.
            answerWithoutStream(id, .fields([(":status", "415"), ("content-type", "text/plain")]), requestEnded: endStream)
            return
        }
        guard let method = found else {
            answerWithoutStream(id, .trailersOnly(RPCError(code: .unimplemented, message: "unknown method \(head.path)")), requestEnded: endStream)
            return
        }
        var timeout: Duration?
        if let text = head.timeout {
            guard let parsed = GRPCTimeout.parse(text) else {
                // As grpc-go answers it.
                answerWithoutStream(id, .trailersOnly(RPCError(code: .internalError, message: "malformed grpc-timeout: \(text.prefix(16))")), requestEnded: endStream)
                return
            }
            timeout = parsed
        }
        let caller: EtcdCaller?
        switch method.admission(head.token, peer?.current) {
        case .anonymous:
            caller = nil
        case .caller(let authenticated):
            caller = authenticated
        case .refused(let refusal):
            // The server's access rule (EtcdAccess) refuses the call.
            answerWithoutStream(id, .trailersOnly(refusal), requestEnded: endStream)
            return
        }
        if let encoding = head.encoding, encoding != "identity" {
            let refusal = RPCError(code: .unimplemented, message: "message compression \(encoding) is not supported; send messages uncompressed")
            answerWithoutStream(id, .trailersOnly(refusal), requestEnded: endStream)
            return
        }
        let bytes = machine.budget.streamBytes()
        do {
            try bytes.take(method.isStreaming ? Self.streamingOverheadBytes : Self.streamOverheadBytes)
        } catch {
            // The connection (or the server) holds all it may: no new request until it
            // holds less.
            answerWithoutStream(id, .trailersOnly(Self.overBudget(error)), requestEnded: endStream)
            return
        }
        let deadline = timeout.map { now + TimeAmount($0) }
        let call = GRPCCall(id: id, method: method, bytes: bytes, pending: context.channel.allocator.buffer(capacity: 0), timeout: timeout, deadline: deadline, caller: caller)
        machine.accept(id, context: call, endStream: endStream)
        if case .bidirectional(let body) = method.kind {
            let (queued, continuation) = AsyncThrowingStream<[UInt8], any Error>.makeStream()
            call.requests = continuation
            // A message read by the method no longer counts against the budgets.
            let requests = RPCAsyncSequence(wrapping: queued.map { message in
                bytes.taken(5 + message.count + Self.messageOverheadBytes)
                return message
            })
            let loop = LoopBoundConnection(self, context.eventLoop)
            let writer = GRPCResponseWriter { bytes in try await loop.send(bytes, on: id) }
            let serverContext = serverContext(method, context)
            let hold = call.hold
            call.task = Task(executorPreference: executor) {
                do {
                    try await GRPCConnection.run(body, requests, writer, serverContext, holding: hold, as: caller)
                    loop.finish(id, nil)
                } catch {
                    loop.finish(id, error)
                }
            }
        }
        if endStream { requestsEnded(call) }
    }

    /// Runs a unary method under the adapter's `hold` (``GRPCCallHold``): the services
    /// hand the pipeline the client's `grpc-timeout` as the call's deadline (the earlier
    /// of it and the server's request timeout), and the pipeline tells the hold when a
    /// write begins. An authenticated call runs as its caller (nothing is bound for an
    /// anonymous one).
    private static func run(
        _ body: @Sendable ([UInt8], ServerContext) async throws -> [UInt8], _ request: [UInt8], _ context: ServerContext, holding hold: GRPCCallHold,
        as caller: EtcdCaller?
    ) async throws -> [UInt8] {
        if let caller { return try await caller.bound { try await run(body, request, context, holding: hold, as: nil) } }
        return try await Pipeline.$cutoff.withValue(hold) { try await body(request, context) }
    }

    /// Runs a streaming method under the adapter's `hold`, as its caller when it has one.
    private static func run(
        _ body: @Sendable (RPCAsyncSequence<[UInt8], any Error>, GRPCResponseWriter, ServerContext) async throws -> Void,
        _ requests: RPCAsyncSequence<[UInt8], any Error>, _ writer: GRPCResponseWriter, _ context: ServerContext, holding hold: GRPCCallHold,
        as caller: EtcdCaller?
    ) async throws {
        if let caller { return try await caller.bound { try await run(body, requests, writer, context, holding: hold, as: nil) } }
        try await Pipeline.$cutoff.withValue(hold) { try await body(requests, writer, context) }
    }

    /// Bytes of a request's messages, as DATA brought them.
    func received(_ data: ByteBuffer, on call: GRPCCall, endStream: Bool) {
        var data = data
        let count = data.readableBytes
        if count > 0, !call.finished {
            do {
                try call.bytes.take(count)
            } catch {
                fail(call, Self.overBudget(error))
                return
            }
            call.pending.writeBuffer(&data)
            let buffered = call.pending.readableBytes
            guard takeMessages(call) else { return }
            // The clock of a message not yet whole starts at its first byte.
            if call.pending.readableBytes == 0 {
                call.messageSince = nil
            } else if call.messageSince == nil || call.pending.readableBytes < buffered {
                call.messageSince = now
            }
        }
        if endStream { requestsEnded(call) }
    }

    /// Takes every whole message from the call's bytes; false when the call failed.
    private func takeMessages(_ call: GRPCCall) -> Bool {
        while call.pending.readableBytes >= 5 {
            guard let flag: UInt8 = call.pending.getInteger(at: call.pending.readerIndex),
                  let length: UInt32 = call.pending.getInteger(at: call.pending.readerIndex + 1)
            else { return true }
            guard Int(length) <= Self.maxMessageBytes else {
                fail(call, RPCError(code: .resourceExhausted, message: "a request message of \(length) bytes is over the limit of \(Self.maxMessageBytes)"))
                return false
            }
            guard flag == 0 else {
                fail(call, RPCError(code: .internalError, message: "a compressed request message with no grpc-encoding"))
                return false
            }
            guard call.pending.readableBytes >= 5 + Int(length) else { return true }
            // A message apart from the stream's bytes costs more than its bytes.
            do {
                try call.bytes.take(Self.messageOverheadBytes)
            } catch {
                fail(call, Self.overBudget(error))
                return false
            }
            call.pending.moveReaderIndex(forwardBy: 5)
            let message = call.pending.readBytes(length: Int(length)) ?? []
            if let requests = call.requests {
                requests.yield(message)
            } else if call.request == nil {
                call.request = message
            } else {
                fail(call, RPCError(code: .unimplemented, message: "more than one request message for the unary method \(call.method.descriptor)"))
                return false
            }
        }
        call.pending.discardReadBytes()
        return true
    }

    /// The client sent its last request message.
    func requestsEnded(_ call: GRPCCall) {
        guard !call.finished else { return }
        guard call.pending.readableBytes == 0 else {
            fail(call, RPCError(code: .internalError, message: "the request stream ended inside a message"))
            return
        }
        switch call.method.kind {
        case .bidirectional:
            call.requests?.finish()
        case .unary(let body):
            guard call.task == nil, let context else { return }
            guard let request = call.request else {
                fail(call, RPCError(code: .internalError, message: "no request message for \(call.method.descriptor)"))
                return
            }
            let loop = LoopBoundConnection(self, context.eventLoop)
            let serverContext = serverContext(call.method, context)
            let (id, hold, caller) = (call.id, call.hold, call.caller)
            call.task = Task(executorPreference: executor) {
                TaskStack.reserve()
                do {
                    let response = try await GRPCConnection.run(body, request, serverContext, holding: hold, as: caller)
                    loop.respond(id, response)
                } catch {
                    loop.finish(id, error)
                }
            }
        }
    }

    /// The answer to a request whose bytes would pass a budget.
    static func overBudget(_ refusal: StreamBytes.Refusal) -> RPCError {
        switch refusal {
        case .connection(let limit):
            RPCError(code: .resourceExhausted, message: "this connection already holds \(limit >> 20) MiB of requests not yet answered or read and of answers not yet taken, its limit; wait for answers before sending more")
        case .server(let limit):
            RPCError(code: .resourceExhausted, message: "the server already holds \(limit >> 20) MiB of requests and answers over all connections, its limit for them; retry shortly")
        }
    }

    /// Ends a call with an error, whatever its method was doing: its task is cancelled
    /// unless a write of it has begun (``GRPCCallHold``).
    func fail(_ call: GRPCCall, _ error: RPCError) {
        // Answered now; a write of it that has begun runs to its end all the same.
        if call.hold.cut() { call.task?.cancel() }
        finish(call.id, error)
    }
}
