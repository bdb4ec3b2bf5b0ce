import DiscfgCore
import DiscfgNetwork
import DiscfgService
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
    /// The same handler over decoded messages (a ``GRPCUnaryHandler`` or a
    /// ``GRPCStreamingHandler``), which ``kind`` wraps in protobuf's decoding and
    /// encoding: a face that reads another encoding (the JSON gateway, ``EtcdGateway``)
    /// calls it, with the same action, admission, audit and failure policy as a gRPC call.
    /// nil for a method bound over bytes alone (one refused before its request is read).
    var handler: (any GRPCMessageHandler)? = nil
    /// What its calls do, as the gate judges them (``DiscfgService/Action/Kind``): the
    /// role they need and what they reach are declared there. nil for a method anyone
    /// may call, which the gate asks nothing of.
    var action: Action.Kind?
    /// Whom a call carrying this `token` metadata (nil without), on a connection of this
    /// verified client `certificate` (nil without), runs as, or why it may not run now
    /// (the server's ``EtcdAccess``): the connection asks before it opens a stream for
    /// the call, and binds the caller (``EtcdCaller/bound(_:)``) around it.
    var admission: @Sendable (_ token: String?, _ certificate: CertificateSubject?) -> EtcdAdmission = { _, _ in .anonymous }

    /// Whether its calls stream (they then hold more, and end with the server's shutdown).
    var isStreaming: Bool {
        if case .bidirectional = kind { return true }
        return false
    }

    /// This method, admitted by `gate` as its ``action`` says (nil, or an action that
    /// needs no role: any caller, authenticated or not, and asked nothing more). A stream asks the gate again before
    /// each message it reads or writes and every ``EtcdAccessGate/recheckInterval`` too,
    /// so one whose token is revoked, or that was opened before tokens were required,
    /// ends. A unary call is not asked again: the connection admitted it as it opened,
    /// moments before, and asking again would cost every call a wrapper.
    func guarded(by gate: EtcdAccessGate) -> GRPCMethod {
        let action = action
        let admission: @Sendable (String?, CertificateSubject?) -> EtcdAdmission = { token, certificate in
            gate.admission(token: token, certificate: certificate, for: action)
        }
        guard let interval = gate.recheckInterval, action?.role != nil else {
            return GRPCMethod(descriptor: descriptor, kind: kind, handler: handler, action: action, admission: admission)
        }
        let kind: Kind = switch self.kind {
        case .unary:
            self.kind
        case .bidirectional(let body):
            .bidirectional { requests, responses, context in
                try await Self.rechecking(requests, by: gate, every: interval) { checked, recheck in
                    try await body(checked, GRPCResponseWriter { bytes in
                        try recheck()
                        try await responses.send(bytes)
                    }, context)
                }
            }
        }
        return GRPCMethod(descriptor: descriptor, kind: kind, handler: handler?.rechecked(by: gate, every: interval), action: action, admission: admission)
    }

    /// Runs a stream's `body` while `gate` admits its caller: `recheck` (which `body`
    /// calls before each response it writes) and each request read ask the gate again,
    /// and so does a timer every `interval`; a refusal ends the stream with its error.
    static func rechecking<Request: Sendable>(
        _ requests: RPCAsyncSequence<Request, any Error>, by gate: EtcdAccessGate, every interval: Duration,
        _ body: @escaping @Sendable (_ checked: RPCAsyncSequence<Request, any Error>, _ recheck: @escaping @Sendable () throws -> Void) async throws -> Void
    ) async throws {
        let caller = EtcdCaller.current
        let recheck: @Sendable () throws -> Void = {
            if let refused = gate.recheck(caller) { throw refused }
        }
        let checked = requests.map { message in
            try recheck()
            return message
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await body(RPCAsyncSequence(wrapping: checked), recheck) }
            group.addTask {
                // Ends the stream (the other task is cancelled) once refused.
                while true {
                    try await Task.sleep(for: interval)
                    try recheck()
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// A unary method whose handler takes and returns decoded messages.
    /// - Parameter check: looks at the request's bytes before they are decoded (a shape
    ///   whose decoding alone would cost too much is refused there). A face that decodes
    ///   another encoding checks its own (the gateway's JSON: ``EtcdTxnShape/checkJSON(_:)``).
    static func unary<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ descriptor: MethodDescriptor, _ action: Action.Kind?, check: @escaping @Sendable ([UInt8]) throws -> Void = { _ in },
        _ body: @escaping @Sendable (Request, ServerContext) async throws -> Response
    ) -> GRPCMethod {
        GRPCMethod(descriptor: descriptor, kind: .unary { bytes, context in
            try check(bytes)
            let request = try decode(Request.self, bytes)
            return try await body(request, context).serializedBytes()
        }, handler: GRPCUnaryHandler(body: body), action: action)
    }

    /// A bidirectional streaming method whose handler reads and writes decoded messages.
    static func bidirectional<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ descriptor: MethodDescriptor, _ action: Action.Kind,
        _ body: @escaping @Sendable (RPCAsyncSequence<Request, any Error>, RPCWriter<Response>, ServerContext) async throws -> Void
    ) -> GRPCMethod {
        GRPCMethod(descriptor: descriptor, kind: .bidirectional { requests, responses, context in
            let decoded = requests.map { try decode(Request.self, $0) }
            let encoding = SendingWriter<Response> { response in try await responses.send(try response.serializedBytes()) }
            try await body(RPCAsyncSequence(wrapping: decoded), RPCWriter(wrapping: encoding), context)
        }, handler: GRPCStreamingHandler(body: body), action: action)
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
