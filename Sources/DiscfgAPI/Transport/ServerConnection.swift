import DiscfgCore
import DiscfgNetwork
import Foundation
import NIOCore
import NIOHTTP1

/// One REST connection's keeper, between the HTTP codec and the router's channel: a thin
/// shell over ``ConnectionStateMachine``, which decides the connection's life (the cap,
/// idle, graceful shutdown, a client that stops reading, the order of answers). This
/// handler tells it what happened, does what it says, and asks ``KeyReads`` — the API's
/// own admission and answers — about the key reads and writes the event loop may take:
///
/// - a read the views can answer is answered here;
/// - a plain write whose whole request came in one read is handed straight to the store,
///   and answered here when the store has committed it;
/// - everything else goes on to the router unchanged.
final class ServerConnection: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let cap: ConnectionCap
    private let reads: KeyReads?
    private let log: AccessLog.Buffer?
    private let peerIsLoopback: Bool?
    /// The client certificate of a connection to a server that requires one.
    private let peer: PeerCertificate?

    private var state: ConnectionStateMachine
    /// A request the event loop may take whose end has not arrived.
    private var held: HeldRequest?
    private var idleTimer: Scheduled<Void>?
    private var stallTimer: Scheduled<Void>?
    /// The HTTP encoder's place in the pipeline: answers given here are HTTP/1 bytes made
    /// whole (``ResponseHeads/Wire``) and written from there, below the encoder, which
    /// frames only the router's answers (each starts with a head, which sets its framing).
    private var wire: ChannelHandlerContext?
    private var heads = ResponseHeads.Wire()
    /// The event loop's clock as this read from the socket began: read once for all the
    /// request parts it brings, rather than once for each.
    private var readStarted: NIODeadline?

    init(cap: ConnectionCap, idleTimeout: TimeAmount?, reads: KeyReads?, log: AccessLog.Buffer?, peerIsLoopback: Bool?, peer: PeerCertificate? = nil) {
        self.peer = peer
        self.cap = cap
        self.reads = reads
        self.log = log
        self.peerIsLoopback = peerIsLoopback
        state = ConnectionStateMachine(idleTimeout: idleTimeout, stallTimeout: cap.stallTimeAmount)
    }

    // MARK: Arriving and leaving

    func handlerAdded(context: ChannelHandlerContext) {
        wire = try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self)
        if context.channel.isActive { activate(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        activate(context)
        context.fireChannelActive()
    }

    private func activate(_ context: ChannelHandlerContext) {
        guard state.awaitsActivation else { return }
        if let deadline = state.activate(admitted: cap.admit(), now: context.eventLoop.now) { scheduleIdleTimer(at: deadline, context) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        depart()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        depart()
        wire = nil
    }

    private func depart() {
        idleTimer?.cancel()
        idleTimer = nil
        stallTimer?.cancel()
        stallTimer = nil
        held = nil
        if state.deactivate() { cap.leave() }
    }

    // MARK: Requests

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        let now = readStarted ?? context.eventLoop.now
        readStarted = now
        switch state.receive(part, now: now) {
        case .take: take(part, now: now, context)
        case .park, .drop: break
        case .refuse: refuse(context)
        }
    }

    private func take(_ part: HTTPServerRequestPart, now: NIODeadline, _ context: ChannelHandlerContext) {
        switch part {
        case .head(let head):
            if let reads, state.mayAnswerHere(writable: context.channel.isWritable), let candidate = reads.candidate(head, now: now) {
                held = HeldRequest(head: head, candidate: candidate)
            } else {
                handOn(head, wantingViewOf: nil, context)
            }
        case .body(let buffer):
            if let taken = held {
                if taken.append(buffer) { return }
                // A read with a body, or a body longer than announced: the router's to judge.
                held = nil
                release(taken, context)
            }
            passOn(part, context)
        case .end:
            guard let taken = held else { return passOn(part, context) }
            held = nil
            finish(taken, now: now, context)
        }
    }

    /// A held request has ended: answered here, handed to the store, or handed on.
    private func finish(_ taken: HeldRequest, now: NIODeadline, _ context: ChannelHandlerContext) {
        guard let reads else { return }
        let candidate = taken.candidate
        if candidate.isWrite {
            let value = taken.body ?? context.channel.allocator.buffer(capacity: 0)
            if value.readableBytes == candidate.contentLength, let write = reads.write(candidate, body: value, peerIsLoopback: peerIsLoopback, certificate: peer?.current) {
                startWrite(write, candidate: candidate, reads: reads, context)
            } else {
                release(taken, context)
                passOn(.end(nil), context)
            }
        } else if let read = reads.answer(candidate, peerIsLoopback: peerIsLoopback, certificate: peer?.current, log: log) {
            let bytes = heads.item(read.answer, notModified: read.notModified, closing: state.answersClose, second: time(nil))
            writeAnswer(bytes, now: now, context)
        } else {
            handOn(taken.head, wantingViewOf: try? ConfigName(candidate.configName), context)
            passOn(.end(nil), context)
        }
    }

    /// Hands a write to the store; its answer is written on this event loop when the
    /// store has committed it (or failed), and what arrived meanwhile is taken up then.
    private func startWrite(
        _ write: KeyReads.Write, candidate: KeyReads.Candidate, reads: KeyReads,
        _ context: ChannelHandlerContext
    ) {
        state.startWrite()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        // On this loop, as the etcd API runs its calls: the store's answer resumes here,
        // with no hop through the cooperative pool and back.
        Task(executorPreference: EventLoopExecutor(context.eventLoop)) {
            let result = await reads.commit(write)
            let finish: @Sendable () -> Void = {
                let (handler, context) = loopBound.value
                handler.finishWrite(result, write, candidate: candidate, reads: reads, context)
            }
            if loopBound.eventLoop.inEventLoop { finish() } else { loopBound.eventLoop.execute(finish) }
        }
    }

    private func finishWrite(
        _ result: Result<Event, any Error>, _ write: KeyReads.Write, candidate: KeyReads.Candidate, reads: KeyReads, _ context: ChannelHandlerContext
    ) {
        guard state.finishWrite() else { return }
        let answer = reads.answer(write: result, write, candidate: candidate, log: log)
        let now = context.eventLoop.now
        writeAnswer(heads.write(answer.head, body: answer.body, closing: state.answersClose, second: time(nil)), now: now, context)
        // What arrived during the write, in order, until another write starts.
        while let part = state.unpark() { take(part, now: now, context) }
        channelReadComplete(context: context)
        while let end = state.takeHeldInputEnd() {
            switch end {
            case .closed: context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
            case .failed(let error): context.fireErrorCaught(error)
            }
        }
        if state.takePendingRead() { context.read() }
    }

    func read(context: ChannelHandlerContext) {
        if state.readRequested() { context.read() }
    }

    /// A held request goes to the router after all, with its body so far.
    private func release(_ taken: HeldRequest, _ context: ChannelHandlerContext) {
        handOn(taken.head, wantingViewOf: nil, context)
        if let body = taken.body { passOn(.body(body), context) }
    }

    private func handOn(_ head: HTTPRequestHead, wantingViewOf config: ConfigName?, _ context: ChannelHandlerContext) {
        state.handOn(wantingViewOf: config)
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    private func passOn(_ part: HTTPServerRequestPart, _ context: ChannelHandlerContext) {
        state.passOn()
        context.fireChannelRead(wrapInboundOut(part))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        readStarted = nil
        // A request not whole by the end of a read (a body still coming) is the router's,
        // which bounds how long it may take.
        if let taken = held {
            held = nil
            release(taken, context)
        }
        let action = state.readComplete()
        if action.flush { context.flush() }
        // The router's channel hears of read cycles that brought it something.
        if action.fireReadComplete { context.fireChannelReadComplete() }
    }

    /// Answers the first request of a connection over the cap once its head has arrived
    /// (closing before reading it would reset the connection and lose the answer); the
    /// machine drops everything else it sends.
    private func refuse(_ context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(ConnectionRefusal.head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ConnectionRefusal.body))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }

    // MARK: Answers

    /// Writes an answer given here, whole, ending at `now`.
    private func writeAnswer(_ bytes: ByteBuffer, now: NIODeadline, _ context: ChannelHandlerContext) {
        end(NIOAny(IOData.byteBuffer(bytes)), promise: nil, state.endLocalAnswer(now: now), through: wire ?? context, context)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status.code >= 200 || head.status == .switchingProtocols:
            let action = state.routedHead(status: head.status)
            if let config = action.wantView { reads?.views.want(config) }
            if action.closing {
                context.write(wrapOutboundOut(.head(Self.closing(head))), promise: promise)
            } else {
                context.write(data, promise: promise)
            }
        case .end:
            end(data, promise: promise, state.endRoutedAnswer(now: context.eventLoop.now), through: context, context)
        default:
            context.write(data, promise: promise)
        }
    }

    /// Writes an answer's end through `writer` (this handler's context, or the encoder's
    /// for bytes made here), and does what the machine said of it.
    private func end(
        _ data: NIOAny, promise: EventLoopPromise<Void>?, _ action: ConnectionStateMachine.AnswerEnd, through writer: ChannelHandlerContext,
        _ context: ChannelHandlerContext
    ) {
        switch action {
        case .none:
            writer.write(data, promise: promise)
        case .scheduleIdleTimer(let deadline):
            writer.write(data, promise: promise)
            scheduleIdleTimer(at: deadline, context)
        case .close:
            // Closed once written: closing at once would drop what is still unsent.
            let written = context.eventLoop.makePromise(of: Void.self)
            let channel = context.channel
            written.futureResult.whenComplete { _ in channel.close(promise: nil) }
            if let promise { written.futureResult.cascade(to: promise) }
            writer.writeAndFlush(data, promise: written)
        }
    }

    /// `head` saying the connection closes after it.
    private static func closing(_ head: HTTPResponseHead) -> HTTPResponseHead {
        var head = head
        head.headers.replaceOrAdd(name: "Connection", value: "close")
        return head
    }

    // MARK: Timers and shutdown

    private func scheduleIdleTimer(at deadline: NIODeadline, _ context: ChannelHandlerContext) {
        idleTimer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            idleTimer = nil
            switch state.idleTimerFired(now: context.eventLoop.now) {
            case .none: break
            case .close: context.close(promise: nil)
            case .reschedule(let deadline): scheduleIdleTimer(at: deadline, context)
            }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed, state.inputEnded(.closed) { return }
        guard event is ChannelShouldQuiesceEvent else { return context.fireUserInboundEventTriggered(event) }
        if state.quiesce() { context.close(promise: nil) }
    }

    /// Bytes the HTTP codec cannot read (the router answers them `400` and closes) wait,
    /// as the end of input does, for the answer of a write with the store.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if state.inputEnded(.failed(error)) { return }
        context.fireErrorCaught(error)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        switch state.writabilityChanged(writable: context.channel.isWritable) {
        case .none: break
        case .cancelStallTimer:
            stallTimer?.cancel()
            stallTimer = nil
        case .scheduleStallTimer(let timeout):
            stallTimer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in
                stallTimer = nil
                if state.stallTimerFired() { context.close(promise: nil) }
            }
        }
        context.fireChannelWritabilityChanged()
    }
}

/// A request the event loop may take (``KeyReads/Candidate``) whose end has not arrived:
/// its head, and a write's body so far. A reference, owned by its connection's handler on
/// the event loop: held and let go on every request, and an optional of so large a value
/// cost each of those a runtime copy or destroy of all its fields.
final class HeldRequest {
    let head: HTTPRequestHead
    let candidate: KeyReads.Candidate
    private(set) var body: ByteBuffer?

    init(head: HTTPRequestHead, candidate: KeyReads.Candidate) {
        self.head = head
        self.candidate = candidate
    }

    /// Adds a part of the body: false, adding nothing, when the request cannot be taken
    /// with it (a read with a body, a write's body longer than announced).
    func append(_ buffer: ByteBuffer) -> Bool {
        guard candidate.isWrite, (body?.readableBytes ?? 0) + buffer.readableBytes <= candidate.contentLength else { return false }
        if body == nil {
            body = buffer
        } else {
            var received = buffer
            body!.writeBuffer(&received)
        }
        return true
    }
}
