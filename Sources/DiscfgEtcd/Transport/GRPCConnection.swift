import DiscfgNetwork
import GRPCCore
import NIOCore
import NIOHPACK

/// gRPC over one HTTP/2 connection, on the connection's event loop: a thin handler over
/// the connection's HTTP/2 state machine (``HTTP2Connection``), which holds every frame
/// rule, window, stream state and timer, and the gRPC adapter above it, which alone
/// knows content types, the method table, length-prefixed messages, `grpc-timeout`,
/// status and trailers. Bytes read go into the machine; its events (a stream opened,
/// request bytes, a stream ended) are acted on here; answers go back into it; what it
/// framed leaves in one write per turn of the loop.
///
/// A general HTTP/2 stack spent about a third of the server's instructions on each put
/// (a state machine per stream, header checks done twice, a pipeline write per frame);
/// this one frames a loop turn's answers into one buffer.
///
/// Each request runs as one task that starts when the request is whole (unary) or when
/// the stream opens (streaming), on this connection's event loop, within the call's
/// deadline (``Deadline``: the earlier of the client's `grpc-timeout` and the server's
/// request timeout). Requests are plain gRPC: `application/grpc` with no message
/// compression (as etcd clients send them), each message at most ``maxMessageBytes``.
///
/// What the connection holds for its client is counted against its own limit
/// (``maxConnectionBytes``) and the server's (``StreamBytes``): each open stream's
/// state, request bytes until their method took them, answers from the moment they are
/// built until they left for the socket, and a fixed overhead for every message. Time
/// bounds the rest (``HTTP2Timeouts``, applied by the machine and, for messages and
/// deadlines, by the adapter at each sweep).
///
/// Its state lives on the event loop, and the machine is a value that calls out to
/// nothing while it changes, so no two accesses to a field can overlap: the fields the
/// loop touches for every frame leave out the runtime's check for overlapping accesses
/// (`@exclusivity(unchecked)`): some 60 instructions each, and they took about 20 a put.
final class GRPCConnection: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    typealias Timeouts = HTTP2Timeouts
    typealias Machine = HTTP2Connection<GRPCCall, ResponseBlock>

    /// The largest request message taken (etcd's default request limit is 1.5 MiB).
    static let maxMessageBytes = 4 << 20
    /// The most bytes one connection holds for its client (requests before their methods
    /// took them, answers before they left, streams' and messages' overhead): four whole
    /// messages of the largest size. Past it a new stream or a request's bytes are
    /// answered `RESOURCE_EXHAUSTED`, and so is an answer that would pass it.
    static let maxConnectionBytes = 4 * maxMessageBytes
    /// What each open stream of a unary method is charged beside its messages: its state
    /// here and, while its method runs, the method's task.
    static let streamOverheadBytes = 4 << 10
    /// What each open stream of a streaming method (Watch, LeaseKeepAlive) is charged
    /// beside its messages: its task, its request sequence and its service's state for
    /// as long as the stream is open. Measured: 1,000 keep-alive streams on windows closed
    /// at 0 held about 19 KiB each (debug build, Linux x86-64); charged with room to
    /// spare, so the server holds at most 8,192 of them (256 MiB).
    static let streamingOverheadBytes = 32 << 10
    /// What each message, request or answer, is charged beside its bytes: its own
    /// allocation, its place in a queue, the promise of its sending. Measured: 4.8 million
    /// 7-byte keep-alives waiting in their streams' request sequences held about 75 bytes
    /// each (348 MiB, debug build) where their bytes alone counted 12.
    static let messageOverheadBytes = 256
    /// What each connection may hold whatever the server holds (``StreamBytes``): a
    /// unary stream with a request of up to about 11 KiB and its answer's overhead. The
    /// server's budget counts only what connections hold above it, so its memory is
    /// apart: at most `--max-connections` × 16 KiB (64 MiB at 4,096).
    static let floorBytes = 16 << 10

    let methods: [String: GRPCMethod]
    /// Bytes this connection holds for its client, and all connections together.
    let connectionBytes = Budget(limit: GRPCConnection.maxConnectionBytes, floor: GRPCConnection.floorBytes)
    let serverBytes: Budget
    /// The client certificate its TLS handshake verified (mutual TLS); nil without.
    let peer: PeerCertificate?
    private let timeouts: Timeouts
    /// The connection's HTTP/2 state.
    @exclusivity(unchecked) var machine: Machine
    /// The next look for streams and connections that waited past their timeouts.
    @exclusivity(unchecked) private var sweep: Scheduled<Void>?
    @exclusivity(unchecked) private(set) var context: ChannelHandlerContext?
    /// Where this connection's requests run: its own event loop.
    @exclusivity(unchecked) private(set) var executor: EventLoopExecutor?
    /// The client's and this end's addresses as a request's context names them; asked of
    /// the socket once, not for every request.
    @exclusivity(unchecked) private var peers: (remote: String, local: String)?
    /// A read the channel asked for while the socket's send buffer was full: the client
    /// is not reading what it asked for, so nothing more is read from it until it does.
    @exclusivity(unchecked) private var readHeld = false
    /// Whether a flush is already due on the loop (answers finished in one turn of the
    /// loop leave in one write).
    @exclusivity(unchecked) private var flushScheduled = false
    /// Whether the channel is to close once what was framed left.
    @exclusivity(unchecked) private var closeRequested = false
    /// What the header blocks the client repeats were read as, so each is read once.
    @exclusivity(unchecked) var recentHeads = RecentRequestHeads()

    /// A connection serving `methods`, holding what it holds for its client within its
    /// own limit and within `serverBytes`, which all connections share; its calls are
    /// admitted with `peer`'s certificate, when it has one.
    init(methods: [String: GRPCMethod], timeouts: Timeouts, serverBytes: Budget, peer: PeerCertificate? = nil) {
        self.methods = methods
        self.peer = peer
        self.timeouts = timeouts
        self.serverBytes = serverBytes
        machine = Machine(timeouts: timeouts, budget: ConnectionBudget(connection: connectionBytes, server: serverBytes), now: .now())
    }

    // MARK: What tests read

    /// Streams open now, and whether stream `id` is open and its answer decided.
    var openStreams: Int { machine.openStreams }
    func isOpen(_ id: UInt32) -> Bool { machine.context(of: id) != nil }
    func isAnswered(_ id: UInt32) -> Bool { machine.isAnswered(id) }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        executor = EventLoopExecutor(context.eventLoop)
        // The connection's clocks run on the loop's (a test's loop keeps its own).
        machine = Machine(timeouts: timeouts, budget: machine.budget, now: now, allocator: context.channel.allocator)
        scheduleSweep()
        if context.channel.isActive { flush() }
    }

    func channelActive(context: ChannelHandlerContext) {
        // The server's preface, its SETTINGS, framed when the machine began.
        flush()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        sweep?.cancel()
        sweep = nil
        machine.closed(ChannelError.ioOnClosedChannel, now: now)
        handleEnded()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // The socket failed: the connection cannot go on.
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !machine.isClosing else { return }
        var bytes = unwrapInboundIn(data)
        machine.read(&bytes)
        while let event = machine.nextEvent(now: self.now) { handle(event) }
        closeIfDone()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flush()
        context.fireChannelReadComplete()
    }

    /// Holds the channel's reads while the socket's send buffer is full (see `readHeld`).
    func read(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            context.read()
        } else {
            readHeld = true
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        drain()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        // A client that reads none of what it asked for, or a trickle: what is written
        // for it waits in memory, so it has the write timeout to drain it.
        machine.socketWritable(context.channel.isWritable, now: now)
        if context.channel.isWritable, readHeld {
            readHeld = false
            context.read()
        }
        context.fireChannelWritabilityChanged()
    }

    // MARK: Events of the machine

    private func handle(_ event: Machine.Event) {
        switch event {
        case .opened(let id, let fields, let endStream, let number): opened(id, fields, endStream: endStream, number: number)
        case .data(let call, let bytes, let endStream): received(bytes, on: call, endStream: endStream)
        case .requestsEnded(let call): requestsEnded(call)
        case .closed(let call): call.bytes.end()
        case .reset(let call): call.drop()
        }
    }

    /// Acts on streams the machine ended after a call of this adapter's, and closes the
    /// connection if the machine says it is done.
    func handleEnded() {
        while let event = machine.nextEnded() { handle(event) }
        closeIfDone()
    }

    private func closeIfDone() {
        guard machine.shouldClose, !closeRequested, machine.phase != .closed, let context else { return }
        closeRequested = true
        guard !machine.closeAtOnce else {
            context.close(promise: nil)
            return
        }
        // Once what was framed so far (a GOAWAY, a stream's trailers) has left.
        let promise = context.eventLoop.makePromise(of: Void.self)
        machine.whenWritten(promise)
        flush()
        let channel = context.channel
        promise.futureResult.whenComplete { _ in channel.close(promise: nil) }
    }

    /// Winds the connection down for the server's shutdown, as RFC 9113 6.8 describes:
    /// the machine sends GOAWAY `NO_ERROR` naming the last stream taken and refuses
    /// streams after it; unary calls are answered; streaming calls, which would not end
    /// by themselves, end with `UNAVAILABLE` so their clients go elsewhere; the
    /// connection closes once its last stream ended, or after ``HTTP2Timeouts/drain``.
    func drain() {
        guard context != nil, !machine.isClosing, !machine.isDraining else { return }
        machine.goAway(now: now)
        for call in machine.contexts where call.isStreaming {
            fail(call, RPCError(code: .unavailable, message: "the server is shutting down; connect again"))
        }
        handleEnded()
        scheduleFlush()
    }

    // MARK: Clock

    /// The time on the connection's event loop (a test's loop keeps its own).
    var now: NIODeadline { context?.eventLoop.now ?? .now() }

    /// Looks again after one sweep period, unless a look is due already.
    private func scheduleSweep() {
        guard sweep == nil, !machine.isClosing, let context else { return }
        sweep = context.eventLoop.assumeIsolated().scheduleTask(in: timeouts.sweep) { [self] in
            sweep = nil
            sweepNow(now)
        }
    }

    /// Acts on what ran out by `now` (the machine's timers, then each call's message and
    /// deadline), then looks again later.
    private func sweepNow(_ now: NIODeadline) {
        guard !machine.isClosing else { return }
        machine.expire(now: now)
        handleEnded()
        if machine.openStreams > 0 {
            for call in machine.contexts {
                if let deadline = call.deadline, now >= deadline, !call.finished {
                    fail(call, RPCError(code: .deadlineExceeded, message: "the call's grpc-timeout passed"))
                } else if let since = call.messageSince, now - since >= timeouts.idle {
                    expireMessage(call)
                }
            }
        }
        flush()
        scheduleSweep()
    }

    /// A request message begun and not whole within the idle timeout: its stream ends,
    /// and the bytes it held go back.
    private func expireMessage(_ call: GRPCCall) {
        call.messageSince = nil
        guard !call.finished, !machine.hasQueuedData(call.id) else {
            machine.reset(call.id, .cancel, now: now)
            handleEnded()
            return
        }
        fail(call, RPCError(
            code: .resourceExhausted,
            message: "a request message was not whole within \(HTTP2Timeouts.seconds(timeouts.idle)) s (serve --idle-timeout); send each message without pausing inside it"
        ))
    }

    // MARK: Output

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

    /// Writes what the machine framed since the last flush, in one write; the answers in
    /// it are held of the budgets until the write completed (a socket whose buffer is
    /// full keeps them in memory too).
    func flush() {
        guard let context, machine.phase != .closed, let (bytes, promises, charge) = machine.takeOutput(allocator: context.channel.allocator) else { return }
        var promise: EventLoopPromise<Void>?
        if promises.count == 1 {
            promise = promises[0]
        } else if !promises.isEmpty {
            promise = context.eventLoop.makePromise(of: Void.self)
            promise!.futureResult.whenComplete { result in
                for each in promises { each.completeWith(result) }
            }
        }
        if charge > 0 {
            let budget = machine.budget
            if promise == nil { promise = context.eventLoop.makePromise(of: Void.self) }
            promise!.futureResult.whenComplete { _ in budget.give(charge) }
        }
        context.writeAndFlush(wrapOutboundOut(bytes), promise: promise)
    }

    /// What a call's method is told of it.
    func serverContext(_ method: GRPCMethod, _ context: ChannelHandlerContext) -> ServerContext {
        let peers = peers ?? (context.remoteAddress.map { "\($0)" } ?? "unknown", context.localAddress.map { "\($0)" } ?? "unknown")
        self.peers = peers
        return ServerContext(descriptor: method.descriptor, remotePeer: peers.remote, localPeer: peers.local, cancellation: ServerContext.RPCCancellationHandle())
    }
}
