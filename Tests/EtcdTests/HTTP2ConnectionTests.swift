@testable import DiscfgEtcd
import NIOCore
import NIOHPACK
import Testing

/// The HTTP/2 connection's state machine on its own: bytes and a clock in, events and
/// frames out, no channel. Every phase and stream state, window accounting both ways,
/// GOAWAY, refusals, rapid reset and each timer.
@Suite("etcd API: the HTTP/2 connection's state machine")
struct HTTP2ConnectionTests {
    typealias Wire = ConnectionHoldTests
    typealias Machine = HTTP2Connection<Call, Block>

    final class Call {
        let id: UInt32
        init(_ id: UInt32) { self.id = id }
    }

    /// A block of literal fields.
    struct Block: HTTP2HeaderBlock {
        var fields: [(name: String, value: String)] = [(":status", "200")]
        func encode(with encoder: inout ResponseHeaderEncoder, into buffer: inout ByteBuffer) {
            encoder.write(fields, to: &buffer)
        }
    }

    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
    static let timeouts = HTTP2Timeouts(idle: .seconds(10), write: .seconds(5), drain: .seconds(10))

    static func machine(budget: ConnectionBudget = ConnectionBudget(connection: Budget(limit: 1 << 24), server: Budget(limit: 1 << 30))) -> Machine {
        var machine = Machine(timeouts: timeouts, budget: budget, now: start)
        _ = frames(&machine)
        return machine
    }

    /// Feeds `bytes`, accepting every stream opened; returns the events.
    @discardableResult
    static func feed(_ machine: inout Machine, _ bytes: [UInt8], now: NIODeadline = start, accept: Bool = true) -> [Machine.Event] {
        var buffer = ByteBuffer(bytes: bytes)
        machine.read(&buffer)
        var events: [Machine.Event] = []
        while let event = machine.nextEvent(now: now) {
            if accept, case .opened(let id, _, let endStream, _) = event { machine.accept(id, context: Call(id), endStream: endStream) }
            events.append(event)
        }
        return events
    }

    static func open(_ machine: inout Machine) {
        feed(&machine, HTTP2Wire.preface + Wire.frame(0x4, stream: 0, []))
        _ = frames(&machine)
    }

    /// The frames the machine framed since the last call.
    static func frames(_ machine: inout Machine) -> [Wire.Frame] {
        guard let (buffer, _, _) = machine.takeOutput(allocator: ByteBufferAllocator()) else { return [] }
        let bytes = Array(buffer.readableBytesView)
        var frames: [Wire.Frame] = []
        var offset = 0
        while bytes.count - offset >= 9 {
            let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
            let stream = UInt32(bytes[offset + 5]) << 24 | UInt32(bytes[offset + 6]) << 16 | UInt32(bytes[offset + 7]) << 8 | UInt32(bytes[offset + 8])
            frames.append((bytes[offset + 3], bytes[offset + 4], stream, Array(bytes[offset + 9..<offset + 9 + length])))
            offset += 9 + length
        }
        return frames
    }

    static func code(_ frame: Wire.Frame?) -> UInt32? {
        guard let frame else { return nil }
        let bytes = frame.type == 0x7 ? Array(frame.payload[4..<8]) : frame.payload
        return bytes.prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    static func write(_ bytes: [UInt8]) -> (inout ByteBuffer) -> Void { { $0.writeBytes(bytes) } }

    @Test("phases: awaiting the preface, then SETTINGS (anything else first is PROTOCOL_ERROR), open, and the SETTINGS acknowledged")
    func phases() {
        var machine = Self.machine()
        #expect(machine.phase == .awaitingPreface)
        Self.feed(&machine, HTTP2Wire.preface)
        #expect(machine.phase == .awaitingPreface)
        Self.feed(&machine, Wire.frame(0x4, stream: 0, []))
        #expect(machine.phase == .open)
        #expect(Self.frames(&machine).map { [$0.type, $0.flags] } == [[0x4, 0x1]])

        var early = Self.machine()
        Self.feed(&early, HTTP2Wire.preface + Wire.frame(0x6, stream: 0, Array(repeating: 0, count: 8)))
        #expect(early.phase == .closing)
        #expect(Self.code(Self.frames(&early).first { $0.type == 0x7 }) == 1)
    }

    @Test("a stream's states: idle, open, half-closed (remote) at the client's END_STREAM, closed once the answer's trailers left")
    func streamStates() throws {
        var machine = Self.machine()
        Self.open(&machine)
        #expect(machine.state(of: 1) == .idle)
        let events = Self.feed(&machine, Wire.requestHeaders(stream: 1, path: "/t.T/M"))
        guard case .opened(1, let fields, endStream: false, _)? = events.first else { Issue.record("no opened event"); return }
        #expect(fields.first(name: ":path") == "/t.T/M")
        #expect(machine.state(of: 1) == .open)
        #expect(machine.idleSince == nil)
        let data = Self.feed(&machine, Wire.frame(0x0, flags: 0x1, stream: 1, [1, 2, 3]))
        guard case .data(let call, let bytes, endStream: true)? = data.first else { Issue.record("no data event"); return }
        #expect(call.id == 1 && bytes.readableBytes == 3)
        #expect(machine.state(of: 1) == .halfClosedRemote)
        let sent = (
            machine.sendHeaders(Block(), on: 1),
            machine.sendData(on: 1, length: 2, charge: 0, promise: nil, now: Self.start, Self.write([7, 7])),
            machine.finish(1, trailers: Block(fields: [("grpc-status", "0")]), now: Self.start)
        )
        #expect(sent == (true, true, true))
        guard case .closed(let closed)? = machine.nextEnded() else { Issue.record("no closed event"); return }
        #expect(closed.id == 1)
        #expect(machine.state(of: 1) == .closed)
        #expect(machine.idleSince == Self.start)
        let out = Self.frames(&machine).filter { $0.type != 0x8 }
        #expect(out.map(\.type) == [0x1, 0x0, 0x1])
        #expect(out[2].flags & 0x1 == 0x1, "END_STREAM on the trailers")
        #expect(!out.contains { $0.type == 0x3 }, "the client had ended its side: no RST_STREAM")
        // DATA after the stream closed is dropped; on a stream never opened it ends the connection.
        Self.feed(&machine, Wire.frame(0x0, stream: 1, [0]))
        #expect(machine.phase == .open)
        Self.feed(&machine, Wire.frame(0x0, stream: 9, [0]))
        #expect(Self.code(Self.frames(&machine).first { $0.type == 0x7 }) == 1)
    }

    @Test("a stream the client resets is closed at once: neither its answer nor its DATA goes out, and the other streams go on")
    func resetByClient() {
        var machine = Self.machine()
        Self.open(&machine)
        Self.feed(&machine, Wire.requestHeaders(stream: 1, path: "/t.T/M") + Wire.requestHeaders(stream: 3, path: "/t.T/M"))
        let answered = machine.sendHeaders(Block(), on: 1)
        #expect(answered, "stream 1 open, and the one last looked up")
        // RST_STREAM CANCEL on stream 1.
        let events = Self.feed(&machine, Wire.frame(0x3, stream: 1, [0, 0, 0, 8]))
        var ended = events
        while let event = machine.nextEnded() { ended.append(event) }
        #expect(ended.contains { if case .reset(let call) = $0 { call.id == 1 } else { false } })
        #expect(machine.state(of: 1) == .closed)
        let after = (machine.sendHeaders(Block(), on: 1), machine.sendData(on: 1, length: 1, charge: 0, promise: nil, now: Self.start, Self.write([7])))
        #expect(after == (false, false))
        #expect(machine.state(of: 3) == .open, "the other stream goes on")
    }

    @Test("an answer to a stream the client has not ended is followed by RST_STREAM NO_ERROR; DATA after END_STREAM is STREAM_CLOSED")
    func answerBeforeRequestEnded() {
        var machine = Self.machine()
        Self.open(&machine)
        Self.feed(&machine, Wire.requestHeaders(stream: 1, path: "/t.T/M") + Wire.requestHeaders(stream: 3, path: "/t.T/M"))
        machine.finish(1, trailers: Block(), now: Self.start)
        #expect(Self.frames(&machine).filter { $0.type == 0x3 }.map { [$0.stream, Self.code($0)!] } == [[1, 0]])
        Self.feed(&machine, Wire.frame(0x0, flags: 0x1, stream: 3, [1]) + Wire.frame(0x0, stream: 3, [1]))
        #expect(Self.frames(&machine).filter { $0.type == 0x3 }.map { [$0.stream, Self.code($0)!] } == [[3, 5]])
    }

    @Test("DATA goes out within the stream's and the connection's windows; the rest waits, in order, and leaves with WINDOW_UPDATE, trailers after it")
    func sendWindows() {
        var machine = Self.machine()
        // The client's streams start with 10 bytes of window.
        Self.feed(&machine, HTTP2Wire.preface + Wire.frame(0x4, stream: 0, [0, 4, 0, 0, 0, 10]))
        _ = Self.frames(&machine)
        Self.feed(&machine, Wire.requestHeaders(stream: 1, path: "/t.T/M"))
        #expect(machine.sendWindow(1) == 10)
        _ = machine.sendData(on: 1, length: 8, charge: 0, promise: nil, now: Self.start, Self.write(Array(repeating: 1, count: 8)))
        _ = machine.sendData(on: 1, length: 8, charge: 0, promise: nil, now: Self.start, Self.write(Array(repeating: 2, count: 8)))
        machine.finish(1, trailers: Block(), now: Self.start)
        #expect(Self.frames(&machine).map { [$0.type, UInt8($0.payload.count)] } == [[0, 8], [0, 2]])
        #expect(machine.sendWindow(1) == 0)
        #expect(machine.sendWindow == HTTP2Wire.defaultWindowBytes - 10)
        #expect(machine.hasQueuedData(1) && machine.isAnswered(1))
        Self.feed(&machine, Wire.frame(0x8, stream: 1, [0, 0, 0, 3]))
        #expect(Self.frames(&machine).map { [$0.type, UInt8($0.payload.count)] } == [[0, 3]])
        Self.feed(&machine, Wire.frame(0x8, stream: 1, [0, 0, 0, 100]))
        let last = Self.frames(&machine)
        #expect(last.map(\.type) == [0x0, 0x1, 0x3], "the rest, the trailers, RST_STREAM NO_ERROR")
        #expect(last[0].payload == Array(repeating: 2, count: 3))
        #expect(machine.state(of: 1) == .closed)
    }

    @Test("a larger initial window lets waiting DATA go; WINDOW_UPDATE past 2^31-1 is FLOW_CONTROL_ERROR, on a stream and on the connection; 0 is PROTOCOL_ERROR")
    func windowUpdates() {
        var machine = Self.machine()
        Self.feed(&machine, HTTP2Wire.preface + Wire.frame(0x4, stream: 0, [0, 4, 0, 0, 0, 0]))
        _ = Self.frames(&machine)
        Self.feed(&machine, Wire.requestHeaders(stream: 1, path: "/t.T/M") + Wire.requestHeaders(stream: 3, path: "/t.T/M"))
        _ = machine.sendData(on: 1, length: 5, charge: 0, promise: nil, now: Self.start, Self.write([1, 2, 3, 4, 5]))
        #expect(Self.frames(&machine).isEmpty)
        Self.feed(&machine, Wire.frame(0x4, stream: 0, [0, 4, 0, 0, 0, 5]))
        #expect(Self.frames(&machine).map(\.type) == [0x4, 0x0], "acknowledged, then the DATA")
        Self.feed(&machine, Wire.frame(0x8, stream: 3, [0x7F, 0xFF, 0xFF, 0xFF]))
        #expect(Self.frames(&machine).first.map { [UInt32($0.type), $0.stream, Self.code($0) ?? 99] } == [0x3, 3, 3] as [UInt32])
        Self.feed(&machine, Wire.frame(0x8, stream: 1, [0, 0, 0, 0]))
        #expect(Self.frames(&machine).first.map { [UInt32($0.type), $0.stream, Self.code($0) ?? 99] } == [0x3, 1, 1] as [UInt32])
        Self.feed(&machine, Wire.frame(0x8, stream: 0, [0x7F, 0xFF, 0xFF, 0xFF]))
        #expect(Self.code(Self.frames(&machine).first { $0.type == 0x7 }) == 3)
        #expect(machine.shouldClose)
    }

    @Test("DATA past the connection's receive window is FLOW_CONTROL_ERROR; the windows' own accounting")
    func receiveWindows() throws {
        var flow = HTTP2FlowControl()
        // The first DATA is owed the window's widening to 1 MiB with it.
        #expect(try flow.received(100) == HTTP2Limits.windowBytes - HTTP2Wire.defaultWindowBytes + 100)
        #expect(throws: HTTP2Wire.Violation.self) { try flow.received(HTTP2Limits.windowBytes + 1) }
        var windows = HTTP2StreamWindows(sendWindow: 0)
        #expect(try windows.received(HTTP2Limits.windowBytes, on: 1, endStream: true) == nil, "nothing given back once the client ended")
        #expect(throws: HTTP2Wire.Violation.stream(1, .flowControlError, "DATA past the stream's flow-control window")) {
            try windows.received(1, on: 1, endStream: false)
        }
        try windows.update(by: -10, on: 1, settings: true)
        #expect(windows.sendWindow == -10, "a smaller initial window may take a window below 0")

        var machine = Self.machine()
        Self.open(&machine)
        Self.feed(&machine, Wire.requestHeaders(stream: 1, path: "/t.T/M"))
        // 65,535 bytes of window at first: four full frames pass it.
        var bytes: [UInt8] = []
        for _ in 0..<4 { bytes += Wire.frame(0x0, stream: 1, Array(repeating: 0, count: 16_384)) }
        Self.feed(&machine, Array(bytes.prefix(3 * (9 + 16_384))))
        #expect(machine.phase == .open)
        var other = Self.machine()
        Self.open(&other)
        Self.feed(&other, Wire.requestHeaders(stream: 1, path: "/t.T/M"))
        var raw = HTTP2FlowControl()
        _ = try raw.received(HTTP2Wire.defaultWindowBytes)
        #expect(throws: HTTP2Wire.Violation.connection(.flowControlError, "DATA past the connection's flow-control window")) {
            var fresh = HTTP2FlowControl()
            _ = try fresh.received(HTTP2Wire.defaultWindowBytes + 1)
        }
    }

    @Test("GOAWAY on shutdown names the last stream; streams after it are refused unread; the connection may close once the last one ended")
    func goAway() {
        var machine = Self.machine()
        Self.open(&machine)
        Self.feed(&machine, Wire.requestHeaders(stream: 1, path: "/t.T/M"))
        machine.goAway(now: Self.start)
        #expect(machine.phase == .draining && machine.isDraining)
        let goAway = Self.frames(&machine).first { $0.type == 0x7 }
        #expect(goAway.map { Array($0.payload[0..<4]) } == [0, 0, 0, 1])
        let events = Self.feed(&machine, Wire.requestHeaders(stream: 3, path: "/t.T/M") + Wire.frame(0x0, stream: 3, [1]))
        #expect(events.isEmpty, "never processed")
        #expect(Self.frames(&machine).filter { $0.type != 0x8 }.map { [UInt32($0.type), $0.stream, Self.code($0) ?? 99] } == [[0x3, 3, 7]])
        #expect(machine.lastStream == 1)
        #expect(!machine.shouldClose)
        machine.finish(1, trailers: Block(), now: Self.start)
        _ = machine.nextEnded()
        #expect(machine.shouldClose)
    }

    @Test("the client's GOAWAY: streams it opens after are refused, and the connection ends with its last stream")
    func clientGoAway() {
        var machine = Self.machine()
        Self.open(&machine)
        Self.feed(&machine, Wire.requestHeaders(stream: 1, path: "/t.T/M") + Wire.frame(0x7, stream: 0, [0, 0, 0, 0, 0, 0, 0, 0]))
        #expect(machine.phase == .draining)
        Self.feed(&machine, Wire.requestHeaders(stream: 3, path: "/t.T/M"))
        #expect(Self.frames(&machine).map { [UInt32($0.type), $0.stream, Self.code($0) ?? 99] } == [[0x3, 3, 7]])
        machine.reset(1, .cancel, now: Self.start)
        #expect(machine.shouldClose)
    }

    @Test("more than 200 streams reset by the client within 30 s end the connection with ENHANCE_YOUR_CALM; slower resets do not")
    func rapidReset() {
        var machine = Self.machine()
        Self.open(&machine)
        var bytes: [UInt8] = []
        for index in 0..<HTTP2Limits.maxResets {
            let id = UInt32(2 * index + 1)
            bytes += Wire.requestHeaders(stream: id, path: "/t.T/M") + Wire.frame(0x3, stream: id, [0, 0, 0, 8])
        }
        let events = Self.feed(&machine, bytes)
        #expect(events.filter { if case .reset = $0 { true } else { false } }.count == HTTP2Limits.maxResets)
        #expect(machine.phase == .open, "200 resets: still open")
        // 31 s later the count starts again.
        let later = Self.start + .seconds(31)
        Self.feed(&machine, Wire.requestHeaders(stream: 401, path: "/t.T/M") + Wire.frame(0x3, stream: 401, [0, 0, 0, 8]), now: later)
        #expect(machine.phase == .open)
        bytes = []
        for index in 0..<HTTP2Limits.maxResets {
            let id = UInt32(403 + 2 * index)
            bytes += Wire.requestHeaders(stream: id, path: "/t.T/M") + Wire.frame(0x3, stream: id, [0, 0, 0, 8])
        }
        Self.feed(&machine, bytes, now: later)
        #expect(machine.phase == .closing)
        #expect(Self.code(Self.frames(&machine).first { $0.type == 0x7 }) == 0xB)
    }

    @Test("idle: GOAWAY NO_ERROR once no stream was open for the idle timeout, counted from the last stream's end")
    func idle() {
        var machine = Self.machine()
        Self.open(&machine)
        Self.feed(&machine, Wire.requestHeaders(stream: 1, path: "/t.T/M"))
        machine.expire(now: Self.start + .seconds(60))
        #expect(machine.phase == .open, "a stream is open")
        machine.reset(1, .cancel, now: Self.start + .seconds(60))
        machine.expire(now: Self.start + .seconds(69))
        #expect(machine.phase == .open)
        machine.expire(now: Self.start + .seconds(70))
        #expect(machine.phase == .closing && !machine.closeAtOnce)
        #expect(Self.code(Self.frames(&machine).first { $0.type == 0x7 }) == 0)
    }

    @Test("DATA waiting on a closed window for the write timeout resets its stream with ENHANCE_YOUR_CALM and gives back what it held")
    func windowWait() {
        let budget = ConnectionBudget(connection: Budget(limit: 1 << 24), server: Budget(limit: 1 << 30))
        var machine = Self.machine(budget: budget)
        Self.feed(&machine, HTTP2Wire.preface + Wire.frame(0x4, stream: 0, [0, 4, 0, 0, 0, 0]))
        Self.feed(&machine, Wire.requestHeaders(stream: 1, path: "/t.T/M"))
        try? budget.take(500)
        _ = machine.sendData(on: 1, length: 5, charge: 500, promise: nil, now: Self.start, Self.write([1, 2, 3, 4, 5]))
        machine.expire(now: Self.start + .seconds(4))
        #expect(machine.state(of: 1) == .open)
        machine.expire(now: Self.start + .seconds(5))
        guard case .reset(let call)? = machine.nextEnded() else { Issue.record("no reset event"); return }
        #expect(call.id == 1)
        #expect(Self.frames(&machine).last.map { [UInt32($0.type), Self.code($0) ?? 99] } == [0x3, 0xB])
        #expect(budget.connection.current == 0)
    }

    @Test("a socket that stays full for the write timeout, or a drain past its timeout, closes the connection at once")
    func stallAndDrain() {
        var machine = Self.machine()
        Self.open(&machine)
        Self.feed(&machine, Wire.requestHeaders(stream: 1, path: "/t.T/M"))
        machine.socketWritable(false, now: Self.start)
        machine.socketWritable(true, now: Self.start + .seconds(4))
        machine.expire(now: Self.start + .seconds(6))
        #expect(machine.phase == .open, "it drained in time")
        machine.socketWritable(false, now: Self.start + .seconds(6))
        machine.expire(now: Self.start + .seconds(11))
        #expect(machine.phase == .closing && machine.closeAtOnce)

        var draining = Self.machine()
        Self.open(&draining)
        Self.feed(&draining, Wire.requestHeaders(stream: 1, path: "/t.T/M"))
        draining.goAway(now: Self.start)
        draining.expire(now: Self.start + .seconds(9))
        #expect(draining.phase == .draining)
        draining.expire(now: Self.start + .seconds(10))
        #expect(draining.closeAtOnce && draining.shouldClose)
    }

    @Test("a header block in CONTINUATION frames holds the most it may grow to until it ends; one interrupted ends the connection")
    func headerBlocks() {
        let budget = ConnectionBudget(connection: Budget(limit: 1 << 24), server: Budget(limit: 1 << 30))
        var machine = Self.machine(budget: budget)
        Self.open(&machine)
        let block = Array(Wire.requestHeaders(stream: 1, path: "/t.T/M")[9...])
        Self.feed(&machine, Wire.frame(0x1, stream: 1, Array(block[..<10])))
        #expect(budget.connection.current == HTTP2Limits.maxHeaderBlockBytes)
        let events = Self.feed(&machine, Wire.frame(0x9, flags: 0x4, stream: 1, Array(block[10...])))
        #expect(events.count == 1 && budget.connection.current == 0)
        Self.feed(&machine, Wire.frame(0x1, stream: 3, Array(block[..<10])) + Wire.frame(0x6, stream: 0, Array(repeating: 0, count: 8)))
        #expect(Self.code(Self.frames(&machine).first { $0.type == 0x7 }) == 1)
        machine.closed(CancellationError(), now: Self.start)
        #expect(budget.connection.current == 0)
    }
}
