@testable import DiscfgEtcd
import NIOCore
import Testing

/// Each limit the HTTP/2 machine applies, at its edge: the header list, the header
/// block and its CONTINUATION frames, streams at once, and what a header block holds of
/// a full budget. (Resets, windows and timers in ``HTTP2ConnectionTests``.)
@Suite("etcd API: the HTTP/2 machine's limits")
struct HTTP2LimitsTests {
    typealias Machine = HTTP2ConnectionTests.Machine
    typealias Wire = ConnectionHoldTests
    typealias Tests = HTTP2ConnectionTests

    static func literal(_ name: String, _ value: String) -> [UInt8] {
        // Literal without indexing, new name; lengths up to 127 bytes, else two bytes.
        func length(_ count: Int) -> [UInt8] { count < 127 ? [UInt8(count)] : [127, UInt8((count - 127) & 0x7F) | 0x80, UInt8((count - 127) >> 7)] }
        return [0] + length(name.utf8.count) + Array(name.utf8) + length(value.utf8.count) + Array(value.utf8)
    }

    static func headers(stream: UInt32, extra: [UInt8] = [], flags: UInt8 = 0x4) -> [UInt8] {
        var block = Array(Wire.requestHeaders(stream: stream, path: "/t.T/M")[9...])
        block += extra
        return Wire.frame(0x1, flags: flags, stream: stream, block)
    }

    @Test("a header list over 16 KiB decoded (SETTINGS_MAX_HEADER_LIST_SIZE) ends the connection; one just under it opens its stream")
    func headerListSize() {
        var machine = Tests.machine()
        Tests.open(&machine)
        let under = Self.literal("x-filler", String(repeating: "a", count: 12_000))
        #expect(Tests.feed(&machine, Self.headers(stream: 1, extra: under)).count == 1)
        let over = Self.literal("x-a", String(repeating: "a", count: 9000)) + Self.literal("x-b", String(repeating: "b", count: 9000))
        // Two frames: the block is over 16 KiB, so it comes as HEADERS and a CONTINUATION.
        let block = Array(Self.headers(stream: 3, extra: over)[9...])
        Tests.feed(&machine, Wire.frame(0x1, stream: 3, Array(block[..<16_000])) + Wire.frame(0x9, flags: 0x4, stream: 3, Array(block[16_000...])))
        #expect(machine.phase == .closing)
        #expect(Tests.code(Tests.frames(&machine).first { $0.type == 0x7 }) == 9, "COMPRESSION_ERROR: the decoder's state is lost")
    }

    @Test("a header block over 64 CONTINUATION frames, or over 64 KiB, ends the connection with ENHANCE_YOUR_CALM")
    func headerBlockSize() {
        var machine = Tests.machine()
        Tests.open(&machine)
        var bytes = Wire.frame(0x1, stream: 1, [0x82])
        for _ in 0..<HTTP2Limits.maxContinuationFrames { bytes += Wire.frame(0x9, stream: 1, [0x82]) }
        Tests.feed(&machine, bytes)
        #expect(Tests.code(Tests.frames(&machine).first { $0.type == 0x7 }) == 0xB)

        var large = Tests.machine()
        Tests.open(&large)
        bytes = Wire.frame(0x1, stream: 1, [0x82])
        for _ in 0..<4 { bytes += Wire.frame(0x9, stream: 1, Array(repeating: 0x82, count: 16_384)) }
        Tests.feed(&large, bytes)
        #expect(Tests.code(Tests.frames(&large).first { $0.type == 0x7 }) == 0xB)
    }

    @Test("a header block in CONTINUATION frames while the budget is full ends the connection with ENHANCE_YOUR_CALM, holding nothing")
    func headerBlockPastBudget() throws {
        let budget = ConnectionBudget(connection: Budget(limit: 1 << 16), server: Budget(limit: 1 << 30))
        var machine = Tests.machine(budget: budget)
        Tests.open(&machine)
        try budget.take(10)
        Tests.feed(&machine, Wire.frame(0x1, stream: 1, [0x82]))
        #expect(Tests.code(Tests.frames(&machine).first { $0.type == 0x7 }) == 0xB)
        #expect(budget.connection.current == 10)
    }

    @Test("streams past SETTINGS_MAX_CONCURRENT_STREAMS are refused with REFUSED_STREAM and never reach the layer above; one frees a place")
    func concurrentStreams() {
        var machine = Tests.machine()
        Tests.open(&machine)
        var bytes: [UInt8] = []
        for index in 0...HTTP2Limits.maxConcurrentStreams { bytes += Wire.requestHeaders(stream: UInt32(2 * index + 1), path: "/t.T/M") }
        let events = Tests.feed(&machine, bytes)
        #expect(events.count == HTTP2Limits.maxConcurrentStreams)
        #expect(machine.openStreams == HTTP2Limits.maxConcurrentStreams)
        let refused = UInt32(2 * HTTP2Limits.maxConcurrentStreams + 1)
        #expect(Tests.frames(&machine).map { [$0.type == 0x3 ? 1 : 0, $0.stream, Tests.code($0) ?? 99] } == [[1, refused, 7]])
        #expect(machine.state(of: refused) == .closed)
        machine.reset(1, .cancel, now: Tests.start)
        _ = machine.nextEnded()
        #expect(Tests.feed(&machine, Wire.requestHeaders(stream: refused + 2, path: "/t.T/M")).count == 1)
    }

    @Test("a stream opened with an even id, HEADERS on a closed stream, or a stream that depends on itself are refused as RFC 9113 says")
    func streamIdentifiers() {
        var even = Tests.machine()
        Tests.open(&even)
        Tests.feed(&even, Wire.requestHeaders(stream: 2, path: "/t.T/M"))
        #expect(Tests.code(Tests.frames(&even).first { $0.type == 0x7 }) == 1)

        var closed = Tests.machine()
        Tests.open(&closed)
        Tests.feed(&closed, Wire.requestHeaders(stream: 5, path: "/t.T/M") + Wire.requestHeaders(stream: 3, path: "/t.T/M"))
        #expect(Tests.code(Tests.frames(&closed).first { $0.type == 0x7 }) == 5, "STREAM_CLOSED")

        var selfDependent = Tests.machine()
        Tests.open(&selfDependent)
        let block = Array(Wire.requestHeaders(stream: 1, path: "/t.T/M")[9...])
        Tests.feed(&selfDependent, Wire.frame(0x1, flags: 0x24, stream: 1, [0, 0, 0, 1, 16] + block))
        #expect(Tests.frames(&selfDependent).map { [UInt32($0.type), Tests.code($0) ?? 99] } == [[0x3, 1]])
        #expect(selfDependent.phase == .open)
    }
}
