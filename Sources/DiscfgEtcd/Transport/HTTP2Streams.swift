import NIOCore

/// A connection's open streams and the sending of their answers: DATA within the
/// connection's and each stream's send windows, DATA queued while a window is closed
/// (in the order streams waited for the connection's window), and each answer's
/// trailers after its last DATA. Part of ``HTTP2Connection``, which owns it privately;
/// its own state is private too, so a window or a queue changes only here. Streams are
/// objects (``HTTP2Stream``), so a copy of this value shares them: the connection that
/// owns it is never copied.
struct HTTP2Streams<Context: AnyObject, Block: HTTP2HeaderBlock> {
    typealias Stream = HTTP2Stream<Context, Block>

    private var open: [UInt32: Stream] = [:]
    /// The stream last found, found again without hashing: a call's frames and answer
    /// look its stream up about ten times in a row.
    private var last: Stream?
    /// Streams with DATA waiting for the connection's window, in the order they waited.
    private var blocked: [UInt32] = []

    var count: Int { open.count }
    var isEmpty: Bool { open.isEmpty }
    /// Stream `id`'s fields.
    func read<T>(_ id: UInt32, _ field: (Stream) -> T) -> T? {
        if let last, last.id == id { return field(last) }
        return open[id].map(field)
    }
    var all: Dictionary<UInt32, Stream>.Values { open.values }

    mutating func insert(_ stream: Stream) {
        open[stream.id] = stream
        last = stream
    }

    /// Open stream `id`, or nil.
    private mutating func openStream(_ id: UInt32) -> Stream? {
        if let last, last.id == id { return last }
        let found = open[id]
        if found != nil { last = found }
        return found
    }

    /// Forgets a stream; what its waiting DATA held goes back to `budget`, and the
    /// promises of that DATA fail.
    mutating func remove(_ id: UInt32, budget: ConnectionBudget) -> Stream? {
        if last?.id == id { last = nil }
        guard let stream = open.removeValue(forKey: id) else { return nil }
        while let item = stream.queued?.popFirst() {
            budget.give(item.charge)
            item.promise?.fail(CancellationError())
        }
        return stream
    }

    /// Forgets every stream (the connection ended); returns them.
    mutating func removeAll(budget: ConnectionBudget) -> [Stream] {
        blocked = []
        return Array(open.keys).compactMap { remove($0, budget: budget) }
    }

    // MARK: Frames in

    /// DATA of `count` bytes read on open stream `id`: its context, and the stream's
    /// WINDOW_UPDATE increment due; nil when the stream is not open here.
    mutating func receivedData(_ count: Int, on id: UInt32, endStream: Bool) throws(HTTP2Wire.Violation) -> (Context, increment: Int?)? {
        guard let stream = openStream(id) else { return nil }
        guard stream.state == .open else { throw .stream(id, .streamClosed, "DATA after the client ended the stream") }
        let increment = try stream.windows.received(count, on: id, endStream: endStream)
        if endStream { stream.state = .halfClosedRemote }
        return (stream.context, increment)
    }

    /// The client's trailers on open stream `id`, which end its side.
    mutating func receivedTrailers(on id: UInt32) throws(HTTP2Wire.Violation) -> Context {
        guard let stream = openStream(id), stream.state == .open else {
            throw .stream(id, .streamClosed, "HEADERS after the client ended the stream")
        }
        stream.state = .halfClosedRemote
        return stream.context
    }

    /// The client's initial window changed by `change`: every stream's send window too.
    mutating func initialWindowChanged(by change: Int) throws(HTTP2Wire.Violation) {
        for (id, stream) in open { try stream.windows.update(by: change, on: id, settings: true) }
    }

    /// The client's WINDOW_UPDATE of stream `id`; false when the stream is not open.
    mutating func windowUpdate(_ id: UInt32, by increment: Int) throws(HTTP2Wire.Violation) -> Bool {
        guard let stream = openStream(id) else { return false }
        try stream.windows.update(by: increment, on: id)
        return true
    }

    /// Streams waiting for the connection's window, in the order they waited; forgotten.
    mutating func takeBlocked() -> [UInt32] {
        defer { blocked = [] }
        return blocked
    }

    /// Streams with DATA queued.
    var queuedStreams: [UInt32] { open.values.filter(\.hasQueued).map(\.id) }

    // MARK: Answers out

    /// Writes `block` as stream `id`'s answer HEADERS; false when the stream is gone.
    mutating func sendHeaders(_ block: Block, on id: UInt32, output: inout HTTP2Output) -> Bool {
        guard let stream = openStream(id) else { return false }
        stream.sentHeaders = true
        output.headers(block, on: id, endStream: false)
        return true
    }

    /// What became of DATA given to ``sendData(on:length:charge:promise:flow:output:write:)``.
    enum DataOutcome {
        case sent, queued, streamGone
    }

    /// DATA of `length` bytes that `write` writes: framed at once when the windows have
    /// room and nothing waits before it, else queued; `promise` completes and `charge`
    /// goes back once it left.
    mutating func sendData(
        on id: UInt32, length: Int, charge: Int, promise: EventLoopPromise<Void>?,
        flow: inout HTTP2FlowControl, output: inout HTTP2Output, write: (inout ByteBuffer) -> Void
    ) -> DataOutcome {
        guard let stream = openStream(id) else { return .streamGone }
        if !stream.hasQueued, length <= min(flow.sendWindow, stream.windows.sendWindow, output.maxFrameSize) {
            // Room for it now: written straight into the connection's output.
            output.data(id, length: length, write)
            flow.sent(length)
            stream.windows.sent(length)
            output.answer(promise, charge: charge)
            return .sent
        }
        var framed = ByteBufferAllocator().buffer(capacity: length)
        write(&framed)
        if stream.queued == nil { stream.queued = CircularBuffer(initialCapacity: 4) }
        stream.queued!.append(QueuedData(bytes: framed, promise: promise, charge: charge))
        return .queued
    }

    /// Decides stream `id`'s end: `trailers`, sent once its DATA left.
    mutating func setTrailers(_ trailers: Block, on id: UInt32) -> Bool {
        guard let stream = openStream(id), stream.trailers == nil else { return false }
        stream.trailers = trailers
        return true
    }

    /// Sends what the windows allow of stream `id`'s queued DATA, then, once none is
    /// left, its trailers, which end it: returns the stream then, removed. `now` starts
    /// the clock of DATA left waiting on a window.
    mutating func sendQueued(_ id: UInt32, now: @autoclosure () -> NIODeadline, flow: inout HTTP2FlowControl, output: inout HTTP2Output) -> Stream? {
        guard let stream = openStream(id) else { return nil }
        var sent = false
        while var first = stream.queued?.first {
            let room = min(flow.sendWindow, stream.windows.sendWindow, output.maxFrameSize)
            guard room > 0 else {
                // WINDOW_UPDATE lets it go on: the stream's, or the connection's. Until
                // then the clock of the write timeout runs (from the last byte sent).
                if flow.sendWindow <= 0, !blocked.contains(id) { blocked.append(id) }
                if sent || stream.waitingSince == nil { stream.waitingSince = now() }
                return nil
            }
            sent = true
            let count = min(room, first.bytes.readableBytes)
            output.data(id, first.bytes.readSlice(length: count)!)
            flow.sent(count)
            stream.windows.sent(count)
            if first.bytes.readableBytes == 0 {
                stream.queued!.removeFirst()
                output.answer(first.promise, charge: first.charge)
            } else {
                stream.queued![stream.queued!.startIndex] = first
            }
        }
        stream.waitingSince = nil
        guard let trailers = stream.trailers else { return nil }
        output.headers(trailers, on: id, endStream: true)
        open[id] = nil
        last = nil
        // The answer is whole: the client need not send the rest of its request.
        if stream.state == .open { output.reset(id, .noError) }
        return stream
    }
}
