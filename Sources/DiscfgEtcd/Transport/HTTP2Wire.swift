import NIOCore

/// HTTP/2 as the etcd API's connection reads and writes it (RFC 9113): the client's
/// preface, frames in and out, error codes and settings. Only what a gRPC server needs;
/// the connection (``GRPCConnection``) keeps the state a frame changes.
enum HTTP2Wire {
    /// The frame types (RFC 9113, 6). Other values are extension frames, which a
    /// receiver ignores.
    enum FrameType: UInt8 {
        case data = 0x0
        case headers = 0x1
        case priority = 0x2
        case rstStream = 0x3
        case settings = 0x4
        case pushPromise = 0x5
        case ping = 0x6
        case goAway = 0x7
        case windowUpdate = 0x8
        case continuation = 0x9
    }

    /// Frame flags; their meaning depends on the frame's type.
    enum Flag {
        static let endStream: UInt8 = 0x1
        static let ack: UInt8 = 0x1
        static let endHeaders: UInt8 = 0x4
        static let padded: UInt8 = 0x8
        static let priority: UInt8 = 0x20
    }

    /// The codes of RST_STREAM and GOAWAY (RFC 9113, 7).
    enum ErrorCode: UInt32 {
        case noError = 0x0
        case protocolError = 0x1
        case internalError = 0x2
        case flowControlError = 0x3
        case streamClosed = 0x5
        case frameSizeError = 0x6
        case refusedStream = 0x7
        case cancel = 0x8
        case compressionError = 0x9
        case enhanceYourCalm = 0xB
    }

    /// The settings a SETTINGS frame carries (RFC 9113, 6.5.2); others are ignored.
    enum Setting: UInt16 {
        case headerTableSize = 0x1
        case enablePush = 0x2
        case maxConcurrentStreams = 0x3
        case initialWindowSize = 0x4
        case maxFrameSize = 0x5
        case maxHeaderListSize = 0x6
    }

    /// What a client sends first, before its SETTINGS.
    static let preface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    /// Bytes of a frame's header.
    static let frameHeaderBytes = 9
    /// The largest frame payload either side may send until told otherwise, and the
    /// largest this server takes (it never raises SETTINGS_MAX_FRAME_SIZE).
    static let defaultMaxFrameSize = 16_384
    /// The largest SETTINGS_MAX_FRAME_SIZE there is.
    static let largestMaxFrameSize = (1 << 24) - 1
    /// Every window's size until a SETTINGS or WINDOW_UPDATE changes it.
    static let defaultWindowBytes = 65_535
    /// The largest a flow-control window may be (2^31 − 1).
    static let maxWindowBytes = Int(Int32.max)

    /// A frame that breaks the protocol, and what the connection does about it: reset the
    /// stream it belongs to, or end the whole connection with GOAWAY.
    struct Violation: Error, Equatable, CustomStringConvertible {
        /// The code sent in RST_STREAM or GOAWAY.
        let code: ErrorCode
        /// The stream to reset; nil when the connection cannot go on.
        let stream: UInt32?
        /// Why, as GOAWAY's debug data says it.
        let reason: String

        static func connection(_ code: ErrorCode, _ reason: String) -> Violation {
            Violation(code: code, stream: nil, reason: reason)
        }

        static func stream(_ id: UInt32, _ code: ErrorCode, _ reason: String) -> Violation {
            Violation(code: code, stream: id, reason: reason)
        }

        var description: String { "\(code) on \(stream.map { "stream \($0)" } ?? "the connection"): \(reason)" }
    }

    /// One frame: its header's fields and its payload, as sent.
    struct Frame {
        /// The type's raw value; ``FrameType`` names the known ones.
        let type: UInt8
        let flags: UInt8
        let stream: UInt32
        var payload: ByteBuffer

        func has(_ flag: UInt8) -> Bool { flags & flag != 0 }
    }
}

/// Reads the client's preface, then frames, from the bytes a connection receives, in
/// whatever pieces they arrive; a frame's payload is a slice of what was read, not a copy.
struct HTTP2FrameReader {
    private var buffer: ByteBuffer?
    /// Preface bytes still to come; 0 once it was read whole.
    private var prefaceLeft = HTTP2Wire.preface.count

    /// Whether the preface was read whole.
    var readPreface: Bool { prefaceLeft == 0 }

    /// Takes bytes as they came off the connection.
    mutating func append(_ bytes: inout ByteBuffer) {
        guard var held = buffer, held.readableBytes > 0 else {
            buffer = bytes
            return
        }
        // Part of a frame is left from the last read: the new bytes go after it, with the
        // bytes already read dropped first (at most a frame's worth moves).
        buffer = nil
        held.discardReadBytes()
        held.writeBuffer(&bytes)
        buffer = held
    }

    /// Lets go of what the last reads left once no whole frame is left in them: the read
    /// itself when all of it was taken, or, when part of a frame is left at the end of a
    /// much larger read, a copy of just that part. A read's buffer is as large as NIO's
    /// adaptive allocator made it (up to 64 KiB), and kept it would stay with an idle
    /// connection for as long as the connection does.
    mutating func release() {
        guard let held = buffer else { return }
        guard held.readableBytes > 0 else {
            buffer = nil
            return
        }
        guard held.capacity > 4 * held.readableBytes + 4096 else { return }
        var copy = ByteBufferAllocator().buffer(capacity: held.readableBytes)
        copy.writeImmutableBuffer(held)
        buffer = copy
    }

    /// The next whole frame, or nil until more bytes arrive.
    /// - Throws: a connection ``HTTP2Wire/Violation``: bytes that are not the preface
    ///   (an HTTP/1 request, say), or a frame longer than the largest taken.
    mutating func next() throws(HTTP2Wire.Violation) -> HTTP2Wire.Frame? {
        guard var bytes = buffer else { return nil }
        defer { buffer = bytes }
        if prefaceLeft > 0 {
            // Checked as it comes, so another protocol is refused at its first bytes.
            let offset = HTTP2Wire.preface.count - prefaceLeft
            let count = min(prefaceLeft, bytes.readableBytes)
            guard let got = bytes.readBytes(length: count), got[...] == HTTP2Wire.preface[offset..<(offset + count)] else {
                throw .connection(.protocolError, "the connection did not start with the HTTP/2 client preface")
            }
            prefaceLeft -= count
            guard prefaceLeft == 0 else { return nil }
        }
        guard bytes.readableBytes >= HTTP2Wire.frameHeaderBytes else { return nil }
        // The header's fields read in one look at the buffer, not one look each.
        let (length, type, flags, stream) = bytes.withUnsafeReadableBytes { header in
            (
                Int(header[0]) << 16 | Int(header[1]) << 8 | Int(header[2]), header[3], header[4],
                UInt32(header[5]) << 24 | UInt32(header[6]) << 16 | UInt32(header[7]) << 8 | UInt32(header[8])
            )
        }
        guard length <= HTTP2Wire.defaultMaxFrameSize else {
            throw .connection(.frameSizeError, "a frame of \(length) bytes is over SETTINGS_MAX_FRAME_SIZE (\(HTTP2Wire.defaultMaxFrameSize))")
        }
        guard bytes.readableBytes >= HTTP2Wire.frameHeaderBytes + length else { return nil }
        bytes.moveReaderIndex(forwardBy: HTTP2Wire.frameHeaderBytes)
        let payload = bytes.readSlice(length: length)!
        // The reserved bit is ignored on receipt (RFC 9113, 4.1).
        return HTTP2Wire.Frame(type: type, flags: flags, stream: stream & 0x7FFF_FFFF, payload: payload)
    }
}

extension HTTP2Wire.Frame {
    /// A DATA or HEADERS payload without its padding (RFC 9113, 6.1 and 6.2), and for
    /// HEADERS without its priority fields; returns the stream the priority names, if any.
    /// - Throws: a connection `PROTOCOL_ERROR` when the padding does not fit the frame.
    mutating func removePadding(priority: Bool) throws(HTTP2Wire.Violation) -> UInt32? {
        var padding = 0
        if has(HTTP2Wire.Flag.padded) {
            guard let length = payload.readInteger(as: UInt8.self) else {
                throw .connection(.frameSizeError, "a padded frame too short for its pad length")
            }
            padding = Int(length)
        }
        var dependency: UInt32?
        if priority, has(HTTP2Wire.Flag.priority) {
            guard let word = payload.readInteger(as: UInt32.self), payload.readInteger(as: UInt8.self) != nil else {
                throw .connection(.frameSizeError, "a HEADERS frame too short for its priority fields")
            }
            dependency = word & 0x7FFF_FFFF
        }
        guard padding <= payload.readableBytes else {
            throw .connection(.protocolError, "padding of \(padding) bytes is longer than what is left of the frame")
        }
        payload = payload.getSlice(at: payload.readerIndex, length: payload.readableBytes - padding)!
        return dependency
    }
}

extension ByteBuffer {
    /// Writes a frame's 9-byte header.
    mutating func writeHTTP2FrameHeader(length: Int, type: HTTP2Wire.FrameType, flags: UInt8 = 0, stream: UInt32) {
        let written = setHTTP2FrameHeader(at: writerIndex, length: length, type: type, flags: flags, stream: stream)
        moveWriterIndex(forwardBy: written)
    }

    /// Sets the 9-byte frame header at `index`, written before its payload's length was
    /// known; returns its length.
    @discardableResult
    mutating func setHTTP2FrameHeader(at index: Int, length: Int, type: HTTP2Wire.FrameType, flags: UInt8, stream: UInt32) -> Int {
        // Length (24 bits), type, flags and the stream's first three bytes in one word,
        // its last byte in the next, copied in one: each copy into the buffer checks its
        // room and its storage.
        let head = UInt64(length & 0xFF_FFFF) << 40 | UInt64(type.rawValue) << 32 | UInt64(flags) << 24 | UInt64(stream >> 8)
        var words = (head.bigEndian, (UInt64(stream & 0xFF) << 56).bigEndian)
        return withUnsafeBytes(of: &words) { setBytes(UnsafeRawBufferPointer(rebasing: $0[..<HTTP2Wire.frameHeaderBytes]), at: index) }
    }

    /// Writes a whole frame whose payload is `payload`.
    mutating func writeHTTP2Frame(type: HTTP2Wire.FrameType, flags: UInt8 = 0, stream: UInt32, payload: ByteBuffer) {
        writeHTTP2FrameHeader(length: payload.readableBytes, type: type, flags: flags, stream: stream)
        var payload = payload
        writeBuffer(&payload)
    }

    /// Writes a WINDOW_UPDATE frame.
    mutating func writeHTTP2WindowUpdate(stream: UInt32, increment: Int) {
        writeHTTP2FrameHeader(length: 4, type: .windowUpdate, stream: stream)
        writeInteger(UInt32(increment))
    }

    /// Writes a RST_STREAM frame.
    mutating func writeHTTP2Reset(stream: UInt32, code: HTTP2Wire.ErrorCode) {
        writeHTTP2FrameHeader(length: 4, type: .rstStream, stream: stream)
        writeInteger(code.rawValue)
    }

    /// Writes a GOAWAY frame: the last stream the server took, the code, and why.
    mutating func writeHTTP2GoAway(lastStream: UInt32, code: HTTP2Wire.ErrorCode, reason: String) {
        let debug = Array(reason.utf8.prefix(256))
        writeHTTP2FrameHeader(length: 8 + debug.count, type: .goAway, stream: 0)
        writeInteger(lastStream)
        writeInteger(code.rawValue)
        writeBytes(debug)
    }
}
