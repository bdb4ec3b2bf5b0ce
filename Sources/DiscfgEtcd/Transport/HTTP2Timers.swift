import NIOCore

/// A connection's clocks, read against the `now` the handler passes in (no clock of its
/// own, so a test's clock is the machine's): since when no stream has been open, since
/// when the server's shutdown drains it, since when its socket stayed full, and the
/// client's resets counted in their window of time (rapid reset).
struct HTTP2Timers {
    /// What ran out.
    enum Expiry: Equatable {
        /// No stream open for the idle timeout.
        case idle
        /// The shutdown's drain, or a full socket, past their timeouts.
        case drain, stall
    }

    /// Since when no stream has been open; nil while one is.
    private(set) var idleSince: NIODeadline?
    /// When this end sent GOAWAY for a graceful shutdown.
    private(set) var drainingSince: NIODeadline?
    /// Since when the socket's send buffer has been full; nil while it drains.
    private var stalledSince: NIODeadline?
    /// Client resets counted since `resetsSince`.
    private var resets = 0
    private var resetsSince: NIODeadline

    init(now: NIODeadline) {
        idleSince = now
        resetsSince = now
    }

    /// A stream opened: the connection is not idle.
    mutating func busy() { idleSince = nil }
    /// The last stream ended: the idle clock starts.
    mutating func idle(since now: NIODeadline) { idleSince = now }
    mutating func draining(since now: NIODeadline) { drainingSince = now }

    /// The socket's send buffer filled (`writable` false) or drained.
    mutating func socketWritable(_ writable: Bool, now: NIODeadline) {
        if writable {
            stalledSince = nil
        } else if stalledSince == nil {
            stalledSince = now
        }
    }

    /// Counts a stream the client reset; false once more than
    /// ``HTTP2Limits/maxResets`` came within ``HTTP2Limits/resetWindow``.
    mutating func countReset(now: NIODeadline) -> Bool {
        if now - resetsSince > HTTP2Limits.resetWindow {
            resets = 0
            resetsSince = now
        }
        resets += 1
        return resets <= HTTP2Limits.maxResets
    }

    /// What ran out by `now`, if anything.
    func expired(now: NIODeadline, _ timeouts: HTTP2Timeouts) -> Expiry? {
        if let since = idleSince, now - since >= timeouts.idle { return .idle }
        if let since = drainingSince, now - since >= timeouts.drain { return .drain }
        if let since = stalledSince, now - since >= timeouts.write { return .stall }
        return nil
    }
}
