import DiscfgNetwork
import DiscfgService
import Foundation
import GRPCCore
import NIOCore
import NIOHTTP1

/// etcd's HTTP/JSON gateway on one HTTP/1.1 connection (``EtcdGateway``), behind NIO's
/// HTTP/1 codec and its pipelining handler, which hands it one request at a time.
///
/// What it holds is bounded as a gRPC connection's is: a body is read whole, at most
/// ``maxBodyBytes``, and held against the connection's and the server's budgets
/// (``ConnectionBudget``) until its method took it; a streaming answer (a watch, lease
/// keep-alives) is charged a streaming call's overhead while it runs and writes one
/// answer at a time, waiting for each to leave, so a watch nobody reads holds its
/// watcher's backlog and no more. Time bounds the rest: a connection with no request
/// is closed after the idle timeout, a body must arrive whole within it (or the client
/// is answered 408 and closed), and a client that leaves an answer unread for the write
/// timeout is closed.
final class EtcdGatewayConnection: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// The largest request body read (the largest gRPC request message).
    static let maxBodyBytes = GRPCConnection.maxMessageBytes

    /// The request being read.
    private struct Reading {
        let head: HTTPRequestHead
        /// What the browser guards decided; a refused request's body is not read.
        let verdict: BrowserGuard.Verdict
        /// Its body, when its path and method are served (another's is dropped).
        var body: ByteBuffer?
        /// What its body holds of the budgets.
        var held = 0
    }

    let gateway: EtcdGateway
    private let timeouts: GRPCConnection.Timeouts
    let budget: ConnectionBudget
    /// The client certificate its TLS handshake verified (mutual TLS); nil without.
    let peer: PeerCertificate?
    private(set) var context: ChannelHandlerContext?
    private(set) var executor: EventLoopExecutor?
    private var reading: Reading?
    /// Whether the request was answered before its end came: the rest is dropped and
    /// the connection closes.
    var closing = false
    /// The task answering the current request.
    var task: Task<Void, Never>?
    /// The current unary call's hold: a client that goes away cancels its task only
    /// while no write of it has begun (``GRPCCallHold``), as on the gRPC face.
    var hold: GRPCCallHold?
    /// Ends a streaming answer's requests (with the error when the client went away).
    var endRequests: (@Sendable ((any Error)?) -> Void)?
    /// What the current request holds of the budgets apart from its body.
    var callHeld = 0
    /// The allowed origin (`--cors-origin`) whose CORS headers the current answer carries.
    var corsOrigin: String?
    /// The idle or body timeout running now.
    private var timer: Scheduled<Void>?

    init(gateway: EtcdGateway, timeouts: GRPCConnection.Timeouts, budget: ConnectionBudget, peer: PeerCertificate? = nil) {
        self.gateway = gateway
        self.peer = peer
        self.timeouts = timeouts
        self.budget = budget
    }

    /// Adds HTTP/1's codec and a gateway connection to `channel`'s pipeline.
    static func install(on channel: any Channel, gateway: EtcdGateway, timeouts: GRPCConnection.Timeouts, serverBytes: Budget, peer: PeerCertificate? = nil) throws {
        let budget = ConnectionBudget(connection: Budget(limit: GRPCConnection.maxConnectionBytes, floor: GRPCConnection.floorBytes), server: serverBytes)
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(HTTPResponseEncoder())
        try pipeline.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
        try pipeline.addHandler(HTTPServerPipelineHandler())
        try pipeline.addHandler(HTTPServerProtocolErrorHandler())
        try pipeline.addHandler(EtcdGatewayConnection(gateway: gateway, timeouts: timeouts, budget: budget, peer: peer))
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        executor = EventLoopExecutor(context.eventLoop)
        armTimer(context, answering: false)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        // A write begun runs to its end, though nobody will read its answer.
        if hold?.cut() ?? true { task?.cancel() }
        hold = nil
        endRequests?(CancellationError())
        endRequests = nil
        release()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            armTimer(context, answering: true)
            var reading = Reading(head: head, verdict: gateway.verdict(head))
            if case .admit = reading.verdict, head.method == .POST, gateway.routes[Self.path(head.uri)] != nil {
                if let length = head.headers.first(name: "content-length").flatMap(Int.init), length > Self.maxBodyBytes {
                    refuse(context, head, Self.tooLarge(length))
                    return
                }
                reading.body = context.channel.allocator.buffer(capacity: 0)
            }
            self.reading = reading
        case .body(var bytes):
            guard var reading, reading.body != nil else { return }
            let count = bytes.readableBytes
            guard reading.body!.readableBytes + count <= Self.maxBodyBytes else {
                refuse(context, reading.head, Self.tooLarge(reading.body!.readableBytes + count))
                return
            }
            do {
                try budget.take(count)
            } catch {
                refuse(context, reading.head, GRPCConnection.overBudget(error))
                return
            }
            reading.held += count
            reading.body!.writeBuffer(&bytes)
            self.reading = reading
        case .end:
            timer?.cancel()
            guard let reading else { return }
            self.reading = nil
            dispatch(context, reading)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The server winds down: a connection waiting for its next request closes (the
        // pipelining handler closes one that is answering once it answered).
        if event is ChannelShouldQuiesceEvent, reading == nil, task == nil { context.close(promise: nil) }
        context.fireUserInboundEventTriggered(event)
    }

    // MARK: Answering

    /// Answers a whole request: `GET /version`, a route, or etcd's refusal.
    private func dispatch(_ context: ChannelHandlerContext, _ reading: Reading) {
        let head = reading.head
        let path = Self.path(head.uri)
        corsOrigin = nil
        switch reading.verdict {
        case .refuse(let error, let status): return answerBrowserRefusal(context, head, error, status: status, held: reading.held)
        case .preflight(let origin): return answerPreflight(context, head, origin: origin, held: reading.held)
        case .admit(let origin): corsOrigin = origin
        }
        if path == "/version" {
            guard head.method == .GET else { return answerRefusal(context, head, nil, status: 405, held: reading.held) }
            return answer(context, head, status: 200, gateway.versionBody, held: reading.held)
        }
        if Self.probes.contains(path) {
            guard head.method == .GET else { return answerRefusal(context, head, nil, status: 405, held: reading.held) }
            // Alive while it answers; healthy and ready while its store does too.
            if path == "/livez" { return answerText(context, head, status: 200, "ok", held: reading.held) }
            let bound = LoopBoundGateway(self, context.eventLoop)
            let held = reading.held
            let health = gateway.health
            task = Self.start(on: executor) {
                let reason = await health()
                bound.onLoop { $0.answeredProbe(head, path, unhealthy: reason, held: held) }
            }
            return
        }
        if path == "/metrics" {
            guard head.method == .GET else { return answerRefusal(context, head, nil, status: 405, held: reading.held) }
            let bound = LoopBoundGateway(self, context.eventLoop)
            let held = reading.held
            let metrics = gateway.metrics
            task = Self.start(on: executor) {
                let text = await metrics()
                bound.onLoop { $0.answeredMetrics(head, text, held: held) }
            }
            return
        }
        guard let route = gateway.routes[path] else {
            return answerRefusal(context, head, nil, status: 404, held: reading.held)
        }
        guard head.method == .POST, let body = reading.body else { return answerRefusal(context, head, route.method.descriptor, status: 405, held: reading.held) }
        let token = head.headers.first(name: "authorization") ?? head.headers.first(name: "grpc-metadata-token")
        let caller: EtcdCaller?
        switch route.method.admission(token, peer?.current) {
        case .anonymous: caller = nil
        case .caller(let authenticated): caller = authenticated
        case .refused(let refusal): return answerError(context, head, refusal, held: reading.held)
        }
        let json = Data(body.readableBytesView)
        let serverContext = serverContext(route.method, context)
        let bound = LoopBoundGateway(self, context.eventLoop)
        let held = reading.held
        switch route.kind {
        case .unary(let read):
            do {
                try budget.take(GRPCConnection.streamOverheadBytes)
            } catch {
                return answerError(context, head, GRPCConnection.overBudget(error), held: held)
            }
            callHeld = GRPCConnection.streamOverheadBytes
            let refused = refusalNote(head, route.method.descriptor)
            let hold = GRPCCallHold(timeout: nil)
            self.hold = hold
            task = Self.start(on: executor) {
                let outcome = await Pipeline.$cutoff.withValue(hold) { await Self.call(read, json, serverContext, as: caller, refused: refused) }
                bound.onLoop { $0.answered(head, outcome, held: held) }
            }
        case .streaming(let read):
            stream(context, head, route, read, json: json, caller: caller, serverContext: serverContext, held: held, bound: bound)
        }
    }

    /// The probes of a member's health, as etcd serves them beside its gateway: `/health`
    /// (etcd's JSON), `/livez` and `/readyz` (etcd 3.5.11 and later: `ok`).
    static let probes: Set<String> = ["/health", "/livez", "/readyz"]

    /// Answers a probe of the member's health: etcd's `{"health":"true"}`, or 503 naming
    /// why not; `/readyz` in text.
    private func answeredProbe(_ head: HTTPRequestHead, _ path: String, unhealthy reason: String?, held: Int) {
        task = nil
        give(held)
        guard let context else { return }
        let status = reason == nil ? 200 : 503
        guard path == "/health" else { return answerText(context, head, status: status, reason.map { "not ready: \($0)" } ?? "ok", held: 0) }
        // The reason is the server's own sentence, with nothing to escape; sent as etcd's
        // is, with the type Go gives JSON it does not label.
        let body = reason.map { #"{"health":"false","reason":"\#($0)"}"# } ?? #"{"health":"true"}"#
        answerText(context, head, status: status, body, held: 0)
    }

    /// Answers `GET /metrics` with `text`, Prometheus' (``EtcdMetrics``).
    private func answeredMetrics(_ head: HTTPRequestHead, _ text: String, held: Int) {
        task = nil
        give(held)
        guard let context else { return }
        answer(context, head, status: 200, text, contentType: EtcdMetrics.contentType, held: 0)
    }

    /// A request's task, on the connection's event loop, its frames in one slab (``TaskStack``).
    static func start(on executor: EventLoopExecutor?, _ body: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        Task(executorPreference: executor) {
            TaskStack.reserve()
            await body()
        }
    }

    /// Answers a unary call with its `outcome`, and lets go of what it held.
    private func answered(_ head: HTTPRequestHead, _ outcome: Result<String, any Error>, held: Int) {
        task = nil
        hold = nil
        give(held)
        release()
        guard let context else { return }
        switch outcome {
        case .success(let text): answer(context, head, status: 200, text, held: 0)
        case .failure(let error): answerError(context, head, error, held: 0)
        }
    }

    /// A unary call's JSON answer, or why there is none: `json` read as the call (or
    /// `refused` told why not), run as `caller` when the call has one.
    private static func call(
        _ read: @Sendable (Data) throws -> EtcdGateway.UnaryCall, _ json: Data, _ context: ServerContext, as caller: EtcdCaller?,
        refused: @Sendable (any Error) -> Void
    ) async -> Result<String, any Error> {
        let call: EtcdGateway.UnaryCall
        do {
            call = try read(json)
        } catch {
            refused(error)
            return .failure(error)
        }
        do {
            let answer = if let caller { try await caller.bound { try await call(context) } } else { try await call(context) }
            return .success(answer)
        } catch {
            return .failure(error)
        }
    }

    /// Writes a whole answer, then waits for the next request (or closes, as the client
    /// asked or after an answer given before the request's end).
    func answer(
        _ context: ChannelHandlerContext, _ head: HTTPRequestHead, status: Int, _ body: String, contentType: String = "application/json", held: Int,
        headers extra: [(String, String)] = []
    ) {
        give(held)
        var headers = HTTPHeaders([("content-type", contentType), ("content-length", String(body.utf8.count))] + extra)
        if let corsOrigin { headers.add(contentsOf: EtcdGateway.corsHeaders(corsOrigin)) }
        let close = closing || !head.isKeepAlive
        if close { headers.add(name: "connection", value: "close") }
        let responseHead = HTTPResponseHead(version: head.version, status: HTTPResponseStatus(statusCode: status), headers: headers)
        context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body)))), promise: nil)
        let written = guarded(context, context.writeAndFlush(wrapOutboundOut(.end(nil))))
        if close {
            let channel = context.channel
            written.whenComplete { _ in channel.close(promise: nil) }
        } else {
            armTimer(context, answering: false)
        }
    }

    func answerText(_ context: ChannelHandlerContext, _ head: HTTPRequestHead, status: Int, _ body: String, held: Int) {
        answer(context, head, status: status, body, contentType: "text/plain; charset=utf-8", held: held)
    }

    /// Answers a failure as etcd's gateway does: its gRPC code's HTTP status and
    /// `{"error":…,"message":…,"code":…}`.
    func answerError(_ context: ChannelHandlerContext, _ head: HTTPRequestHead, _ error: any Error, held: Int) {
        let (code, message) = GRPCStatus.status(error)
        answer(context, head, status: EtcdGateway.httpStatus(code), EtcdGateway.errorBody(code: code, message: message), held: held)
    }

    /// Answers a request before its end (its body is over a limit) and closes after.
    private func refuse(_ context: ChannelHandlerContext, _ head: HTTPRequestHead, _ error: any Error) {
        closing = true
        timer?.cancel()
        let held = reading?.held ?? 0
        reading = nil
        refusalNote(head, gateway.routes[Self.path(head.uri)]?.method.descriptor)(error)
        answerError(context, head, error, held: held)
    }

    private static func tooLarge(_ count: Int) -> RPCError {
        RPCError(code: .resourceExhausted, message: "grpc: received message larger than max (\(count) vs. \(maxBodyBytes))")
    }

    // MARK: Bounds

    /// Closes the connection if the client leaves `write` unsent for the write timeout.
    func guarded(_ context: ChannelHandlerContext, _ write: EventLoopFuture<Void>) -> EventLoopFuture<Void> {
        let channel = context.channel
        let stall = context.eventLoop.scheduleTask(in: timeouts.write) { channel.close(promise: nil) }
        write.whenComplete { _ in stall.cancel() }
        return write
    }

    /// Starts the idle timeout (waiting for a request: the connection closes) or the
    /// body timeout (reading one: it is answered 408 and the connection closes).
    func armTimer(_ context: ChannelHandlerContext, answering: Bool) {
        timer?.cancel()
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: timeouts.idle) {
            let connection = bound.value
            guard let context = connection.context else { return }
            guard answering, let reading = connection.reading else { return context.close(promise: nil) }
            connection.refuse(context, reading.head, RPCError(code: .cancelled, message: "the request body did not arrive whole within the server's idle timeout"))
        }
    }

    func give(_ count: Int) {
        if count > 0 { budget.give(count) }
    }

    /// Lets go of what the current call holds apart from its body.
    func release() {
        give(callHeld)
        callHeld = 0
    }

    static func path(_ uri: String) -> String {
        String(uri.prefix { $0 != "?" })
    }

    func serverContext(_ method: GRPCMethod, _ context: ChannelHandlerContext) -> ServerContext {
        let remote = context.remoteAddress.map { "\($0)" } ?? "unknown", local = context.localAddress.map { "\($0)" } ?? "unknown"
        return ServerContext(descriptor: method.descriptor, remotePeer: remote, localPeer: local, cancellation: ServerContext.RPCCancellationHandle())
    }
}

/// A gateway connection reached from a request's task: every call hops onto its loop.
struct LoopBoundGateway: Sendable {
    let connection: NIOLoopBound<EtcdGatewayConnection>
    let loop: any EventLoop

    init(_ connection: EtcdGatewayConnection, _ loop: any EventLoop) {
        self.connection = NIOLoopBound(connection, eventLoop: loop)
        self.loop = loop
    }

    /// Runs `body` on the loop.
    func onLoop(_ body: @escaping @Sendable (EtcdGatewayConnection) -> Void) {
        if loop.inEventLoop {
            body(connection.value)
        } else {
            loop.execute { body(connection.value) }
        }
    }

    /// Writes one line of a streaming answer and waits until it left.
    func send(_ line: String) async throws {
        try await loop.flatSubmit { [connection, loop] in connection.value.writeLine(line, on: loop) }.get()
    }
}
