import NIOCore
import NIOHPACK

/// HTTP/2 (RFC 9113) on one server connection, as a state machine: bytes read, the
/// layer above's answers and the clock in; frames out (into one buffer the handler
/// writes in one go, ``takeOutput(allocator:)``) and ``Event``s for the layer above.
/// It holds the protocol's whole state, private: both ends' settings, the connection's
/// and each stream's flow-control windows (``HTTP2FlowControl``), each stream's state
/// (RFC 9113 5.1) with its answer's DATA waiting for a window, the header block in
/// progress and HPACK both ways, resets counted, and the connection's phase.
///
/// It knows nothing of what streams carry: the layer above (``GRPCConnection``) keeps
/// its own object for each stream (`Context`), which the machine holds with the stream
/// and hands back with each event, so a frame costs one lookup of its stream.
///
/// Every rule whose breach resets a stream or ends the connection with GOAWAY is applied
/// here, and so are the connection's limits (``HTTP2Limits``): header lists and blocks,
/// streams at once, resets per window of time; bytes held of the connection's budget by
/// a header block in progress and by answers until they left; and, by the clock the
/// handler passes in (``expire(now:)``), the idle timeout, an answer's wait on a closed
/// window, a socket that does not drain, and the drain of a shutdown.
///
/// Shutting down (``goAway(now:)``) is graceful, as RFC 9113 6.8 describes: GOAWAY with
/// the last stream taken, streams at or below it answered, streams above it refused with
/// `REFUSED_STREAM` (never processed, so a client may send them again elsewhere), and
/// the connection closed once the last stream ended (``shouldClose``).
struct HTTP2Connection<Context: AnyObject, Block: HTTP2HeaderBlock> {
    typealias Stream = HTTP2Stream<Context, Block>

    private(set) var phase = Phase.awaitingPreface
    private let timeouts: HTTP2Timeouts
    /// What the connection holds for its client, against its own limit and the server's.
    let budget: ConnectionBudget
    private var reader = HTTP2FrameReader()
    private var headerBlocks = HTTP2HeaderBlocks()
    // `streams`, `flow`, `output`, `timers` and `ended` are internal, not private, for
    // the answers in HTTP2Connection+Answers.swift.
    var streams = HTTP2Streams<Context, Block>()
    /// The highest stream the client opened and the server took (GOAWAY names it).
    private(set) var lastStream: UInt32 = 0
    /// The highest stream the client used: streams at or below it that are not open are
    /// closed. Above ``lastStream`` only after GOAWAY, for streams refused unread.
    private var highestStream: UInt32 = 0
    var flow = HTTP2FlowControl()
    var output: HTTP2Output
    var timers: HTTP2Timers
    /// Whether the client sent GOAWAY.
    private var peerGoingAway = false
    /// Whether the connection is to close without waiting for what was framed to leave
    /// (a drain or a full socket past its timeout).
    private(set) var closeAtOnce = false
    /// Streams that ended, for ``nextEvent(now:)`` and ``nextEnded()`` to report.
    var ended = CircularBuffer<Event>(initialCapacity: 4)

    /// A connection that began at `now`; its first output is the server's SETTINGS.
    init(timeouts: HTTP2Timeouts, budget: ConnectionBudget, now: NIODeadline, allocator: ByteBufferAllocator = ByteBufferAllocator()) {
        self.timeouts = timeouts
        self.budget = budget
        timers = HTTP2Timers(now: now)
        output = HTTP2Output(allocator: allocator)
        output.settings(HTTP2Limits.settings)
    }

    // MARK: What the layer above reads

    /// Streams open now.
    var openStreams: Int { streams.count }
    /// Where stream `id` is in its life.
    func state(of id: UInt32) -> HTTP2StreamState {
        if let state = streams.read(id, { $0.state }) { return state }
        return id > highestStream ? .idle : .closed
    }
    /// The context of stream `id`, while it is open.
    func context(of id: UInt32) -> Context? { streams.read(id) { $0.context } }
    /// The contexts of every open stream.
    var contexts: [Context] { streams.all.map(\.context) }
    /// Whether stream `id` is open with its answer's end (trailers) decided.
    func isAnswered(_ id: UInt32) -> Bool { streams.read(id) { $0.trailers != nil } ?? false }
    /// Whether stream `id`'s answer began (its HEADERS left).
    func sentHeaders(_ id: UInt32) -> Bool { streams.read(id) { $0.sentHeaders } ?? false }
    /// Whether stream `id` has answer DATA waiting for a window.
    func hasQueuedData(_ id: UInt32) -> Bool { streams.read(id) { $0.hasQueued } ?? false }
    /// Bytes of DATA this end may still send, on the connection and on stream `id`.
    var sendWindow: Int { flow.sendWindow }
    func sendWindow(_ id: UInt32) -> Int? { streams.read(id) { $0.windows.sendWindow } }
    /// Whether nothing more is read: the connection is ending.
    var isClosing: Bool { phase == .closing || phase == .closed }
    /// Whether the connection should close once what was framed left: it ended, or it
    /// drains and its last stream ended.
    var shouldClose: Bool { isClosing || (phase == .draining && streams.isEmpty) }
    /// Whether this end sent GOAWAY for a graceful shutdown.
    var isDraining: Bool { timers.drainingSince != nil }
    /// Since when no stream has been open; nil while one is.
    var idleSince: NIODeadline? { timers.idleSince }

    // MARK: Bytes in

    /// Takes bytes as they came off the connection; ``nextEvent(now:)`` reads them.
    mutating func read(_ bytes: inout ByteBuffer) {
        guard !isClosing else { return }
        reader.append(&bytes)
    }

    /// Acts on the frames read until one means something to the layer above, or a
    /// stream ended; nil once no whole frame is left (or the connection is closing).
    mutating func nextEvent(now: @autoclosure () -> NIODeadline) -> Event? {
        while true {
            if let event = ended.popFirst() { return event }
            guard !isClosing else { return nil }
            do {
                guard let frame = try reader.next() else {
                    reader.release()
                    return nil
                }
                if phase == .awaitingPreface { phase = .awaitingSettings }
                if let event = try receive(frame, now: now()) { return event }
            } catch {
                // A stream's breach resets it and the frames after it are read on; a
                // connection's ends the connection.
                guard let id = error.stream else {
                    close(error.code, error.reason)
                    continue
                }
                reset(id, error.code, now: now())
            }
        }
    }

    /// The next stream that ended, without reading frames: for the layer above after its
    /// own calls (an answer sent whole closes its stream).
    mutating func nextEnded() -> Event? { ended.popFirst() }

    private mutating func receive(_ frame: HTTP2Wire.Frame, now: @autoclosure () -> NIODeadline) throws(HTTP2Wire.Violation) -> Event? {
        if headerBlocks.waitingStream != nil {
            // A header block's frames come together, nothing between them.
            guard frame.type == HTTP2Wire.FrameType.continuation.rawValue else {
                throw .connection(.protocolError, "a header block on stream \(headerBlocks.waitingStream ?? 0) was interrupted by another frame")
            }
            return try headersComplete(try headerBlocks.continuation(frame, budget: budget), now: now())
        }
        guard phase != .awaitingSettings || frame.type == HTTP2Wire.FrameType.settings.rawValue else {
            throw .connection(.protocolError, "the client preface must be followed by SETTINGS")
        }
        // An extension frame is ignored (RFC 9113, 5.5).
        guard let type = HTTP2Wire.FrameType(rawValue: frame.type) else { return nil }
        switch type {
        case .data: return try receiveData(frame, now: now())
        case .headers: return try headersComplete(try headerBlocks.headers(frame, budget: budget), now: now())
        case .priority:
            guard frame.stream != 0 else { throw .connection(.protocolError, "PRIORITY on stream 0") }
            guard frame.payload.readableBytes == 5 else {
                throw .stream(frame.stream, .frameSizeError, "a PRIORITY frame of \(frame.payload.readableBytes) bytes")
            }
        case .rstStream: try receiveReset(frame, now: now())
        case .settings: try receiveSettings(frame, now: now())
        case .pushPromise: throw .connection(.protocolError, "a client sent PUSH_PROMISE")
        case .ping:
            guard frame.stream == 0 else { throw .connection(.protocolError, "PING on stream \(frame.stream)") }
            guard frame.payload.readableBytes == 8 else { throw .connection(.frameSizeError, "a PING frame of \(frame.payload.readableBytes) bytes") }
            if !frame.has(HTTP2Wire.Flag.ack) { output.pingAck(frame.payload) }
        case .goAway:
            guard frame.stream == 0 else { throw .connection(.protocolError, "GOAWAY on stream \(frame.stream)") }
            guard frame.payload.readableBytes >= 8 else { throw .connection(.frameSizeError, "a GOAWAY frame of \(frame.payload.readableBytes) bytes") }
            // The client opens no more streams; the connection ends with its last one.
            peerGoingAway = true
            if phase == .open { phase = .draining }
        case .windowUpdate: try receiveWindowUpdate(frame, now: now())
        case .continuation: throw .connection(.protocolError, "CONTINUATION with no header block open")
        }
        return nil
    }

    private mutating func receiveData(_ frame: HTTP2Wire.Frame, now: @autoclosure () -> NIODeadline) throws(HTTP2Wire.Violation) -> Event? {
        guard frame.stream != 0 else { throw .connection(.protocolError, "DATA on stream 0") }
        let counted = frame.payload.readableBytes
        // Whatever happens to the stream, its bytes count against the connection's window,
        // which gets them back.
        if let increment = try flow.received(counted) { output.windowUpdate(0, increment) }
        var frame = frame
        _ = try frame.removePadding(priority: false)
        let id = frame.stream
        let endStream = frame.has(HTTP2Wire.Flag.endStream)
        guard let (context, increment) = try streams.receivedData(counted, on: id, endStream: endStream) else {
            guard id <= highestStream else { throw .connection(.protocolError, "DATA on stream \(id), which was never opened") }
            // A stream this end already closed (or refused): what was in flight is dropped.
            return nil
        }
        if let increment { output.windowUpdate(id, increment) }
        return .data(context, frame.payload, endStream: endStream)
    }

    /// A whole header block: a request's headers, or the client's trailers.
    private mutating func headersComplete(_ block: HTTP2HeaderBlocks.Block?, now: @autoclosure () -> NIODeadline) throws(HTTP2Wire.Violation) -> Event? {
        guard let block else { return nil }
        let id = block.stream
        if streams.read(id, { _ in true }) != nil {
            guard !block.selfDependent else { throw .stream(id, .protocolError, "a stream that depends on itself") }
            let context = try streams.receivedTrailers(on: id)
            // Trailers from the client end its side (RFC 9113, 8.1); only that matters.
            guard block.endStream, (try? GRPCRequestHead.checkTrailers(block.fields)) != nil else {
                throw .stream(id, .protocolError, "malformed trailers")
            }
            return .requestsEnded(context)
        }
        guard id > highestStream else { throw .connection(.streamClosed, "HEADERS on stream \(id), which is closed") }
        guard id & 1 == 1 else { throw .connection(.protocolError, "a client opened stream \(id), an even one") }
        highestStream = id
        // After this end's GOAWAY: not processed, so the client may send it again on
        // another connection (RFC 9113, 6.8).
        guard timers.drainingSince == nil else { throw .stream(id, .refusedStream, "the server is shutting down") }
        lastStream = id
        guard !block.selfDependent else { throw .stream(id, .protocolError, "a stream that depends on itself") }
        guard !peerGoingAway else { throw .stream(id, .refusedStream, "the client is going away") }
        guard streams.count < HTTP2Limits.maxConcurrentStreams else {
            throw .stream(id, .refusedStream, "over SETTINGS_MAX_CONCURRENT_STREAMS (\(HTTP2Limits.maxConcurrentStreams))")
        }
        return .opened(id, block.fields, endStream: block.endStream, number: block.number)
    }

    private mutating func receiveReset(_ frame: HTTP2Wire.Frame, now: @autoclosure () -> NIODeadline) throws(HTTP2Wire.Violation) {
        guard frame.stream != 0 else { throw .connection(.protocolError, "RST_STREAM on stream 0") }
        guard frame.payload.readableBytes == 4 else { throw .connection(.frameSizeError, "a RST_STREAM frame of \(frame.payload.readableBytes) bytes") }
        guard frame.stream <= highestStream else { throw .connection(.protocolError, "RST_STREAM on stream \(frame.stream), which was never opened") }
        let now = now()
        guard let stream = remove(frame.stream, now: now) else { return }
        ended.append(.reset(stream.context))
        // Rapid reset: each stream opened and reset costs the server work, the client none.
        guard timers.countReset(now: now) else {
            throw .connection(.enhanceYourCalm, "more than \(HTTP2Limits.maxResets) streams reset in \(HTTP2Timeouts.seconds(HTTP2Limits.resetWindow)) s")
        }
    }

    private mutating func receiveSettings(_ frame: HTTP2Wire.Frame, now: @autoclosure () -> NIODeadline) throws(HTTP2Wire.Violation) {
        guard frame.stream == 0 else { throw .connection(.protocolError, "SETTINGS on stream \(frame.stream)") }
        var payload = frame.payload
        if frame.has(HTTP2Wire.Flag.ack) {
            guard payload.readableBytes == 0 else { throw .connection(.frameSizeError, "a SETTINGS acknowledgement with a payload") }
            return
        }
        guard payload.readableBytes % 6 == 0 else { throw .connection(.frameSizeError, "a SETTINGS frame of \(payload.readableBytes) bytes") }
        if phase == .awaitingSettings { phase = .open }
        while let identifier = payload.readInteger(as: UInt16.self), let raw = payload.readInteger(as: UInt32.self) {
            let value = Int(raw)
            switch HTTP2Wire.Setting(rawValue: identifier) {
            case .headerTableSize?:
                output.clientTableSize(value)
            case .enablePush?:
                guard value <= 1 else { throw .connection(.protocolError, "SETTINGS_ENABLE_PUSH of \(value)") }
            case .initialWindowSize?:
                try streams.initialWindowChanged(by: try flow.initialStreamWindowChanged(to: value))
            case .maxFrameSize?:
                guard (HTTP2Wire.defaultMaxFrameSize...HTTP2Wire.largestMaxFrameSize).contains(value) else {
                    throw .connection(.protocolError, "SETTINGS_MAX_FRAME_SIZE of \(value)")
                }
                output.clientMaxFrameSize(value)
            case .maxConcurrentStreams?, .maxHeaderListSize?, nil:
                // This end opens no streams, and its header lists are small.
                break
            }
        }
        output.settingsAck()
        // A larger initial window may let waiting DATA go.
        for id in streams.queuedStreams { sendQueued(id, now: now()) }
    }

    private mutating func receiveWindowUpdate(_ frame: HTTP2Wire.Frame, now: @autoclosure () -> NIODeadline) throws(HTTP2Wire.Violation) {
        var payload = frame.payload
        guard payload.readableBytes == 4, let raw = payload.readInteger(as: UInt32.self) else {
            throw .connection(.frameSizeError, "a WINDOW_UPDATE frame of \(frame.payload.readableBytes) bytes")
        }
        let increment = Int(raw & 0x7FFF_FFFF)
        guard frame.stream != 0 else {
            try flow.update(by: increment)
            // Streams waiting for the connection's window go in the order they waited.
            for id in streams.takeBlocked() { sendQueued(id, now: now()) }
            return
        }
        guard frame.stream <= highestStream else { throw .connection(.protocolError, "WINDOW_UPDATE on stream \(frame.stream), which was never opened") }
        guard increment > 0 else { throw .stream(frame.stream, .protocolError, "a WINDOW_UPDATE of 0") }
        if try streams.windowUpdate(frame.stream, by: increment) { sendQueued(frame.stream, now: now()) }
    }

    // MARK: Life of the connection

    /// Ends the connection: GOAWAY with `code`, nothing more read, and closed once what
    /// was framed before it left (``shouldClose``).
    mutating func close(_ code: HTTP2Wire.ErrorCode, _ reason: String) {
        guard !isClosing else { return }
        phase = .closing
        output.goAway(lastStream: lastStream, code, reason)
    }

    /// Begins a graceful shutdown: GOAWAY `NO_ERROR` with the last stream taken, whose
    /// streams are finished; any stream the client opens after it is refused unread.
    /// The connection may close once no stream is left (``shouldClose``), or once
    /// ``HTTP2Timeouts/drain`` passed.
    mutating func goAway(now: NIODeadline) {
        guard !isClosing, timers.drainingSince == nil else { return }
        timers.draining(since: now)
        phase = .draining
        output.goAway(lastStream: lastStream, .noError, "the server is shutting down")
    }

    /// The socket's send buffer filled (`writable` false) or drained.
    mutating func socketWritable(_ writable: Bool, now: NIODeadline) {
        timers.socketWritable(writable, now: now)
    }

    /// Acts on what ran out by `now`: the connection idle for the idle timeout (GOAWAY
    /// `NO_ERROR`, as gRPC's MaxConnectionIdle: no stream open, whatever PINGs come, or a
    /// client pinging a connection it never uses would hold it for good); a drain or a
    /// full socket past their timeouts (closed); an answer waiting on a closed window for
    /// the write timeout (its stream reset with `ENHANCE_YOUR_CALM`: what it held goes
    /// back, and the client hears it was given up).
    mutating func expire(now: NIODeadline) {
        guard !isClosing else { return }
        switch timers.expired(now: now, timeouts) {
        case .idle?:
            close(.noError, "no request for \(HTTP2Timeouts.seconds(timeouts.idle)) s (serve --idle-timeout)")
        case .drain?, .stall?:
            phase = .closing
            closeAtOnce = true
        case nil:
            let waited = streams.all.filter { $0.waitingSince.map { now - $0 >= timeouts.write } ?? false }
            for stream in waited { reset(stream.id, .enhanceYourCalm, now: now) }
        }
    }

    /// The connection's socket closed: every stream ends, what they and the connection
    /// held goes back, and what was framed and not written fails with `error`.
    mutating func closed(_ error: any Error, now: NIODeadline) {
        phase = .closed
        headerBlocks.release(budget)
        for stream in streams.removeAll(budget: budget) { ended.append(.reset(stream.context)) }
        output.fail(error, budget: budget)
    }

    // MARK: Streams

    /// Takes stream `id`, which the layer above heard of as ``Event/opened(_:_:endStream:number:)``,
    /// with its object for it.
    mutating func accept(_ id: UInt32, context: Context, endStream: Bool) {
        let windows = HTTP2StreamWindows(sendWindow: flow.initialStreamWindow)
        streams.insert(Stream(id: id, context: context, state: endStream ? .halfClosedRemote : .open, windows: windows))
        timers.busy()
    }

    /// Resets stream `id` with `code`: its answer's DATA is dropped, and the layer above
    /// hears the stream ended (``Event/reset(_:)``).
    mutating func reset(_ id: UInt32, _ code: HTTP2Wire.ErrorCode, now: @autoclosure () -> NIODeadline) {
        if let stream = remove(id, now: now()) { ended.append(.reset(stream.context)) }
        output.reset(id, code)
    }

    /// Forgets a stream; what its waiting DATA held goes back to the budget.
    private mutating func remove(_ id: UInt32, now: @autoclosure () -> NIODeadline) -> Stream? {
        guard let stream = streams.remove(id, budget: budget) else { return nil }
        if streams.isEmpty { timers.idle(since: now()) }
        return stream
    }
}
