@testable import DiscfgEtcd
import GRPCCore
import NIOCore
import NIOEmbedded
import Testing

/// What one etcd API connection holds for its client, and for how long: driven in
/// process on an embedded channel with a manual clock. (Over real sockets, with the
/// server's memory measured, in `EtcdHoldTests` and `Tests/Peers/h2_hold.py`.)
@Suite("etcd API: what a connection holds, and for how long")
struct ConnectionHoldTests {
    typealias Frame = (type: UInt8, flags: UInt8, stream: UInt32, payload: [UInt8])

    static func frame(_ type: UInt8, flags: UInt8 = 0, stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
        let length = payload.count
        return [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags]
            + [UInt8(stream >> 24), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF)] + payload
    }

    /// A request's HEADERS: literal fields, no indexing, no Huffman coding.
    static func requestHeaders(stream: UInt32, path: String) -> [UInt8] {
        let fields = [(":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "localhost"), ("content-type", "application/grpc"), ("te", "trailers")]
        var block: [UInt8] = []
        for (name, value) in fields {
            block += [0, UInt8(name.utf8.count)] + Array(name.utf8) + [UInt8(value.utf8.count)] + Array(value.utf8)
        }
        return frame(0x1, flags: 0x4, stream: stream, block)
    }

    /// A connection on an embedded channel that took the client's preface, serving one
    /// unary method (`/test.T/Echo`) that answers what it is sent.
    static func connection(idle: Int64 = 10, write: Int64 = 5, server: Budget = Budget(limit: 1 << 30)) throws -> (EmbeddedChannel, GRPCConnection) {
        let echo = GRPCMethod(descriptor: MethodDescriptor(fullyQualifiedService: "test.T", method: "Echo"), kind: .unary { request, _ in request })
        let handler = GRPCConnection(
            methods: ["/test.T/Echo": echo], timeouts: .init(idle: .seconds(idle), write: .seconds(write)), serverBytes: server
        )
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        try channel.writeInbound(ByteBuffer(bytes: HTTP2Wire.preface + frame(0x4, stream: 0, [])))
        _ = try frames(channel)
        return (channel, handler)
    }

    /// Every frame the connection wrote since the last call.
    static func frames(_ channel: EmbeddedChannel) throws -> [Frame] {
        var bytes: [UInt8] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { bytes += buffer.readableBytesView }
        var frames: [Frame] = []
        var offset = 0
        while bytes.count - offset >= 9 {
            let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
            let stream = UInt32(bytes[offset + 5] & 0x7F) << 24 | UInt32(bytes[offset + 6]) << 16 | UInt32(bytes[offset + 7]) << 8 | UInt32(bytes[offset + 8])
            frames.append((bytes[offset + 3], bytes[offset + 4], stream, Array(bytes[offset + 9..<min(bytes.count, offset + 9 + length)])))
            offset += 9 + length
        }
        return frames
    }

    @Test("a connection with no stream open is sent GOAWAY NO_ERROR and closed once the idle timeout passed, PINGs or not; an open stream keeps it")
    func idleConnection() throws {
        let (channel, handler) = try Self.connection(idle: 10)
        // Half the idle timeout with a request open, then the request ends: the clock
        // starts again from its end.
        try channel.writeInbound(ByteBuffer(bytes: Self.requestHeaders(stream: 1, path: "/test.T/Echo")))
        channel.embeddedEventLoop.advanceTime(by: .seconds(30))
        #expect(try Self.frames(channel).allSatisfy { $0.type != 0x7 }, "a stream is open: not idle")
        try channel.writeInbound(ByteBuffer(bytes: Self.frame(0x3, stream: 1, [0, 0, 0, 8])))
        #expect(handler.openStreams == 0)
        for _ in 0..<3 {
            channel.embeddedEventLoop.advanceTime(by: .seconds(3))
            try channel.writeInbound(ByteBuffer(bytes: Self.frame(0x6, stream: 0, Array("12345678".utf8))))
        }
        #expect(try Self.frames(channel).allSatisfy { $0.type != 0x7 }, "9 s idle: still open")
        channel.embeddedEventLoop.advanceTime(by: .seconds(4))
        let goAway = try Self.frames(channel).first { $0.type == 0x7 }
        #expect(goAway.map { Array($0.payload[4..<8]) } == [0, 0, 0, 0], "GOAWAY NO_ERROR")
        #expect(goAway.map { Array($0.payload[0..<4]) } == [0, 0, 0, 1], "the last stream taken")
        #expect(!channel.isActive)
    }

    @Test("a request message not whole within the idle timeout ends its stream with RESOURCE_EXHAUSTED, and its bytes go back to both budgets")
    func unfinishedMessage() throws {
        let server = Budget(limit: 1 << 30)
        let (channel, handler) = try Self.connection(idle: 10, server: server)
        let data = Self.frame(0x0, stream: 1, [0, 0, 0, 0, 100] + Array(repeating: 7, count: 50))
        try channel.writeInbound(ByteBuffer(bytes: Self.requestHeaders(stream: 1, path: "/test.T/Echo") + data))
        #expect(handler.connectionBytes.current == GRPCConnection.streamOverheadBytes + 55)
        #expect(server.current == 0, "within the connection's floor, the server counts none of it")
        // The connection's window widened to 1 MiB: nothing else.
        #expect(try Self.frames(channel).map(\.type) == [0x8])
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(try Self.frames(channel).isEmpty)
        channel.embeddedEventLoop.advanceTime(by: .seconds(4))
        let frames = try Self.frames(channel)
        #expect(frames.contains { $0.type == 0x1 && $0.stream == 1 && $0.flags & 0x1 == 1 }, "trailers end the stream")
        #expect(frames.contains { $0.type == 0x3 && $0.stream == 1 }, "and the rest of the request is not wanted")
        #expect(handler.connectionBytes.current == 0)
        #expect(server.current == 0)
        #expect(channel.isActive, "only the stream ended")
    }

    @Test("an answer waiting on a closed window holds its bytes until the write timeout resets its stream with ENHANCE_YOUR_CALM; a byte sent starts the clock again")
    func waitingAnswer() throws {
        let server = Budget(limit: 1 << 30)
        let (channel, handler) = try Self.connection(write: 5, server: server)
        // The client's streams get no window at all.
        try channel.writeInbound(ByteBuffer(bytes: Self.frame(0x4, stream: 0, [0, 4, 0, 0, 0, 0])))
        let message = Array(repeating: UInt8(9), count: 1000)
        try channel.writeInbound(ByteBuffer(bytes: Self.requestHeaders(stream: 1, path: "/test.T/Echo")
            + Self.frame(0x0, flags: 0x1, stream: 1, [0, 0, 0, 3, 0xE8] + message)))
        // The method runs as a task on the loop's executor, on this thread.
        for _ in 0..<10 where !handler.isAnswered(1) { channel.embeddedEventLoop.run() }
        #expect(handler.isAnswered(1), "answered, the answer waiting")
        let charge = 5 + 1000 + GRPCConnection.messageOverheadBytes
        #expect(handler.connectionBytes.current == GRPCConnection.streamOverheadBytes + 1005 + GRPCConnection.messageOverheadBytes + charge)
        _ = try Self.frames(channel)
        channel.embeddedEventLoop.advanceTime(by: .seconds(4))
        // 100 bytes of window: some of the answer leaves, and the clock starts again.
        try channel.writeInbound(ByteBuffer(bytes: Self.frame(0x8, stream: 1, [0, 0, 0, 100])))
        #expect(try Self.frames(channel).contains { $0.type == 0x0 && $0.payload.count == 100 })
        channel.embeddedEventLoop.advanceTime(by: .seconds(4))
        #expect(try Self.frames(channel).allSatisfy { $0.type != 0x3 }, "4 s since the last byte: still waiting")
        channel.embeddedEventLoop.advanceTime(by: .seconds(3))
        let reset = try Self.frames(channel).first { $0.type == 0x3 && $0.stream == 1 }
        #expect(reset?.payload == [0, 0, 0, 0xB], "RST_STREAM ENHANCE_YOUR_CALM")
        #expect(handler.openStreams == 0)
        #expect(handler.connectionBytes.current == 0)
        #expect(server.current == 0)
    }

    @Test("an answer past the connection's budget is answered RESOURCE_EXHAUSTED in its place, and a new stream past it is refused")
    func answerPastBudget() throws {
        let (channel, handler) = try Self.connection()
        try channel.writeInbound(ByteBuffer(bytes: Self.frame(0x4, stream: 0, [0, 4, 0, 0, 0, 0])))
        // Hold most of the connection's budget, as answers nobody takes would.
        let held = GRPCConnection.maxConnectionBytes - 4 * GRPCConnection.streamOverheadBytes
        try StreamBytes.take(held, connection: handler.connectionBytes, server: handler.serverBytes)
        let message = Array(repeating: UInt8(9), count: 10_000)
        try channel.writeInbound(ByteBuffer(bytes: Self.requestHeaders(stream: 1, path: "/test.T/Echo")
            + Self.frame(0x0, flags: 0x1, stream: 1, [0, 0, 0, 0x27, 0x10] + message)))
        for _ in 0..<10 where handler.openStreams > 0 { channel.embeddedEventLoop.run() }
        let frames = try Self.frames(channel)
        #expect(handler.openStreams == 0, "answered at once, nothing waits")
        #expect(frames.contains { $0.type == 0x1 && $0.stream == 1 && $0.flags & 0x1 == 1 }, "trailers-only")
        #expect(!frames.contains { $0.type == 0x0 })
        #expect(handler.connectionBytes.current == held)
        StreamBytes.give(held, connection: handler.connectionBytes, server: handler.serverBytes)
    }

    @Test("a header block waiting for its CONTINUATION frames is counted at the most it may grow to, and given back when it ends")
    func pendingHeaderBlock() throws {
        let server = Budget(limit: 1 << 30)
        let (channel, handler) = try Self.connection(server: server)
        let whole = Self.requestHeaders(stream: 1, path: "/test.T/Echo")
        let block = Array(whole[9...])
        // HEADERS without END_HEADERS, then the rest in a CONTINUATION.
        try channel.writeInbound(ByteBuffer(bytes: Self.frame(0x1, stream: 1, Array(block[..<10]))))
        #expect(handler.connectionBytes.current == HTTP2Limits.maxHeaderBlockBytes)
        #expect(server.current == HTTP2Limits.maxHeaderBlockBytes - GRPCConnection.floorBytes, "the server counts what is above the floor")
        try channel.writeInbound(ByteBuffer(bytes: Self.frame(0x9, flags: 0x4, stream: 1, Array(block[10...]))))
        #expect(handler.isOpen(1), "the request opened its stream")
        #expect(handler.connectionBytes.current == GRPCConnection.streamOverheadBytes)
        // One left unfinished goes back when the connection ends.
        try channel.writeInbound(ByteBuffer(bytes: Self.frame(0x1, stream: 3, Array(block[..<10]))))
        #expect(server.current == GRPCConnection.streamOverheadBytes + HTTP2Limits.maxHeaderBlockBytes - GRPCConnection.floorBytes)
        _ = try channel.close().wait()
        #expect(server.current == 0)
    }
}
