@testable import DiscfgEtcd
import GRPCCore
import NIOCore
import NIOEmbedded
import NIOHPACK
import Testing

/// HTTP/2 as one etcd API connection speaks it, driven in process on an embedded
/// channel: the preface and SETTINGS, flow-control windows, the streams it takes and
/// refuses, and what ends the connection. (Against real clients in the etcdctl, aetcd
/// and h2 end-to-end tests.)
@Suite("etcd API: a connection's HTTP/2")
struct ConnectionProtocolTests {
    typealias Wire = ConnectionHoldTests

    /// A request's HEADERS with `content-type`, literal fields.
    static func requestHeaders(stream: UInt32, path: String, contentType: String = "application/grpc", endStream: Bool = false) -> [UInt8] {
        let fields = [(":method", "POST"), (":scheme", "http"), (":path", path), ("content-type", contentType), ("te", "trailers")]
        var block: [UInt8] = []
        for (name, value) in fields {
            block += [0, UInt8(name.utf8.count)] + Array(name.utf8) + [UInt8(value.utf8.count)] + Array(value.utf8)
        }
        return Wire.frame(0x1, flags: 0x4 | (endStream ? 0x1 : 0), stream: stream, block)
    }

    /// The header blocks among `frames`, decoded in order as the client's decoder would.
    static func headerBlocks(_ frames: [Wire.Frame]) throws -> [(stream: UInt32, fields: [String: String])] {
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        return try frames.filter { $0.type == 0x1 }.map { frame in
            var block = ByteBuffer(bytes: frame.payload)
            let headers = try decoder.decodeHeaders(from: &block)
            return (frame.stream, Dictionary(headers.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first }))
        }
    }

    /// The code of the GOAWAY among `frames`, if one was sent.
    static func goAwayCode(_ frames: [Wire.Frame]) -> [UInt8]? {
        frames.first { $0.type == 0x7 }.map { Array($0.payload[4..<8]) }
    }

    @Test("the server's preface is its SETTINGS (256 streams, 1 MiB windows, 16 KiB header lists); the client's SETTINGS are acknowledged")
    func prefaceAndSettings() throws {
        let handler = GRPCConnection(methods: [:], timeouts: .init(idle: .seconds(10), write: .seconds(5)), serverBytes: Budget(limit: 1 << 30))
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        let settings = try #require(try Wire.frames(channel).first)
        #expect(settings.type == 0x4 && settings.flags == 0 && settings.stream == 0)
        #expect(settings.payload == [0, 3, 0, 0, 1, 0] + [0, 4, 0, 0x10, 0, 0] + [0, 6, 0, 0, 0x40, 0])
        try channel.writeInbound(ByteBuffer(bytes: HTTP2Wire.preface + Wire.frame(0x4, stream: 0, [0, 4, 0, 0, 0, 100])))
        let ack = try Wire.frames(channel)
        #expect(ack.count == 1 && ack[0].type == 0x4 && ack[0].flags == 0x1 && ack[0].payload.isEmpty)
        #expect(channel.isActive)
    }

    @Test("bytes that are not the HTTP/2 preface, or a preface not followed by SETTINGS, end the connection with GOAWAY PROTOCOL_ERROR")
    func badPreface() throws {
        for bytes in [Array("GET / HTTP/1.1\r\n\r\n".utf8), HTTP2Wire.preface + Wire.frame(0x6, stream: 0, Array("12345678".utf8))] {
            let channel = EmbeddedChannel()
            try channel.pipeline.syncOperations.addHandler(
                GRPCConnection(methods: [:], timeouts: .init(idle: .seconds(10), write: .seconds(5)), serverBytes: Budget(limit: 1 << 30))
            )
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
            _ = try Wire.frames(channel)
            try channel.writeInbound(ByteBuffer(bytes: bytes))
            channel.embeddedEventLoop.run()
            #expect(Self.goAwayCode(try Wire.frames(channel)) == [0, 0, 0, 1])
            #expect(!channel.isActive)
        }
    }

    @Test("DATA on a stream never opened, or a stream opened with an even id, ends the connection with GOAWAY PROTOCOL_ERROR")
    func protocolErrors() throws {
        for bytes in [Wire.frame(0x0, stream: 5, [0]), Self.requestHeaders(stream: 2, path: "/test.T/Echo")] {
            let (channel, _) = try Wire.connection()
            try channel.writeInbound(ByteBuffer(bytes: bytes))
            channel.embeddedEventLoop.run()
            #expect(Self.goAwayCode(try Wire.frames(channel)) == [0, 0, 0, 1])
            #expect(!channel.isActive)
        }
    }

    @Test("a malformed request head resets its stream with PROTOCOL_ERROR, and the connection goes on")
    func malformedHead() throws {
        let (channel, handler) = try Wire.connection()
        let name = Array("Content-Type".utf8), value = Array("application/grpc".utf8)
        let block = Array(Self.requestHeaders(stream: 1, path: "/test.T/Echo")[9...]) + [0, UInt8(name.count)] + name + [UInt8(value.count)] + value
        try channel.writeInbound(ByteBuffer(bytes: Wire.frame(0x1, flags: 0x4, stream: 1, block)))
        channel.embeddedEventLoop.run()
        let frames = try Wire.frames(channel)
        #expect(frames.contains { $0.type == 0x3 && $0.stream == 1 && $0.payload == [0, 0, 0, 1] })
        #expect(handler.openStreams == 0)
        #expect(channel.isActive)
    }

    @Test("a request that is not gRPC is answered 415; an unknown method UNIMPLEMENTED, both without a stream")
    func refusals() throws {
        let (channel, handler) = try Wire.connection()
        try channel.writeInbound(ByteBuffer(bytes: Self.requestHeaders(stream: 1, path: "/test.T/Echo", contentType: "application/json", endStream: true)
            + Self.requestHeaders(stream: 3, path: "/test.T/Nothing", endStream: true)))
        channel.embeddedEventLoop.run()
        let blocks = try Self.headerBlocks(try Wire.frames(channel))
        #expect(blocks.count == 2)
        #expect(blocks.first { $0.stream == 1 }?.fields[":status"] == "415")
        let unknown = blocks.first { $0.stream == 3 }?.fields
        #expect(unknown?[":status"] == "200")
        #expect(unknown?["grpc-status"] == String(RPCError.Code.unimplemented.rawValue))
        #expect(handler.openStreams == 0)
    }

    @Test("a stream past SETTINGS_MAX_CONCURRENT_STREAMS is refused with REFUSED_STREAM; the ones open are kept")
    func maxConcurrentStreams() throws {
        let (channel, handler) = try Wire.connection()
        var bytes: [UInt8] = []
        for index in 0..<257 { bytes += Self.requestHeaders(stream: UInt32(2 * index + 1), path: "/test.T/Echo") }
        try channel.writeInbound(ByteBuffer(bytes: bytes))
        channel.embeddedEventLoop.run()
        let frames = try Wire.frames(channel)
        #expect(handler.openStreams == 256)
        #expect(frames.filter { $0.type == 0x3 }.map(\.stream) == [513])
        #expect(frames.first { $0.type == 0x3 }?.payload == [0, 0, 0, 7])
    }

    @Test("a new stream past the connection's budget is answered RESOURCE_EXHAUSTED, and opens once it holds less")
    func connectionBudget() throws {
        let (channel, handler) = try Wire.connection()
        let held = GRPCConnection.maxConnectionBytes - GRPCConnection.streamOverheadBytes / 2
        try StreamBytes.take(held, connection: handler.connectionBytes, server: handler.serverBytes)
        try channel.writeInbound(ByteBuffer(bytes: Self.requestHeaders(stream: 1, path: "/test.T/Echo")))
        channel.embeddedEventLoop.run()
        let refused = try Self.headerBlocks(try Wire.frames(channel))
        #expect(refused.first?.fields["grpc-status"] == String(RPCError.Code.resourceExhausted.rawValue))
        #expect(handler.openStreams == 0)
        StreamBytes.give(held, connection: handler.connectionBytes, server: handler.serverBytes)
        try channel.writeInbound(ByteBuffer(bytes: Self.requestHeaders(stream: 3, path: "/test.T/Echo")))
        #expect(handler.isOpen(3))
        #expect(handler.connectionBytes.current == GRPCConnection.streamOverheadBytes)
    }

    @Test("read DATA is given back in batches: the connection's window widened to 1 MiB at once, then WINDOW_UPDATE once half a window was read, on the connection and on the stream")
    func windowCredit() throws {
        let (channel, _) = try Wire.connection()
        try channel.writeInbound(ByteBuffer(bytes: Self.requestHeaders(stream: 1, path: "/test.T/Echo")))
        // One message of 600,000 bytes, sent in frames of 16 KiB: 33 of them.
        let chunk = 16_384
        var message: [UInt8] = [0] + [0x00, 0x09, 0x27, 0xC0] + Array(repeating: 1, count: 33 * chunk - 5)
        var updates: [(stream: UInt32, increment: Int)] = []
        for _ in 0..<33 {
            try channel.writeInbound(ByteBuffer(bytes: Wire.frame(0x0, stream: 1, Array(message.prefix(chunk)))))
            message.removeFirst(chunk)
            for frame in try Wire.frames(channel) where frame.type == 0x8 {
                updates.append((frame.stream, frame.payload.reduce(0) { $0 << 8 | Int($1) }))
            }
        }
        let widening = HTTP2Limits.windowBytes - HTTP2Wire.defaultWindowBytes
        #expect(updates.filter { $0.stream == 0 }.map(\.increment) == [widening + chunk, 32 * chunk])
        #expect(updates.filter { $0.stream == 1 }.map(\.increment) == [32 * chunk])
    }
}
