import NIOCore

/// What a connection frames for its client until the handler writes it: the frames
/// themselves (one buffer, written in one go), the promises of the answers among them,
/// and what those answers hold of the connection's budget until the write completed;
/// and the state of sending: the HPACK encoder's table and the client's largest frame.
struct HTTP2Output {
    private var buffer: ByteBuffer
    private var promises: [EventLoopPromise<Void>] = []
    private var charge = 0
    /// This end's HPACK encoder (its table as large as the client's decoder allows).
    private var encoder = ResponseHeaderEncoder()
    /// The client's SETTINGS_MAX_FRAME_SIZE.
    private(set) var maxFrameSize = HTTP2Wire.defaultMaxFrameSize

    init(allocator: ByteBufferAllocator) {
        buffer = allocator.buffer(capacity: 4096)
    }

    /// Whether nothing is framed.
    var isEmpty: Bool { buffer.readableBytes == 0 }

    /// The client's SETTINGS_HEADER_TABLE_SIZE and SETTINGS_MAX_FRAME_SIZE.
    mutating func clientTableSize(_ size: Int) { encoder.clientTableSize(size) }
    mutating func clientMaxFrameSize(_ size: Int) { maxFrameSize = size }

    mutating func settings(_ settings: [(HTTP2Wire.Setting, Int)]) {
        buffer.writeHTTP2FrameHeader(length: 6 * settings.count, type: .settings, stream: 0)
        for (setting, value) in settings {
            buffer.writeInteger(setting.rawValue)
            buffer.writeInteger(UInt32(value))
        }
    }

    mutating func settingsAck() { buffer.writeHTTP2FrameHeader(length: 0, type: .settings, flags: HTTP2Wire.Flag.ack, stream: 0) }
    mutating func pingAck(_ payload: ByteBuffer) { buffer.writeHTTP2Frame(type: .ping, flags: HTTP2Wire.Flag.ack, stream: 0, payload: payload) }
    mutating func windowUpdate(_ stream: UInt32, _ increment: Int) { buffer.writeHTTP2WindowUpdate(stream: stream, increment: increment) }
    mutating func reset(_ stream: UInt32, _ code: HTTP2Wire.ErrorCode) { buffer.writeHTTP2Reset(stream: stream, code: code) }

    mutating func goAway(lastStream: UInt32, _ code: HTTP2Wire.ErrorCode, _ reason: String) {
        buffer.writeHTTP2GoAway(lastStream: lastStream, code: code, reason: reason)
    }

    /// A DATA frame of `length` bytes, which `write` writes.
    mutating func data(_ stream: UInt32, length: Int, _ write: (inout ByteBuffer) -> Void) {
        buffer.writeHTTP2FrameHeader(length: length, type: .data, stream: stream)
        write(&buffer)
    }

    /// A DATA frame carrying `part`.
    mutating func data(_ stream: UInt32, _ part: ByteBuffer) {
        buffer.writeHTTP2Frame(type: .data, stream: stream, payload: part)
    }

    /// Notes an answer whose last byte is now framed: `promise` completes, and `charge`
    /// goes back to the budget, once the write carrying it completed.
    mutating func answer(_ promise: EventLoopPromise<Void>?, charge: Int) {
        self.charge += charge
        if let promise { promises.append(promise) }
    }

    /// Notes a promise to complete once what is framed now was written.
    mutating func whenWritten(_ promise: EventLoopPromise<Void>) {
        promises.append(promise)
    }

    /// Writes a header block as HEADERS, and CONTINUATION frames if the client's largest
    /// frame cannot hold it.
    mutating func headers(_ block: some HTTP2HeaderBlock, on id: UInt32, endStream: Bool) {
        let start = buffer.writerIndex
        buffer.writeRepeatingByte(0, count: HTTP2Wire.frameHeaderBytes)
        block.encode(with: &encoder, into: &buffer)
        let length = buffer.writerIndex - start - HTTP2Wire.frameHeaderBytes
        let last = HTTP2Wire.Flag.endHeaders | (endStream ? HTTP2Wire.Flag.endStream : 0)
        guard length > maxFrameSize else {
            buffer.setHTTP2FrameHeader(at: start, length: length, type: .headers, flags: last, stream: id)
            return
        }
        var block = ByteBuffer(bytes: buffer.getBytes(at: start + HTTP2Wire.frameHeaderBytes, length: length)!)
        buffer.moveWriterIndex(to: start)
        var type = HTTP2Wire.FrameType.headers
        while block.readableBytes > 0 {
            let part = block.readSlice(length: min(maxFrameSize, block.readableBytes))!
            var flags: UInt8 = block.readableBytes == 0 ? HTTP2Wire.Flag.endHeaders : 0
            if type == .headers, endStream { flags |= HTTP2Wire.Flag.endStream }
            buffer.writeHTTP2Frame(type: type, flags: flags, stream: id, payload: part)
            type = .continuation
        }
    }

    /// What was framed since the last call, with the promises of the answers in it and
    /// what they hold of the budget until written; nil when nothing was.
    mutating func take(allocator: ByteBufferAllocator) -> (bytes: ByteBuffer, promises: [EventLoopPromise<Void>], charge: Int)? {
        guard buffer.readableBytes > 0 || !promises.isEmpty else { return nil }
        defer {
            buffer = allocator.buffer(capacity: 1024)
            promises = []
            charge = 0
        }
        return (buffer, promises, charge)
    }

    /// The socket closed: what was framed is dropped, its answers' promises fail with
    /// `error`, and what they held goes back to `budget`.
    mutating func fail(_ error: any Error, budget: ConnectionBudget) {
        buffer.clear()
        budget.give(charge)
        charge = 0
        let failed = promises
        promises = []
        for promise in failed { promise.fail(error) }
    }
}
