import DiscfgNetwork
import GRPCCore
import NIOCore
import NIOHPACK

/// gRPC over one HTTP/2 connection, on the connection's event loop: the connection's
/// bytes in, each stream's request messages to its method, responses and trailers out.
///
/// It speaks HTTP/2 itself (RFC 9113), with SwiftNIO's HPACK for header blocks: the
/// frames a gRPC server meets, the client's settings, flow control both ways, and every
/// rule whose breach resets a stream or ends the connection with GOAWAY. A general
/// HTTP/2 stack spent about a third of the server's instructions on each put (a state
/// machine per stream, header checks done twice, a pipeline write per frame); here a
/// loop turn's frames leave in one write.
///
/// Each request runs as one task that starts when the request is whole (unary) or when
/// the stream opens (streaming), on this connection's event loop; nothing else leaves it.
/// Requests are plain gRPC: `application/grpc` with no message compression (as etcd
/// clients send them), each message at most ``maxMessageBytes``.
///
/// What the connection holds for its client is counted against its own limit
/// (``maxConnectionBytes``) and the server's (``StreamBytes``): each open stream's
/// state, request bytes until their method took them, answers from the moment they are
/// built until they left for the socket, and a fixed overhead for every message. Time
/// bounds the rest (``Timeouts``): a connection with no stream open for the idle
/// timeout is sent GOAWAY and closed, as gRPC's `MaxConnectionIdle`; so is one whose
/// socket stays full for the write timeout; a request message not whole within the
/// idle timeout, or an answer that waits on a closed flow-control window for the write
/// timeout, resets its stream and gives back what it held.
final class GRPCConnection: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The largest request message taken (etcd's default request limit is 1.5 MiB).
    static let maxMessageBytes = 4 << 20
    /// Each stream's receive window (the server's SETTINGS_INITIAL_WINDOW_SIZE), and the
    /// connection's once widened.
    static let windowBytes = 1 << 20
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
    /// Requests served at once on one connection (SETTINGS_MAX_CONCURRENT_STREAMS).
    static let maxConcurrentStreams = 256
    /// The largest decoded header list taken (SETTINGS_MAX_HEADER_LIST_SIZE).
    static let maxHeaderListBytes = 16 << 10
    /// The most bytes of one encoded header block, over its HEADERS and CONTINUATION
    /// frames, and the most CONTINUATION frames: past them the connection ends.
    static let maxHeaderBlockBytes = 64 << 10
    static let maxContinuationFrames = 64
    /// Streams a client may reset in ``resetWindow`` before the connection ends
    /// (a flood of opened and reset streams costs the server work each, the client none).
    static let maxResets = 200
    static let resetWindow = TimeAmount.seconds(30)

    /// What the server tells each client: up to ``maxConcurrentStreams`` requests at
    /// once, ``windowBytes`` of request data in flight per stream, header lists up to
    /// ``maxHeaderListBytes``.
    static let settings: [(HTTP2Wire.Setting, Int)] = [
        (.maxConcurrentStreams, maxConcurrentStreams),
        (.initialWindowSize, windowBytes),
        (.maxHeaderListSize, maxHeaderListBytes),
    ]

    let methods: [String: GRPCMethod]
    /// Bytes this connection holds for its client, and all connections together.
    let connectionBytes = Budget(limit: GRPCConnection.maxConnectionBytes, floor: GRPCConnection.floorBytes)
    let serverBytes: Budget
    let timeouts: Timeouts
    private var handshake: Scheduled<Void>?
    /// The next look for streams and connections that waited past their timeouts.
    var sweep: Scheduled<Void>?
    /// Closes the connection once its socket stayed full for the write timeout.
    private var stall: Scheduled<Void>?
    /// Since when no stream has been open; nil while one is.
    var idleSince: NIODeadline? = .now()
    /// Bytes of answers framed into `outbound` (sent, for the client's windows) that the
    /// budgets still count: given back once the write that carries them completed.
    var outboundCharge = 0

    var context: ChannelHandlerContext?
    /// Where this connection's requests run: its own event loop.
    var executor: EventLoopExecutor?
    /// The client's and this end's addresses as a request's context names them; asked of
    /// the socket once, not for every request.
    var peers: (remote: String, local: String)?

    // MARK: HTTP/2 state

    private var reader = HTTP2FrameReader()
    /// Whether the client's SETTINGS, which must follow its preface, came.
    private var sawSettings = false
    private var decoder = HPACKDecoder(allocator: ByteBufferAllocator(), maxDynamicTableSize: HPACKDecoder.maxDynamicTableSize, maxHeaderListSize: GRPCConnection.maxHeaderListBytes)
    var encoder = ResponseHeaderEncoder()
    /// A header block whose CONTINUATION frames are still to come.
    private struct PendingHeaderBlock {
        let stream: UInt32
        let endStream: Bool
        /// Whether its HEADERS named the stream itself as the one it depends on.
        let selfDependent: Bool
        var fragments: ByteBuffer
        var frames = 1
    }
    private var headerBlock: PendingHeaderBlock?
    /// What a header block still arriving holds of the budgets: the most it may grow to,
    /// taken when it starts (its fragments are slices that keep whole reads alive).
    private var headerBlockCharge = 0
    /// The highest stream the client opened and the server took (GOAWAY names it).
    private(set) var lastStream: UInt32 = 0
    /// The highest stream the client used: streams at or below it that are not open are
    /// closed. Above ``lastStream`` only after GOAWAY, for streams refused unread.
    private var highestStream: UInt32 = 0
    var streams: [UInt32: Stream] = [:]
    /// Bytes the client may still send on the connection, and what that window is owed:
    /// the bytes of DATA read, and at first its widening from 65,535 to ``windowBytes``.
    private var receiveWindow = HTTP2Wire.defaultWindowBytes
    private var connectionCredit = WindowCredit(owed: GRPCConnection.windowBytes - HTTP2Wire.defaultWindowBytes)
    /// Bytes of DATA this end may still send on the connection.
    var sendWindow = HTTP2Wire.defaultWindowBytes
    /// The client's SETTINGS_INITIAL_WINDOW_SIZE and SETTINGS_MAX_FRAME_SIZE.
    var peerInitialWindow = HTTP2Wire.defaultWindowBytes
    var peerMaxFrameSize = HTTP2Wire.defaultMaxFrameSize
    /// Streams with DATA waiting for the connection's window, in the order they waited.
    var blocked: [UInt32] = []
    /// Client resets counted since `resetsSince`.
    private var resets = 0
    private var resetsSince = NIODeadline.now()
    /// Set once the connection is ending: GOAWAY sent or about to be, nothing more read.
    private(set) var closing = false
    /// Whether the client sent GOAWAY: the connection ends once its streams are done.
    private(set) var peerGoingAway = false
    /// Whether this end sent GOAWAY for a graceful shutdown: streams open are finished,
    /// new ones refused, and the connection ends once its streams are done.
    private(set) var draining = false
    /// Closes a draining connection whose streams did not finish in time.
    private var drainBound: Scheduled<Void>?
    /// A read the channel asked for while the socket's send buffer was full: the client
    /// is not reading what it asked for, so nothing more is read from it until it does.
    private var readHeld = false

    // MARK: Output

    /// Frames written this turn of the loop, sent together by ``flush()``.
    var outbound: ByteBuffer
    /// Promises of what `outbound` holds, completed once it was written.
    var outboundPromises: [EventLoopPromise<Void>] = []
    /// Whether a flush is already due on the loop (answers finished in one turn of the
    /// loop leave in one write).
    var flushScheduled = false

    /// A connection serving `methods`, holding what it holds for its client within its
    /// own limit and within `serverBytes`, which all connections share.
    init(methods: [String: GRPCMethod], timeouts: Timeouts, serverBytes: Budget) {
        self.methods = methods
        self.timeouts = timeouts
        self.serverBytes = serverBytes
        outbound = ByteBufferAllocator().buffer(capacity: 0)
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        executor = EventLoopExecutor(context.eventLoop)
        outbound = context.channel.allocator.buffer(capacity: 4096)
        // A client that never finishes the HTTP/2 preface holds nothing for long.
        let channel = context.channel
        handshake = context.eventLoop.scheduleTask(in: timeouts.idle) { channel.close(promise: nil) }
        idleSince = now
        scheduleSweep()
        if context.channel.isActive { sendPreface() }
    }

    func channelActive(context: ChannelHandlerContext) {
        sendPreface()
        context.fireChannelActive()
    }

    /// The server's preface: its SETTINGS.
    private var sentPreface = false
    private func sendPreface() {
        guard !sentPreface else { return }
        sentPreface = true
        outbound.writeHTTP2FrameHeader(length: 6 * Self.settings.count, type: .settings, stream: 0)
        for (setting, value) in Self.settings {
            outbound.writeInteger(setting.rawValue)
            outbound.writeInteger(UInt32(value))
        }
        flush()
    }

    func channelInactive(context: ChannelHandlerContext) {
        handshake?.cancel()
        drainBound?.cancel()
        sweep?.cancel()
        sweep = nil
        stall?.cancel()
        stall = nil
        releaseHeaderBlock()
        closing = true
        for stream in streams.values {
            stream.bytes.end()
            drop(stream)
        }
        streams = [:]
        blocked = []
        failOutbound(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // The socket failed: the connection cannot go on.
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        var bytes = unwrapInboundIn(data)
        reader.append(&bytes)
        while !closing {
            let frame: HTTP2Wire.Frame
            do {
                guard let next = try reader.next() else {
                    reader.release()
                    return
                }
                frame = next
            } catch {
                violated(error)
                return
            }
            if let handshake {
                handshake.cancel()
                self.handshake = nil
            }
            do {
                try receive(frame)
            } catch {
                // A stream's breach resets it and the frames after it are read on; a
                // connection's ends the connection.
                violated(error)
            }
        }
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
        if context.channel.isWritable {
            stall?.cancel()
            stall = nil
            if readHeld {
                readHeld = false
                context.read()
            }
        } else if stall == nil, !closing {
            // A client that reads none of what it asked for, or a trickle: what is
            // written for it waits in memory, so it has the write timeout to drain it.
            let channel = context.channel
            stall = context.eventLoop.scheduleTask(in: timeouts.write) { channel.close(promise: nil) }
        }
        context.fireChannelWritabilityChanged()
    }

    // MARK: Frames in

    private func receive(_ frame: HTTP2Wire.Frame) throws(HTTP2Wire.Violation) {
        if let block = headerBlock {
            // A header block's frames come together, nothing between them.
            guard frame.type == HTTP2Wire.FrameType.continuation.rawValue, frame.stream == block.stream else {
                throw .connection(.protocolError, "a header block on stream \(block.stream) was interrupted by another frame")
            }
            try continueHeaders(frame, block)
            return
        }
        guard sawSettings || frame.type == HTTP2Wire.FrameType.settings.rawValue else {
            throw .connection(.protocolError, "the client preface must be followed by SETTINGS")
        }
        guard let type = HTTP2Wire.FrameType(rawValue: frame.type) else {
            // An extension frame: ignored (RFC 9113, 5.5).
            return
        }
        switch type {
        case .data: try receiveData(frame)
        case .headers: try receiveHeaders(frame)
        case .priority:
            guard frame.stream != 0 else { throw .connection(.protocolError, "PRIORITY on stream 0") }
            guard frame.payload.readableBytes == 5 else {
                throw .stream(frame.stream, .frameSizeError, "a PRIORITY frame of \(frame.payload.readableBytes) bytes")
            }
        case .rstStream: try receiveReset(frame)
        case .settings: try receiveSettings(frame)
        case .pushPromise: throw .connection(.protocolError, "a client sent PUSH_PROMISE")
        case .ping: try receivePing(frame)
        case .goAway:
            guard frame.stream == 0 else { throw .connection(.protocolError, "GOAWAY on stream \(frame.stream)") }
            guard frame.payload.readableBytes >= 8 else { throw .connection(.frameSizeError, "a GOAWAY frame of \(frame.payload.readableBytes) bytes") }
            peerGoingAway = true
            if streams.isEmpty { closeAfterFlush() }
        case .windowUpdate: try receiveWindowUpdate(frame)
        case .continuation: throw .connection(.protocolError, "CONTINUATION with no header block open")
        }
    }

    private func receiveData(_ frame: HTTP2Wire.Frame) throws(HTTP2Wire.Violation) {
        guard frame.stream != 0 else { throw .connection(.protocolError, "DATA on stream 0") }
        let counted = frame.payload.readableBytes
        // Whatever happens to the stream, its bytes count against the connection's window,
        // which gets them back.
        guard counted <= receiveWindow else { throw .connection(.flowControlError, "DATA past the connection's flow-control window") }
        receiveWindow -= counted
        if let increment = connectionCredit.read(counted) {
            receiveWindow += increment
            outbound.writeHTTP2WindowUpdate(stream: 0, increment: increment)
        }
        var frame = frame
        _ = try frame.removePadding(priority: false)
        guard let stream = streams[frame.stream] else {
            guard frame.stream <= highestStream else { throw .connection(.protocolError, "DATA on stream \(frame.stream), which was never opened") }
            // A stream this end already closed: what was in flight is dropped.
            return
        }
        guard !stream.requestsEnded else { throw .stream(stream.id, .streamClosed, "DATA after the client ended the stream") }
        guard counted <= stream.receiveWindow else { throw .stream(stream.id, .flowControlError, "DATA past the stream's flow-control window") }
        stream.receiveWindow -= counted
        let endStream = frame.has(HTTP2Wire.Flag.endStream)
        if !endStream, let increment = stream.credit.read(counted) {
            stream.receiveWindow += increment
            outbound.writeHTTP2WindowUpdate(stream: stream.id, increment: increment)
        }
        received(frame.payload, on: stream, endStream: endStream)
    }

    private func receiveHeaders(_ frame: HTTP2Wire.Frame) throws(HTTP2Wire.Violation) {
        guard frame.stream != 0 else { throw .connection(.protocolError, "HEADERS on stream 0") }
        var frame = frame
        let dependency = try frame.removePadding(priority: true)
        let block = PendingHeaderBlock(
            stream: frame.stream, endStream: frame.has(HTTP2Wire.Flag.endStream), selfDependent: dependency == frame.stream, fragments: frame.payload
        )
        guard frame.has(HTTP2Wire.Flag.endHeaders) else {
            guard frame.payload.readableBytes <= Self.maxHeaderBlockBytes else { throw Self.headerBlockTooLarge }
            try holdHeaderBlock()
            headerBlock = block
            return
        }
        try headersComplete(block)
    }

    /// Counts a header block that waits for its CONTINUATION frames: a connection may
    /// leave one unfinished as long as it stays open.
    private func holdHeaderBlock() throws(HTTP2Wire.Violation) {
        guard headerBlockCharge == 0 else { return }
        do {
            try StreamBytes.take(Self.maxHeaderBlockBytes, connection: connectionBytes, server: serverBytes)
        } catch {
            throw .connection(.enhanceYourCalm, "a header block in CONTINUATION frames while the server holds all it may for its clients")
        }
        headerBlockCharge = Self.maxHeaderBlockBytes
    }

    private func releaseHeaderBlock() {
        StreamBytes.give(headerBlockCharge, connection: connectionBytes, server: serverBytes)
        headerBlockCharge = 0
    }

    private func continueHeaders(_ frame: HTTP2Wire.Frame, _ block: PendingHeaderBlock) throws(HTTP2Wire.Violation) {
        var block = block
        var fragment = frame.payload
        guard block.fragments.readableBytes + fragment.readableBytes <= Self.maxHeaderBlockBytes, block.frames < Self.maxContinuationFrames else {
            throw Self.headerBlockTooLarge
        }
        headerBlock = nil
        block.fragments.writeBuffer(&fragment)
        block.frames += 1
        guard frame.has(HTTP2Wire.Flag.endHeaders) else {
            headerBlock = block
            return
        }
        releaseHeaderBlock()
        try headersComplete(block)
    }

    private static let headerBlockTooLarge = HTTP2Wire.Violation.connection(
        .enhanceYourCalm, "a header block over \(maxHeaderBlockBytes >> 10) KiB or \(maxContinuationFrames) CONTINUATION frames"
    )

    /// A whole header block: a request's headers, or the client's trailers.
    private func headersComplete(_ block: PendingHeaderBlock) throws(HTTP2Wire.Violation) {
        // Decoded whatever comes of it, so the connection's HPACK state stays the client's.
        let fields = try decodeHeaders(block.fragments)
        let id = block.stream
        if let stream = streams[id] {
            guard !block.selfDependent else { throw .stream(id, .protocolError, "a stream that depends on itself") }
            guard !stream.requestsEnded else { throw .stream(id, .streamClosed, "HEADERS after the client ended the stream") }
            // Trailers from the client end its side (RFC 9113, 8.1); only that matters.
            guard block.endStream, (try? GRPCRequestHead.checkTrailers(fields)) != nil else {
                throw .stream(id, .protocolError, "malformed trailers")
            }
            requestsEnded(stream)
            return
        }
        guard id > highestStream else {
            throw .connection(.streamClosed, "HEADERS on stream \(id), which is closed")
        }
        guard id & 1 == 1 else { throw .connection(.protocolError, "a client opened stream \(id), an even one") }
        highestStream = id
        // After this end's GOAWAY: not processed, so the client may send it again on
        // another connection (RFC 9113, 6.8).
        guard !draining else { throw .stream(id, .refusedStream, "the server is shutting down") }
        lastStream = id
        guard !block.selfDependent else { throw .stream(id, .protocolError, "a stream that depends on itself") }
        guard !peerGoingAway else { throw .stream(id, .refusedStream, "the client is going away") }
        guard streams.count < Self.maxConcurrentStreams else {
            throw .stream(id, .refusedStream, "over SETTINGS_MAX_CONCURRENT_STREAMS (\(Self.maxConcurrentStreams))")
        }
        let head: GRPCRequestHead
        do {
            head = try GRPCRequestHead(fields)
        } catch {
            // A malformed request (RFC 9113, 8.1.1): its stream is reset, nothing else.
            throw .stream(id, .protocolError, error.description)
        }
        open(id, head: head, endStream: block.endStream)
    }

    private func decodeHeaders(_ block: ByteBuffer) throws(HTTP2Wire.Violation) -> HPACKHeaders {
        var block = block
        do {
            return try decoder.decode(&block)
        } catch {
            // The block may have changed the decoder's table only in part: the two ends no
            // longer agree on it, and nothing more can be read (RFC 9113, 4.3).
            throw .connection(.compressionError, "a header block that does not decode: \(error)")
        }
    }

    private func receiveReset(_ frame: HTTP2Wire.Frame) throws(HTTP2Wire.Violation) {
        guard frame.stream != 0 else { throw .connection(.protocolError, "RST_STREAM on stream 0") }
        guard frame.payload.readableBytes == 4 else { throw .connection(.frameSizeError, "a RST_STREAM frame of \(frame.payload.readableBytes) bytes") }
        guard frame.stream <= highestStream else { throw .connection(.protocolError, "RST_STREAM on stream \(frame.stream), which was never opened") }
        guard let stream = remove(frame.stream) else { return }
        drop(stream)
        let now = NIODeadline.now()
        if now - resetsSince > Self.resetWindow {
            resets = 0
            resetsSince = now
        }
        resets += 1
        if resets > Self.maxResets {
            throw .connection(.enhanceYourCalm, "more than \(Self.maxResets) streams reset in \(Self.resetWindow.nanoseconds / 1_000_000_000) s")
        }
    }

    private func receiveSettings(_ frame: HTTP2Wire.Frame) throws(HTTP2Wire.Violation) {
        guard frame.stream == 0 else { throw .connection(.protocolError, "SETTINGS on stream \(frame.stream)") }
        var payload = frame.payload
        if frame.has(HTTP2Wire.Flag.ack) {
            guard payload.readableBytes == 0 else { throw .connection(.frameSizeError, "a SETTINGS acknowledgement with a payload") }
            return
        }
        guard payload.readableBytes % 6 == 0 else { throw .connection(.frameSizeError, "a SETTINGS frame of \(payload.readableBytes) bytes") }
        sawSettings = true
        while let identifier = payload.readInteger(as: UInt16.self), let raw = payload.readInteger(as: UInt32.self) {
            let value = Int(raw)
            switch HTTP2Wire.Setting(rawValue: identifier) {
            case .headerTableSize?:
                // This end's HPACK table, as large as the client's decoder allows.
                encoder.clientTableSize(value)
            case .enablePush?:
                guard value <= 1 else { throw .connection(.protocolError, "SETTINGS_ENABLE_PUSH of \(value)") }
            case .initialWindowSize?:
                guard value <= HTTP2Wire.maxWindowBytes else { throw .connection(.flowControlError, "SETTINGS_INITIAL_WINDOW_SIZE of \(value)") }
                let change = value - peerInitialWindow
                peerInitialWindow = value
                for stream in streams.values {
                    stream.sendWindow += change
                    guard stream.sendWindow <= HTTP2Wire.maxWindowBytes else {
                        throw .connection(.flowControlError, "SETTINGS_INITIAL_WINDOW_SIZE took stream \(stream.id)'s window past 2^31-1")
                    }
                }
            case .maxFrameSize?:
                guard (HTTP2Wire.defaultMaxFrameSize...HTTP2Wire.largestMaxFrameSize).contains(value) else {
                    throw .connection(.protocolError, "SETTINGS_MAX_FRAME_SIZE of \(value)")
                }
                peerMaxFrameSize = value
            case .maxConcurrentStreams?, .maxHeaderListSize?, nil:
                // This end opens no streams, and its header lists are small.
                break
            }
        }
        outbound.writeHTTP2FrameHeader(length: 0, type: .settings, flags: HTTP2Wire.Flag.ack, stream: 0)
        // A larger initial window may let waiting DATA go.
        for stream in Array(streams.values) where !stream.queued.isEmpty { sendQueued(stream) }
    }

    private func receivePing(_ frame: HTTP2Wire.Frame) throws(HTTP2Wire.Violation) {
        guard frame.stream == 0 else { throw .connection(.protocolError, "PING on stream \(frame.stream)") }
        guard frame.payload.readableBytes == 8 else { throw .connection(.frameSizeError, "a PING frame of \(frame.payload.readableBytes) bytes") }
        guard !frame.has(HTTP2Wire.Flag.ack) else { return }
        outbound.writeHTTP2Frame(type: .ping, flags: HTTP2Wire.Flag.ack, stream: 0, payload: frame.payload)
    }

    private func receiveWindowUpdate(_ frame: HTTP2Wire.Frame) throws(HTTP2Wire.Violation) {
        var payload = frame.payload
        guard payload.readableBytes == 4, let raw = payload.readInteger(as: UInt32.self) else {
            throw .connection(.frameSizeError, "a WINDOW_UPDATE frame of \(frame.payload.readableBytes) bytes")
        }
        let increment = Int(raw & 0x7FFF_FFFF)
        guard frame.stream != 0 else {
            guard increment > 0 else { throw .connection(.protocolError, "a WINDOW_UPDATE of 0 on the connection") }
            sendWindow += increment
            guard sendWindow <= HTTP2Wire.maxWindowBytes else { throw .connection(.flowControlError, "WINDOW_UPDATE took the connection's window past 2^31-1") }
            // Streams waiting for the connection's window go in the order they waited.
            let waiting = blocked
            blocked = []
            for id in waiting {
                if let stream = streams[id] { sendQueued(stream) }
            }
            return
        }
        guard frame.stream <= highestStream else { throw .connection(.protocolError, "WINDOW_UPDATE on stream \(frame.stream), which was never opened") }
        guard increment > 0 else { throw .stream(frame.stream, .protocolError, "a WINDOW_UPDATE of 0") }
        guard let stream = streams[frame.stream] else { return }
        stream.sendWindow += increment
        guard stream.sendWindow <= HTTP2Wire.maxWindowBytes else { throw .stream(stream.id, .flowControlError, "WINDOW_UPDATE took the stream's window past 2^31-1") }
        sendQueued(stream)
    }

    /// Acts on a breach of the protocol: the stream it concerns is reset, or the whole
    /// connection ends with GOAWAY once what it sent before has left.
    private func violated(_ violation: HTTP2Wire.Violation) {
        if let id = violation.stream {
            if let stream = remove(id) { drop(stream) }
            outbound.writeHTTP2Reset(stream: id, code: violation.code)
            scheduleFlush()
            return
        }
        goAway(violation.code, violation.reason)
    }

    /// Ends the connection: GOAWAY with `code`, then closed once what was framed before
    /// it has left.
    func goAway(_ code: HTTP2Wire.ErrorCode, _ reason: String) {
        closing = true
        outbound.writeHTTP2GoAway(lastStream: lastStream, code: code, reason: reason)
        closeAfterFlush()
    }

    /// Winds the connection down for the server's shutdown, as RFC 9113 6.8 describes:
    /// GOAWAY `NO_ERROR` names the last stream taken; streams at or below it are
    /// finished (unary calls answered; streaming calls, which would not end by
    /// themselves, ended with `UNAVAILABLE` so their clients go elsewhere); streams the
    /// client opens after it are refused with `REFUSED_STREAM`, unprocessed; and the
    /// connection closes once its last stream ended, or after ``Timeouts/drain``.
    func drain() {
        guard !closing, !draining, let context else { return }
        draining = true
        outbound.writeHTTP2GoAway(lastStream: lastStream, code: .noError, reason: "the server is shutting down")
        for stream in Array(streams.values) {
            if case .bidirectional = stream.method.kind {
                fail(stream, RPCError(code: .unavailable, message: "the server is shutting down; connect again"))
            }
        }
        if streams.isEmpty {
            closeAfterFlush()
            return
        }
        scheduleFlush()
        let channel = context.channel
        drainBound = context.eventLoop.scheduleTask(in: timeouts.drain) { channel.close(promise: nil) }
    }

    /// Closes the connection once what was framed so far has left.
    func closeAfterFlush() {
        guard let context else { return }
        let promise = context.eventLoop.makePromise(of: Void.self)
        outboundPromises.append(promise)
        flush()
        let channel = context.channel
        promise.futureResult.whenComplete { _ in channel.close(promise: nil) }
    }
}

extension HPACKDecoder {
    /// Decodes a whole header block.
    fileprivate mutating func decode(_ block: inout ByteBuffer) throws -> HPACKHeaders {
        try decodeHeaders(from: &block)
    }
}
