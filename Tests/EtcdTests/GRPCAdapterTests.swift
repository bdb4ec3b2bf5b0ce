import DiscfgCore
@testable import DiscfgEtcd
import DiscfgService
import DiscfgTestSupport
import GRPCCore
import NIOCore
import NIOEmbedded
import Synchronization
import Testing

/// The gRPC adapter over the HTTP/2 machine, on an embedded channel: `grpc-timeout` and
/// the call's deadline, and what it refuses of a request's messages.
@Suite("etcd API: the gRPC adapter")
struct GRPCAdapterTests {
    typealias Wire = ConnectionHoldTests

    @Test("grpc-timeout: up to 8 digits and a unit", arguments: [
        ("1H", Duration.seconds(3600)), ("2M", .seconds(120)), ("30S", .seconds(30)), ("250m", .milliseconds(250)),
        ("7u", .microseconds(7)), ("99999999n", .nanoseconds(99_999_999)),
    ])
    func parsesTimeouts(_ text: String, _ expected: Duration) {
        #expect(GRPCTimeout.parse(text) == expected)
    }

    @Test("a malformed grpc-timeout is refused", arguments: ["", "S", "10", "123456789S", "1s", "-1S", "1.5S", " 1S", "1 S"])
    func refusesMalformedTimeouts(_ text: String) {
        #expect(GRPCTimeout.parse(text) == nil)
    }

    /// HEADERS of a request with `grpc-timeout: timeout`.
    static func requestHeaders(stream: UInt32, path: String, timeout: String) -> [UInt8] {
        let block = Array(Wire.requestHeaders(stream: stream, path: path)[9...]) + HTTP2LimitsTests.literal("grpc-timeout", timeout)
        return Wire.frame(0x1, flags: 0x4, stream: stream, block)
    }

    /// A connection serving `/test.T/Wait`, which answers with the deadline the adapter
    /// gave it for the pipeline.
    static func connection(_ extra: [String: GRPCMethod] = [:]) throws -> (EmbeddedChannel, GRPCConnection) {
        let wait = GRPCMethod(descriptor: MethodDescriptor(fullyQualifiedService: "test.T", method: "Wait"), kind: .unary { request, _ in
            guard request == [1] else {
                try await Task.sleep(for: .seconds(3600))
                return []
            }
            let left = GRPCCallHold.current?.deadline.map { Int($0.remaining.components.seconds) } ?? -1
            return Array(String(left).utf8)
        })
        let handler = GRPCConnection(methods: extra.merging(["/test.T/Wait": wait]) { $1 }, timeouts: .init(idle: .seconds(10), write: .seconds(5)), serverBytes: Budget(limit: 1 << 30))
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        try channel.writeInbound(ByteBuffer(bytes: HTTP2Wire.preface + Wire.frame(0x4, stream: 0, [])))
        _ = try Wire.frames(channel)
        return (channel, handler)
    }

    @Test("a malformed grpc-timeout is answered INTERNAL without a stream, as grpc-go answers it")
    func malformedTimeout() throws {
        let (channel, handler) = try Self.connection()
        try channel.writeInbound(ByteBuffer(bytes: Self.requestHeaders(stream: 1, path: "/test.T/Wait", timeout: "1.5S")))
        channel.embeddedEventLoop.run()
        let blocks = try ConnectionProtocolTests.headerBlocks(try Wire.frames(channel))
        #expect(blocks.first?.fields["grpc-status"] == String(RPCError.Code.internalError.rawValue))
        #expect(handler.openStreams == 0)
    }

    @Test("the method is given the client's grpc-timeout as its deadline for the pipeline, and without one none from the adapter")
    func deadlineIsTheTimeout() async throws {
        for (timeout, expected) in [("20S", "19"), (nil, "-1")] as [(String?, String)] {
            let (channel, _) = try Self.connection()
            let head = timeout.map { Self.requestHeaders(stream: 1, path: "/test.T/Wait", timeout: $0) } ?? Wire.requestHeaders(stream: 1, path: "/test.T/Wait")
            try channel.writeInbound(ByteBuffer(bytes: head + Wire.frame(0x0, flags: 0x1, stream: 1, [0, 0, 0, 0, 1, 1])))
            let data = try await eventually("the method answers", timeout: .seconds(2), interval: .milliseconds(5)) {
                channel.embeddedEventLoop.run()
                return try Wire.frames(channel).first { $0.type == 0x0 }?.payload
            }
            #expect(String(decoding: data.dropFirst(5), as: UTF8.self) == expected)
        }
    }

    @Test("a call still running when its grpc-timeout passed is cancelled and answered DEADLINE_EXCEEDED")
    func deadlineExceeded() throws {
        let (channel, handler) = try Self.connection()
        try channel.writeInbound(ByteBuffer(bytes: Self.requestHeaders(stream: 1, path: "/test.T/Wait", timeout: "3S")
            + Wire.frame(0x0, flags: 0x1, stream: 1, [0, 0, 0, 0, 1, 2])))
        channel.embeddedEventLoop.run()
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(handler.openStreams == 1)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        let blocks = try ConnectionProtocolTests.headerBlocks(try Wire.frames(channel))
        #expect(blocks.first?.fields["grpc-status"] == String(RPCError.Code.deadlineExceeded.rawValue))
        #expect(handler.openStreams == 0)
        #expect(handler.connectionBytes.current == 0)
    }

    @Test("a call whose write has begun when its grpc-timeout passes is answered DEADLINE_EXCEEDED and runs to its end, uncancelled")
    func begunWriteOutlivesTimeout() async throws {
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        let began = Mutex(false)
        let cancelled = Mutex<Bool?>(nil)
        let write = GRPCMethod(descriptor: MethodDescriptor(fullyQualifiedService: "test.T", method: "Write"), kind: .unary { _, _ in
            try await Pipeline.commit {
                began.withLock { $0 = true }
                for await _ in released { break }
                cancelled.withLock { $0 = Task.isCancelled }
                return []
            }
        })
        let (channel, handler) = try Self.connection(["/test.T/Write": write])
        try channel.writeInbound(ByteBuffer(bytes: Self.requestHeaders(stream: 1, path: "/test.T/Write", timeout: "3S")
            + Wire.frame(0x0, flags: 0x1, stream: 1, [0, 0, 0, 0, 1, 1])))
        try await eventually("the write begins", interval: .milliseconds(5)) {
            channel.embeddedEventLoop.run()
            return began.withLock { $0 }
        }
        channel.embeddedEventLoop.advanceTime(by: .seconds(4))
        let blocks = try ConnectionProtocolTests.headerBlocks(try Wire.frames(channel))
        #expect(blocks.first?.fields["grpc-status"] == String(RPCError.Code.deadlineExceeded.rawValue))
        #expect(handler.openStreams == 0)
        release.yield()
        let wasCancelled = try await eventually("the write ends", interval: .milliseconds(5)) {
            channel.embeddedEventLoop.run()
            return cancelled.withLock { $0 }
        }
        #expect(wasCancelled == false, "a write begun is not abandoned")
    }

    @Test("a request message over 4 MiB is answered RESOURCE_EXHAUSTED from its length; a compressed one INTERNAL; a second on a unary call UNIMPLEMENTED")
    func messageRefusals() throws {
        let over = UInt32(GRPCConnection.maxMessageBytes + 1)
        let cases: [([UInt8], RPCError.Code)] = [
            ([0, UInt8(over >> 24), UInt8(over >> 16 & 0xFF), UInt8(over >> 8 & 0xFF), UInt8(over & 0xFF)], .resourceExhausted),
            ([1, 0, 0, 0, 1, 1], .internalError),
            ([0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 1, 2], .unimplemented),
        ]
        for (message, code) in cases {
            let (channel, handler) = try Self.connection()
            try channel.writeInbound(ByteBuffer(bytes: Wire.requestHeaders(stream: 1, path: "/test.T/Wait") + Wire.frame(0x0, stream: 1, message)))
            channel.embeddedEventLoop.run()
            let blocks = try ConnectionProtocolTests.headerBlocks(try Wire.frames(channel))
            #expect(blocks.first?.fields["grpc-status"] == String(code.rawValue))
            #expect(handler.openStreams == 0)
            #expect(handler.connectionBytes.current == 0)
        }
    }
}
