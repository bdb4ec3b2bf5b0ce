@testable import DiscfgEtcd
import GRPCCore
import NIOCore
import NIOEmbedded
import Testing

/// How an etcd API connection winds down when the server stops (RFC 9113 6.8): driven
/// in process on an embedded channel with a manual clock.
@Suite("etcd API: a connection's graceful shutdown")
struct ConnectionShutdownTests {
    typealias Wire = ConnectionHoldTests

    /// Asks the connection to wind down, as the server's shutdown does.
    static func quiesce(_ channel: EmbeddedChannel) {
        channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        channel.embeddedEventLoop.run()
    }

    @Test("GOAWAY NO_ERROR names the last stream taken; that stream is answered, a stream opened after it is refused unprocessed, and the connection closes once its last stream ended")
    func drainsStreamsInFlight() throws {
        let (channel, handler) = try Wire.connection()
        // Stream 1 is open, its request not yet sent.
        try channel.writeInbound(ByteBuffer(bytes: Wire.requestHeaders(stream: 1, path: "/test.T/Echo")))
        Self.quiesce(channel)
        let goAway = try #require(try Wire.frames(channel).first { $0.type == 0x7 })
        #expect(Array(goAway.payload[0..<4]) == [0, 0, 0, 1], "the last stream taken")
        #expect(Array(goAway.payload[4..<8]) == [0, 0, 0, 0], "NO_ERROR")
        #expect(channel.isActive, "stream 1 is still to be answered")

        try channel.writeInbound(ByteBuffer(bytes: Wire.requestHeaders(stream: 3, path: "/test.T/Echo")))
        let refused = try Wire.frames(channel)
        #expect(refused.contains { $0.type == 0x3 && $0.stream == 3 && $0.payload == [0, 0, 0, 7] }, "RST_STREAM REFUSED_STREAM")
        #expect(!refused.contains { $0.type == 0x1 && $0.stream == 3 }, "never answered")
        #expect(!handler.isOpen(3))

        try channel.writeInbound(ByteBuffer(bytes: Wire.frame(0x0, flags: 0x1, stream: 1, [0, 0, 0, 0, 2, 4, 2])))
        for _ in 0..<10 where channel.isActive { channel.embeddedEventLoop.run() }
        let answer = try Wire.frames(channel)
        #expect(answer.contains { $0.type == 0x0 && $0.stream == 1 && $0.payload == [0, 0, 0, 0, 2, 4, 2] }, "the answer left")
        #expect(answer.contains { $0.type == 0x1 && $0.stream == 1 && $0.flags & 0x1 == 1 }, "with its trailers")
        #expect(!channel.isActive, "closed once its last stream ended")
        #expect(handler.connectionBytes.current == 0)
    }

    @Test("a connection with no stream open is sent GOAWAY naming the last stream and closed at once")
    func idleConnectionCloses() throws {
        let (channel, _) = try Wire.connection()
        try channel.writeInbound(ByteBuffer(bytes: Wire.requestHeaders(stream: 1, path: "/test.T/Echo")
            + Wire.frame(0x0, flags: 0x1, stream: 1, [0, 0, 0, 0, 1, 9])))
        for _ in 0..<10 { channel.embeddedEventLoop.run() }
        #expect(try Wire.frames(channel).contains { $0.type == 0x1 && $0.stream == 1 && $0.flags & 0x1 == 1 }, "answered")
        Self.quiesce(channel)
        let goAway = try #require(try Wire.frames(channel).first { $0.type == 0x7 })
        #expect(Array(goAway.payload[0..<4]) == [0, 0, 0, 1])
        #expect(!channel.isActive)
    }

    @Test("streams that do not finish within the drain timeout are closed with the connection")
    func drainIsBounded() throws {
        let (channel, _) = try Wire.connection()
        try channel.writeInbound(ByteBuffer(bytes: Wire.requestHeaders(stream: 1, path: "/test.T/Echo")))
        Self.quiesce(channel)
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(channel.isActive, "within the drain timeout (10 s)")
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
    }
}
