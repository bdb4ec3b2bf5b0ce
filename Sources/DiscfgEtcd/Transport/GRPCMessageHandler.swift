import GRPCCore
import SwiftProtobuf

/// A method's handler over decoded messages, as the method table binds it
/// (``GRPCMethod/unary(_:_:check:_:)``, ``GRPCMethod/bidirectional(_:_:_:)``): the gRPC
/// face calls it through ``GRPCMethod/kind``, which decodes and encodes protobuf's
/// bytes around it; a face of another encoding (the JSON gateway) finds it by its
/// message types (`method.handler as? GRPCUnaryHandler<Request, Response>`) and calls
/// it with the messages it decoded itself.
protocol GRPCMessageHandler: Sendable {
    /// This handler as ``GRPCMethod/guarded(by:)`` guards a method: a stream asks `gate`
    /// again before each message it reads or writes and every `interval`.
    func rechecked(by gate: EtcdAccessGate, every interval: Duration) -> any GRPCMessageHandler
}

/// A unary method's handler: one request in, one response out.
struct GRPCUnaryHandler<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>: GRPCMessageHandler {
    let body: @Sendable (Request, ServerContext) async throws -> Response

    /// Itself: a unary call is not asked again (``GRPCMethod/guarded(by:)``).
    func rechecked(by gate: EtcdAccessGate, every interval: Duration) -> any GRPCMessageHandler {
        self
    }
}

/// A bidirectional streaming method's handler: requests in as they come, responses out
/// through the writer.
struct GRPCStreamingHandler<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>: GRPCMessageHandler {
    let body: @Sendable (RPCAsyncSequence<Request, any Error>, RPCWriter<Response>, ServerContext) async throws -> Void

    func rechecked(by gate: EtcdAccessGate, every interval: Duration) -> any GRPCMessageHandler {
        let body = body
        return GRPCStreamingHandler { requests, responses, context in
            try await GRPCMethod.rechecking(requests, by: gate, every: interval) { checked, recheck in
                let writer = SendingWriter<Response> { response in
                    try recheck()
                    try await responses.write(response)
                }
                try await body(checked, RPCWriter(wrapping: writer), context)
            }
        }
    }
}

/// A writer that hands each element to `send`, which returns once it was written.
struct SendingWriter<Element: Sendable>: RPCWriterProtocol {
    let send: @Sendable (Element) async throws -> Void

    func write(_ element: Element) async throws {
        try await send(element)
    }

    func write(contentsOf elements: some Sequence<Element>) async throws {
        for element in elements { try await send(element) }
    }
}
