@testable import DiscfgEtcd
import GRPCCore
import NIOCore
import NIOHPACK
import Testing

/// The etcd API's own HTTP/2 framing, read and written byte by byte. (The connection's
/// rules over a real socket, against clients that break them, are in
/// `Tests/Peers/h2_abuse.py`.)
@Suite("etcd API: HTTP/2 frames")
struct HTTP2WireTests {
    private static func frame(_ type: UInt8, flags: UInt8 = 0, stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
        let length = payload.count
        return [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags]
            + [UInt8(stream >> 24), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF)] + payload
    }

    /// Feeds `bytes` to a reader in pieces of `piece` bytes and returns every frame read.
    private static func read(_ bytes: [UInt8], piece: Int) throws(HTTP2Wire.Violation) -> [HTTP2Wire.Frame] {
        var reader = HTTP2FrameReader()
        var frames: [HTTP2Wire.Frame] = []
        var offset = 0
        while offset < bytes.count {
            var chunk = ByteBuffer(bytes: bytes[offset..<min(offset + piece, bytes.count)])
            offset += piece
            reader.append(&chunk)
            while let frame = try reader.next() { frames.append(frame) }
        }
        return frames
    }

    @Test("the preface and frames are read whole however the bytes are cut", arguments: [1, 2, 7, 9, 24, 25, 1000])
    func pieces(piece: Int) throws {
        let data = Self.frame(0x1, flags: 0x5, stream: 1, [0x82, 0x86]) + Self.frame(0x0, flags: 0x1, stream: 1, Array(repeating: 7, count: 300))
        let bytes = HTTP2Wire.preface + Self.frame(0x4, stream: 0, []) + data + Self.frame(0x6, stream: 0, Array("12345678".utf8))
        let frames = try Self.read(bytes, piece: piece)
        #expect(frames.map(\.type) == [0x4, 0x1, 0x0, 0x6])
        #expect(frames.map(\.stream) == [0, 1, 1, 0])
        #expect(frames[1].flags == 0x5)
        #expect(Array(frames[2].payload.readableBytesView) == Array(repeating: 7, count: 300))
    }

    @Test("another protocol is refused at its first bytes, not after 24")
    func notThePreface() throws {
        var reader = HTTP2FrameReader()
        var bytes = ByteBuffer(string: "GET ")
        reader.append(&bytes)
        #expect(throws: HTTP2Wire.Violation.self) { try reader.next() }
        var partial = HTTP2FrameReader()
        var start = ByteBuffer(string: "PRI * HTTP/2")
        partial.append(&start)
        #expect(try partial.next() == nil)
        #expect(!partial.readPreface)
    }

    @Test("a frame past 16 KiB is refused from its header; the reserved bit of a stream is ignored")
    func sizesAndReservedBit() throws {
        var reader = HTTP2FrameReader()
        var bytes = ByteBuffer(bytes: HTTP2Wire.preface + [0x00, 0x40, 0x01, 0x0, 0x0, 0x0, 0x0, 0x0, 0x1])
        reader.append(&bytes)
        let error = #expect(throws: HTTP2Wire.Violation.self) { try reader.next() }
        #expect(error?.code == .frameSizeError && error?.stream == nil)
        let frames = try Self.read(HTTP2Wire.preface + Self.frame(0x0, stream: 0x8000_0003, [1]) + Self.frame(0x6, stream: 0, Array(repeating: 0, count: 16_384)), piece: 100)
        #expect(frames.first?.stream == 3)
        #expect(frames.last?.payload.readableBytes == 16_384)
    }

    @Test("padding and priority fields come off a payload; padding longer than the frame is refused")
    func padding() throws {
        var data = try #require(try Self.read(HTTP2Wire.preface + Self.frame(0x0, flags: 0x8, stream: 1, [2, 9, 9, 0, 0]), piece: 64).first)
        #expect(try data.removePadding(priority: false) == nil)
        #expect(Array(data.payload.readableBytesView) == [9, 9])
        var headers = try #require(try Self.read(HTTP2Wire.preface + Self.frame(0x1, flags: 0x28, stream: 3, [1, 0x80, 0, 0, 5, 16, 0x82, 0]), piece: 64).first)
        #expect(try headers.removePadding(priority: true) == 5, "the exclusive bit is not part of the stream")
        #expect(Array(headers.payload.readableBytesView) == [0x82])
        for payload: [UInt8] in [[5, 1, 2], [], [0]] {
            var bad = try #require(try Self.read(HTTP2Wire.preface + Self.frame(0x1, flags: 0x28, stream: 1, payload), piece: 64).first)
            #expect(throws: HTTP2Wire.Violation.self, "\(payload)") { try bad.removePadding(priority: true) }
        }
    }

    @Test("a frame header written later in place is the one written at once")
    func frameHeaders() {
        var once = ByteBuffer()
        once.writeHTTP2FrameHeader(length: 70_000, type: .headers, flags: 0x5, stream: 0x7FFF_FFFF)
        var later = ByteBuffer(repeating: 0, count: 9)
        later.setHTTP2FrameHeader(at: 0, length: 70_000, type: .headers, flags: 0x5, stream: 0x7FFF_FFFF)
        #expect(once == later)
        #expect(Array(once.readableBytesView) == [0x01, 0x11, 0x70, 0x1, 0x5, 0x7F, 0xFF, 0xFF, 0xFF])
    }
}

/// The encoder of the server's header blocks against SwiftNIO's HPACK decoder, and its
/// bytes where RFC 7541 fixes them.
@Suite("etcd API: response header blocks")
struct ResponseHeaderEncoderTests {
    private static func decode(_ decoder: inout HPACKDecoder, _ write: (inout ByteBuffer) -> Void) throws -> [String] {
        var block = ByteBuffer()
        write(&block)
        return try decoder.decodeHeaders(from: &block).map { "\($0.name): \($0.value)" }
    }

    @Test("a response's headers and OK trailers: literals the first time, one byte each after")
    func steadyState() throws {
        var encoder = ResponseHeaderEncoder()
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        for round in 0..<3 {
            var headers = ByteBuffer()
            encoder.writeResponseHeaders(to: &headers)
            var trailers = ByteBuffer()
            encoder.writeOKTrailers(to: &trailers)
            if round > 0 {
                #expect(Array(headers.readableBytesView) == [0x88, 0x80 | 63])
                #expect(Array(trailers.readableBytesView) == [0x80 | 62])
            }
            #expect(try decoder.decodeHeaders(from: &headers).map { "\($0.name): \($0.value)" } == [":status: 200", "content-type: application/grpc"])
            #expect(try decoder.decodeHeaders(from: &trailers).map { "\($0.name): \($0.value)" } == ["grpc-status: 0"])
        }
        let fields = GRPCStatus.fields(RPCError(code: .failedPrecondition, message: "50% done: ünïcode, and a newline\n"))
        #expect(fields.last?.value == "50%25 done: %C3%BCn%C3%AFcode, and a newline%0A")
        #expect(try Self.decode(&decoder) { encoder.write(fields, to: &$0) } == fields.map { "\($0.name): \($0.value)" })
        #expect(encoder.table == [.okStatus, .contentType], "a literal block leaves the table as it was")
    }

    @Test("a smaller table is signalled first and what no longer fits is dropped", arguments: [0, 44, 59, 60, 100, 104, 8192])
    func smallerTable(size: Int) throws {
        var encoder = ResponseHeaderEncoder()
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        _ = try Self.decode(&decoder) { encoder.writeResponseHeaders(to: &$0) }
        _ = try Self.decode(&decoder) { encoder.writeOKTrailers(to: &$0) }
        encoder.clientTableSize(size)
        // The decoder holds the encoder to the client's setting from here on.
        decoder.maxDynamicTableLength = min(size, 4096)
        var block = ByteBuffer()
        encoder.writeResponseHeaders(to: &block)
        let limit = min(size, 4096)
        if size < 4096 {
            // A dynamic table size update (001xxxxx) opens the block.
            #expect(block.getInteger(at: 0, as: UInt8.self).map { $0 & 0xE0 } == 0x20)
        } else {
            #expect(block.getInteger(at: 0, as: UInt8.self) == 0x88, "no change to signal")
        }
        #expect(try decoder.decodeHeaders(from: &block).map(\.value) == ["200", "application/grpc"])
        #expect(try Self.decode(&decoder) { encoder.writeOKTrailers(to: &$0) } == ["grpc-status: 0"])
        #expect(encoder.table.reduce(0) { $0 + $1.size } <= limit)
        #expect(try Self.decode(&decoder) { encoder.writeResponseHeaders(to: &$0) } == [":status: 200", "content-type: application/grpc"])
    }

    @Test("a table shrunk and grown again before the next block signals both sizes")
    func shrunkThenGrown() throws {
        var encoder = ResponseHeaderEncoder()
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        _ = try Self.decode(&decoder) { encoder.writeResponseHeaders(to: &$0) }
        encoder.clientTableSize(0)
        encoder.clientTableSize(4096)
        var block = ByteBuffer()
        encoder.writeOKTrailers(to: &block)
        #expect(Array(block.readableBytesView.prefix(4)) == [0x20, 0x3F, 0xE1, 0x1F], "0, then 4096")
        #expect(try decoder.decodeHeaders(from: &block).map(\.value) == ["0"])
        #expect(encoder.table == [.okStatus], "the entry from before the shrink is gone")
    }
}

/// What a frame reader keeps between reads.
@Suite("etcd API: what the frame reader keeps")
struct FrameReaderReleaseTests {
    @Test("a reader lets go of a read once its frames were taken, and keeps only a copy of a frame's start left in a large read")
    func release() throws {
        var reader = HTTP2FrameReader()
        var read = ByteBufferAllocator().buffer(capacity: 65_536)
        read.writeBytes(HTTP2Wire.preface + ConnectionHoldTests.frame(0x4, stream: 0, []) + ConnectionHoldTests.frame(0x6, stream: 0, Array("12345678".utf8)))
        read.writeBytes(ConnectionHoldTests.frame(0x6, stream: 0, Array("12345678".utf8)).prefix(5))
        reader.append(&read)
        #expect(try reader.next()?.type == 0x4)
        #expect(try reader.next()?.type == 0x6)
        #expect(try reader.next() == nil)
        reader.release()
        var rest = ByteBuffer(bytes: ConnectionHoldTests.frame(0x6, stream: 0, Array("12345678".utf8)).dropFirst(5))
        reader.append(&rest)
        let frame = try #require(try reader.next())
        #expect(frame.type == 0x6 && Array(frame.payload.readableBytesView) == Array("12345678".utf8))
        #expect(frame.payload.capacity < 4096, "the 64 KiB read was let go")
        reader.release()
        #expect(try reader.next() == nil)
    }
}
