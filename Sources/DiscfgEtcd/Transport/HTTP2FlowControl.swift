/// The connection's flow-control windows (RFC 9113, 6.9), both ways: bytes of DATA the
/// client may still send, with the credit owed back to it, and bytes of DATA this end may
/// still send, with the client's initial window for each stream. Private, so every change
/// goes through the rules that bound it.
struct HTTP2FlowControl {
    /// Bytes the client may still send on the connection.
    private var receiveWindow = HTTP2Wire.defaultWindowBytes
    /// What the receive window is owed: the bytes of DATA read, and at first its
    /// widening from 65,535 to ``HTTP2Limits/windowBytes``.
    private var credit = WindowCredit(owed: HTTP2Limits.windowBytes - HTTP2Wire.defaultWindowBytes)
    /// Bytes of DATA this end may still send on the connection.
    private(set) var sendWindow = HTTP2Wire.defaultWindowBytes
    /// The client's SETTINGS_INITIAL_WINDOW_SIZE: each new stream's send window.
    private(set) var initialStreamWindow = HTTP2Wire.defaultWindowBytes

    /// Counts `count` bytes of DATA read on any stream; returns the connection's
    /// WINDOW_UPDATE increment to send now, if one is due.
    /// - Throws: `FLOW_CONTROL_ERROR` for DATA past the window.
    mutating func received(_ count: Int) throws(HTTP2Wire.Violation) -> Int? {
        guard count <= receiveWindow else { throw .connection(.flowControlError, "DATA past the connection's flow-control window") }
        receiveWindow -= count
        guard let increment = credit.read(count) else { return nil }
        receiveWindow += increment
        return increment
    }

    /// `count` bytes of DATA sent.
    mutating func sent(_ count: Int) {
        sendWindow -= count
    }

    /// The client's WINDOW_UPDATE on the connection.
    mutating func update(by increment: Int) throws(HTTP2Wire.Violation) {
        guard increment > 0 else { throw .connection(.protocolError, "a WINDOW_UPDATE of 0 on the connection") }
        guard increment <= HTTP2Wire.maxWindowBytes - sendWindow else {
            throw .connection(.flowControlError, "WINDOW_UPDATE took the connection's window past 2^31-1")
        }
        sendWindow += increment
    }

    /// The client's new SETTINGS_INITIAL_WINDOW_SIZE; returns how much every open
    /// stream's send window changes.
    mutating func initialStreamWindowChanged(to value: Int) throws(HTTP2Wire.Violation) -> Int {
        guard value <= HTTP2Wire.maxWindowBytes else { throw .connection(.flowControlError, "SETTINGS_INITIAL_WINDOW_SIZE of \(value)") }
        defer { initialStreamWindow = value }
        return value - initialStreamWindow
    }
}

/// One stream's flow-control windows, both ways.
struct HTTP2StreamWindows {
    /// Bytes the client may still send on the stream before a WINDOW_UPDATE.
    private var receiveWindow = HTTP2Limits.windowBytes
    private var credit = WindowCredit()
    /// Bytes of DATA this end may still send on the stream.
    private(set) var sendWindow: Int

    init(sendWindow: Int) {
        self.sendWindow = sendWindow
    }

    /// Counts `count` bytes of DATA read on the stream; returns the WINDOW_UPDATE
    /// increment to send now (none once the client ended the stream).
    mutating func received(_ count: Int, on id: UInt32, endStream: Bool) throws(HTTP2Wire.Violation) -> Int? {
        guard count <= receiveWindow else { throw .stream(id, .flowControlError, "DATA past the stream's flow-control window") }
        receiveWindow -= count
        guard !endStream, let increment = credit.read(count) else { return nil }
        receiveWindow += increment
        return increment
    }

    /// `count` bytes of DATA sent.
    mutating func sent(_ count: Int) {
        sendWindow -= count
    }

    /// The client's WINDOW_UPDATE on the stream, or the change of its initial window
    /// (which may take the window below 0, RFC 9113 6.9.2).
    mutating func update(by increment: Int, on id: UInt32, settings: Bool = false) throws(HTTP2Wire.Violation) {
        guard increment <= HTTP2Wire.maxWindowBytes - sendWindow else {
            throw settings
                ? .connection(.flowControlError, "SETTINGS_INITIAL_WINDOW_SIZE took stream \(id)'s window past 2^31-1")
                : .stream(id, .flowControlError, "WINDOW_UPDATE took the stream's window past 2^31-1")
        }
        sendWindow += increment
    }
}

/// Flow-control credit a window of ``HTTP2Limits/windowBytes`` is owed, given back in
/// batches: once half the window was read, one WINDOW_UPDATE returns all of it. One per
/// message would be a frame, and often a packet, the client must read for every message
/// it sent; here small messages cost none, and the window the client sees never falls
/// below half (every byte is read as soon as it comes).
struct WindowCredit {
    private var owed: Int

    init(owed: Int = 0) {
        self.owed = owed
    }

    /// Notes `count` bytes read; returns the increment to give back now, if one is due.
    mutating func read(_ count: Int) -> Int? {
        guard count > 0 else { return nil }
        owed += count
        guard owed >= HTTP2Limits.windowBytes / 2 else { return nil }
        defer { owed = 0 }
        return owed
    }
}
