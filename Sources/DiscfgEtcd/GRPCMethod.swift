import GRPCCore
import NIOCore
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
    /// Why a call may not run now (the server's ``EtcdAccess``), or nil: the connection
    /// asks before it opens a stream for the call, and a stream asks again before each
    /// message it reads or writes, so a stream opened before the answer changed ends at
    /// its next message.
    var refusal: @Sendable () -> RPCError? = { nil }

    /// Whether its calls stream (they then hold more, and end with the server's shutdown).
    var isStreaming: Bool {
        if case .bidirectional = kind { return true }
        return false
    }

    /// This method, refused whenever `refusal` says so. A stream asks again every
    /// `interval` too (nil: never), so one that stays quiet ends as well.
    func guarded(by refusal: @escaping @Sendable () -> RPCError?, recheckingEvery interval: Duration?) -> GRPCMethod {
        let kind: Kind = switch self.kind {
        case .unary(let body):
            .unary { request, context in
                if let refused = refusal() { throw refused }
                return try await body(request, context)
            }
        case .bidirectional(let body):
            .bidirectional { requests, responses, context in
                let checked = requests.map { message in
                    if let refused = refusal() { throw refused }
                    return message
                }
                let writer = GRPCResponseWriter { bytes in
                    if let refused = refusal() { throw refused }
                    try await responses.send(bytes)
                }
                guard let interval else {
                    try await body(RPCAsyncSequence(wrapping: checked), writer, context)
                    return
                }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await body(RPCAsyncSequence(wrapping: checked), writer, context) }
                    group.addTask {
                        // Ends the stream (the other task is cancelled) once refused.
                        while true {
                            try await Task.sleep(for: interval)
                            if let refused = refusal() { throw refused }
                        }
                    }
                    try await group.next()
                    group.cancelAll()
                }
            }
        }
        return GRPCMethod(descriptor: descriptor, kind: kind, refusal: refusal)
    }

    /// A unary method whose handler takes and returns decoded messages.
    /// - Parameter check: looks at the request's bytes before they are decoded (a shape
    ///   whose decoding alone would cost too much is refused there).
    static func unary<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ descriptor: MethodDescriptor, check: @escaping @Sendable ([UInt8]) throws -> Void = { _ in },
        _ body: @escaping @Sendable (Request, ServerContext) async throws -> Response
    ) -> GRPCMethod {
        GRPCMethod(descriptor: descriptor, kind: .unary { bytes, context in
            try check(bytes)
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
            // As grpc-go answers a message it cannot unmarshal; the decoder's own words
            // are Swift's, not the caller's.
            throw RPCError(code: .internalError, message: "grpc: error unmarshalling request: the message is not a valid \(Request.protoMessageName)")
        }
    }
}

/// Writes a streaming method's encoded responses; a write returns once the response
/// left for the client, so a client that does not read holds its writer (HTTP/2 flow
/// control and the socket's buffer are the back-pressure).
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
