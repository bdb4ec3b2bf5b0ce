import GRPCCore
import NIOCore

/// Responses, on the event loop: the gRPC adapter frames messages and status; the
/// machine sends them as HEADERS, DATA within the client's windows, and trailers once
/// the DATA before them left.
extension GRPCConnection {
    /// A header block this end sends.
    enum ResponseBlock: HTTP2HeaderBlock {
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

        func encode(with encoder: inout ResponseHeaderEncoder, into buffer: inout ByteBuffer) {
            switch self {
            case .headers: encoder.writeResponseHeaders(to: &buffer)
            case .okTrailers: encoder.writeOKTrailers(to: &buffer)
            case .fields(let fields): encoder.write(fields, to: &buffer)
            }
        }
    }

    /// What an answer message is charged from the moment it is built until it left.
    static func charge(_ message: [UInt8]) -> Int {
        5 + message.count + messageOverheadBytes
    }

    /// A unary response: headers, the message and trailers; or, when the connection or
    /// the server cannot hold the message, `RESOURCE_EXHAUSTED` in its place.
    func respond(_ id: UInt32, _ message: [UInt8]) {
        guard let call = machine.context(of: id), !call.finished else { return }
        let charge = Self.charge(message)
        do {
            try machine.budget.takeAnswer(charge)
        } catch {
            finish(id, Self.answerOverBudget(error))
            return
        }
        call.finished = true
        _ = machine.sendHeaders(.headers, on: id)
        _ = machine.sendData(on: id, length: 5 + message.count, charge: charge, promise: nil, now: now) { $0.writeGRPCMessage(message) }
        machine.finish(id, trailers: .okTrailers, now: now)
        handleEnded()
        scheduleFlush()
    }

    /// A streaming response message; the future completes once it left for the client
    /// (failed with `RESOURCE_EXHAUSTED` when the connection or the server cannot hold
    /// it), nil when the stream is gone.
    func send(_ message: [UInt8], on id: UInt32) -> EventLoopFuture<Void>? {
        guard let context, let call = machine.context(of: id), !call.finished else { return nil }
        let charge = Self.charge(message)
        do {
            try machine.budget.takeAnswer(charge)
        } catch {
            return context.eventLoop.makeFailedFuture(Self.answerOverBudget(error))
        }
        if !machine.sentHeaders(id) { _ = machine.sendHeaders(.headers, on: id) }
        let promise = context.eventLoop.makePromise(of: Void.self)
        _ = machine.sendData(on: id, length: 5 + message.count, charge: charge, promise: promise, now: now) { $0.writeGRPCMessage(message) }
        scheduleFlush()
        return promise.futureResult
    }

    /// Ends a call with its status: trailers after any response, or a trailers-only
    /// answer.
    func finish(_ id: UInt32, _ error: (any Error)?) {
        guard let call = machine.context(of: id), !call.finished else { return }
        call.finished = true
        call.requests?.finish()
        let block: ResponseBlock = machine.sentHeaders(id) ? .trailers(error) : .trailersOnly(error)
        machine.finish(id, trailers: block, now: now)
        handleEnded()
        scheduleFlush()
    }

    /// Answers a request that opened no stream with `block`, which ends it.
    func answerWithoutStream(_ id: UInt32, _ block: ResponseBlock, requestEnded: Bool) {
        machine.answerWithoutStream(id, block, requestEnded: requestEnded, now: now)
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
}

extension ByteBuffer {
    /// Writes an uncompressed gRPC message: a flag byte of 0, its length, its bytes.
    fileprivate mutating func writeGRPCMessage(_ message: [UInt8]) {
        // The flag and the length in one copy: the first five bytes of one word.
        var prefix = (UInt64(UInt32(message.count)) << 24).bigEndian
        withUnsafeBytes(of: &prefix) { _ = writeBytes(UnsafeRawBufferPointer(rebasing: $0[..<5])) }
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
