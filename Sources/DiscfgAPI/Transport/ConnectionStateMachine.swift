import DiscfgCore
import NIOCore
import NIOHTTP1

/// The life of one REST connection, apart from its channel: a value that takes what
/// happened (a request part arrived, an answer ended, a timer fired, shutdown began, the
/// client stopped reading) and says what to do (take the part, hand it to the router, park
/// it, refuse the connection, schedule or cancel a timer, close). It does no I/O, holds no
/// channel and reads no clock: its events carry the time (the event loop's, which a test's
/// loop advances by hand), so every transition is tested without a socket
/// (`ConnectionStateMachineTests`, `ServerConnectionTests`).
///
/// It keeps:
/// - **the cap**: a connection over the server's limit (``DiscfgNetwork/ConnectionCap``)
///   answers its first request `503` and closes, dropping the rest;
/// - **idle**: a connection with no request for the idle timeout closes, a request head
///   sent too slowly and a body that stops coming counting as none; one that is answering
///   a request it has read whole is not idle;
/// - **quiesce** (graceful shutdown): an idle connection closes at once, a busy one after
///   the answers to the requests it has read, each of which says `Connection: close`;
///   requests that arrive meanwhile are dropped, as `HTTPServerPipelineHandler` drops them;
/// - **stall**: a client that leaves the answers unread for the cap's stall timeout is
///   disconnected;
/// - **pipelining order**: the event loop may answer a request only when no earlier one is
///   with the router (``mayAnswerHere(writable:)``), and while a write it took is with the
///   store what arrives is parked, so answers leave in the order their requests came
///   whichever part of the server gives them. The socket is still read during a write
///   until something is parked (so a connection that sends one request at a time keeps
///   its read interest, with no pair of `epoll_ctl` calls per write), and then not again
///   until the write is answered;
/// - **end of input**: what ends the client's input during a write — its side closed
///   after sending (`shutdown(SHUT_WR)`), or bytes the HTTP codec cannot read — is held
///   until the write's answer and what was parked behind it, since the router's channel
///   ends the connection at either (the second with its `400`).
///
/// Why not Hummingbird's `HTTPConnectionStateHandler`, which keeps idle and quiesce in a
/// state machine too: it sits behind the HTTPTypes codec and sees only the requests the
/// router gets. The key reads and writes answered on the event loop never reach it, so a
/// connection busy with them would look idle and be closed, and on shutdown a write with
/// the store would be cut off before its answer. The order of answers across the event
/// loop and the router, the cap and the stall are not its concern either. So this machine
/// keeps the same idle rule (not idle while answering a request read whole; otherwise
/// idle from the last request part or answer) for every request of the connection.
struct ConnectionStateMachine {
    private let idleTimeout: TimeAmount?
    private let stallTimeout: TimeAmount

    /// Where the connection is in its life.
    private(set) var phase = Phase.inactive
    /// Whether the cap counted this connection in (and so must count it out).
    private var admitted = false
    /// Requests whose head was taken and whose answer has not ended.
    private var inFlight = 0
    /// Whether a taken request's head arrived and its end has not.
    private var reading = false
    /// Whether the parts of a request that arrived while quiescing are being dropped.
    private var discarding = false
    /// The last request part or answer end, or the activation.
    private var lastActive = NIODeadline.uptimeNanoseconds(0)
    private var idleTimerArmed = false
    private var stallTimerArmed = false
    /// Requests handed to the router and not yet answered, oldest first, each with the
    /// config to view if the router answers it 200 or 304 (a read the views missed).
    private var routed = CircularBuffer<ConfigName?>(initialCapacity: 4)
    /// Whether a write taken here is with the store.
    private var writing = false
    /// What arrived while a write taken here is with the store, in order.
    private var parked = CircularBuffer<HTTPServerRequestPart>(initialCapacity: 4)
    /// A read of the socket asked for while writing, made once the write is answered.
    private var readPending = false
    /// What ended the input while a write was with the store, in order.
    private var heldEnds: [InputEnd] = []
    private var routedSinceReadComplete = false
    private var needsFlush = false

    /// A machine for a connection closed after `idleTimeout` without requests (never
    /// when nil), and after `stallTimeout` with its answers unread.
    init(idleTimeout: TimeAmount?, stallTimeout: TimeAmount) {
        self.idleTimeout = idleTimeout
        self.stallTimeout = stallTimeout
    }

    // MARK: Arriving and leaving

    /// Whether the connection is yet to be activated (and counted by the cap).
    var awaitsActivation: Bool { phase == .inactive }

    /// The connection is active, and the cap `admitted` it or not: the time to schedule
    /// the idle timer at, if any.
    mutating func activate(admitted: Bool, now: NIODeadline) -> NIODeadline? {
        assert(phase == .inactive, "activated twice")
        phase = admitted ? .serving : .refusing
        self.admitted = admitted
        lastActive = now
        return armIdleTimer()
    }

    /// The connection is gone: whether the cap must count it out. Its timers are to be
    /// cancelled.
    mutating func deactivate() -> Bool {
        phase = .closed
        idleTimerArmed = false
        stallTimerArmed = false
        parked.removeAll()
        defer { admitted = false }
        return admitted
    }

    // MARK: Requests

    /// A request part arrived from the socket at `now`.
    mutating func receive(_ part: HTTPServerRequestPart, now: NIODeadline) -> Receipt {
        lastActive = now
        switch phase {
        case .serving, .quiescing:
            if writing {
                parked.append(part)
                return .park
            }
            return take(part)
        case .refusing:
            guard case .head = part else { return .drop }
            phase = .closing
            return .refuse
        case .inactive, .closing, .closed:
            return .drop
        }
    }

    /// The next part parked while a write was with the store, once none is; nil when
    /// there is none, or a write taken meanwhile is with the store again.
    mutating func unpark() -> HTTPServerRequestPart? {
        guard phase == .serving || phase == .quiescing else {
            parked.removeAll()
            return nil
        }
        while !writing, let part = parked.popFirst() {
            if take(part) == .take { return part }
        }
        return nil
    }

    private mutating func take(_ part: HTTPServerRequestPart) -> Receipt {
        switch part {
        case .head:
            assert(!reading, "a request head before the last request's end")
            if phase == .quiescing {
                discarding = true
                return .drop
            }
            inFlight += 1
            reading = true
        case .body:
            if discarding { return .drop }
        case .end:
            if discarding {
                discarding = false
                return .drop
            }
            reading = false
        }
        return .take
    }

    /// Whether the event loop may answer the request whose head was just taken: only when
    /// no earlier request is with the router, so answers keep their order, and only while
    /// the client reads (`writable`), so one that does not is held back by the router's
    /// channel.
    func mayAnswerHere(writable: Bool) -> Bool {
        routed.isEmpty && writable && phase == .serving
    }

    /// The head of a taken request goes to the router, whose 200 or 304 answer loads the view of
    /// `config` if any.
    mutating func handOn(wantingViewOf config: ConfigName?) {
        routed.append(config)
        routedSinceReadComplete = true
    }

    /// A body or end of a request with the router goes to it.
    mutating func passOn() {
        routedSinceReadComplete = true
    }

    /// A write taken here goes to the store: until it is answered the socket is not read
    /// and what arrives is parked.
    mutating func startWrite() {
        assert(!writing, "two writes with the store at once")
        writing = true
    }

    /// The store answered the write: whether to write its answer (not when the connection
    /// closed meanwhile).
    mutating func finishWrite() -> Bool {
        writing = false
        return phase != .closed
    }

    /// The handler was asked to read from the socket: whether to read now (not while a
    /// write is with the store and something is parked behind it; then once it is
    /// answered, ``takePendingRead()``).
    mutating func readRequested() -> Bool {
        if writing, !parked.isEmpty {
            readPending = true
            return false
        }
        return true
    }

    /// What ends a client's input.
    enum InputEnd {
        /// The client closed its side of the socket.
        case closed
        /// The HTTP codec could not read what came (or reading failed).
        case failed(any Error)
    }

    /// The client's input ended: whether to hold that back (true while a write is with the
    /// store, whose answer and what was parked behind it come first; ``takeHeldInputEnd()``
    /// says when to pass it on).
    mutating func inputEnded(_ end: InputEnd) -> Bool {
        guard writing else { return false }
        heldEnds.append(end)
        return true
    }

    /// The next end of input held during a write, to pass on now that none is with the store.
    mutating func takeHeldInputEnd() -> InputEnd? {
        guard !writing, !heldEnds.isEmpty else { return nil }
        return heldEnds.removeFirst()
    }

    /// Whether to make the read asked for while a write was with the store, now that none is.
    mutating func takePendingRead() -> Bool {
        guard !writing, readPending else { return false }
        readPending = false
        return true
    }

    /// A read from the socket is complete.
    mutating func readComplete() -> ReadComplete {
        defer {
            needsFlush = false
            routedSinceReadComplete = false
        }
        return ReadComplete(flush: needsFlush, fireReadComplete: routedSinceReadComplete)
    }

    // MARK: Answers

    /// Whether an answer's head must say `Connection: close`: the connection is winding
    /// down and closes after its last answer.
    var answersClose: Bool { phase == .quiescing }

    /// The router wrote a final answer head (not `1xx`, but `101`) with `status`.
    func routedHead(status: HTTPResponseStatus) -> RoutedHead {
        let found = status == .ok || status == .notModified
        return RoutedHead(wantView: found ? routed.first ?? nil : nil, closing: answersClose)
    }

    /// An answer written here is about to end at `now`: what to do with its end. It is
    /// flushed at the end of the read, or at once when the connection closes.
    mutating func endLocalAnswer(now: NIODeadline) -> AnswerEnd {
        needsFlush = true
        return answerEnded(now: now)
    }

    /// The router's answer is about to end at `now`: what to do with its end.
    ///
    /// The router also answers what never became a request here: bytes the HTTP codec
    /// could not parse get their `400` from the router, which then closes the connection.
    /// Such an answer changes nothing in the machine.
    mutating func endRoutedAnswer(now: NIODeadline) -> AnswerEnd {
        guard !routed.isEmpty else { return .none }
        routed.removeFirst()
        return answerEnded(now: now)
    }

    private mutating func answerEnded(now: NIODeadline) -> AnswerEnd {
        assert(inFlight > 0, "an answer to no request")
        inFlight -= 1
        guard inFlight == 0 else { return .none }
        switch phase {
        case .quiescing:
            phase = .closing
            return .close
        case .serving, .refusing:
            lastActive = now
            return armIdleTimer().map { .scheduleIdleTimer(at: $0) } ?? .none
        case .inactive, .closing, .closed:
            return .none
        }
    }

    // MARK: Timers and shutdown

    private mutating func armIdleTimer() -> NIODeadline? {
        guard let idleTimeout, !idleTimerArmed else { return nil }
        idleTimerArmed = true
        return lastActive + idleTimeout
    }

    /// The idle timer fired at `now`.
    mutating func idleTimerFired(now: NIODeadline) -> IdleTimeout {
        idleTimerArmed = false
        guard let idleTimeout, phase == .serving || phase == .refusing || phase == .quiescing else { return .none }
        // Answering a request read whole: not idle; the timer is set again once answered.
        if !reading, inFlight > 0 { return .none }
        if now >= lastActive + idleTimeout {
            phase = .closing
            return .close
        }
        idleTimerArmed = true
        return .reschedule(at: lastActive + idleTimeout)
    }

    /// The server is shutting down gracefully: whether to close now (nothing in flight);
    /// otherwise the connection closes after the answers to the requests it has read.
    mutating func quiesce() -> Bool {
        switch phase {
        case .serving, .refusing:
            guard inFlight == 0 else {
                phase = .quiescing
                return false
            }
            phase = .closing
            return true
        case .inactive:
            phase = .closing
            return true
        case .quiescing, .closing, .closed:
            return false
        }
    }

    /// The channel's writability changed: it is `writable` now, or not (its send buffer
    /// is past the high-water mark: the client is not reading).
    mutating func writabilityChanged(writable: Bool) -> Stall {
        if writable {
            guard stallTimerArmed else { return .none }
            stallTimerArmed = false
            return .cancelStallTimer
        }
        guard !stallTimerArmed, phase != .closing, phase != .closed else { return .none }
        stallTimerArmed = true
        return .scheduleStallTimer(in: stallTimeout)
    }

    /// The stall timer fired (the client did not read for the whole timeout): whether to
    /// close.
    mutating func stallTimerFired() -> Bool {
        guard stallTimerArmed else { return false }
        stallTimerArmed = false
        guard phase != .closed else { return false }
        phase = .closing
        return true
    }
}
