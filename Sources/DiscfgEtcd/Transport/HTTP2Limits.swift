import NIOCore

/// What this server's HTTP/2 connections allow their clients: the settings they are
/// sent, and the limits past which a stream is reset or the connection ends. The
/// connection's state machine (``HTTP2Connection``) applies every one of them.
enum HTTP2Limits {
    /// Each stream's receive window (the server's SETTINGS_INITIAL_WINDOW_SIZE), and the
    /// connection's once widened.
    static let windowBytes = 1 << 20
    /// Requests served at once on one connection (SETTINGS_MAX_CONCURRENT_STREAMS).
    static let maxConcurrentStreams = 256
    /// The largest decoded header list taken (SETTINGS_MAX_HEADER_LIST_SIZE).
    static let maxHeaderListBytes = 16 << 10
    /// The most bytes of one encoded header block, over its HEADERS and CONTINUATION
    /// frames, and the most CONTINUATION frames: past them the connection ends.
    static let maxHeaderBlockBytes = 64 << 10
    static let maxContinuationFrames = 64
    /// Streams a client may reset in ``resetWindow`` before the connection ends
    /// (a flood of opened and reset streams costs the server work each, the client none).
    static let maxResets = 200
    static let resetWindow = TimeAmount.seconds(30)

    /// What the server tells each client: up to ``maxConcurrentStreams`` requests at
    /// once, ``windowBytes`` of request data in flight per stream, header lists up to
    /// ``maxHeaderListBytes``.
    static let settings: [(HTTP2Wire.Setting, Int)] = [
        (.maxConcurrentStreams, maxConcurrentStreams),
        (.initialWindowSize, windowBytes),
        (.maxHeaderListSize, maxHeaderListBytes),
    ]
}

/// How long a connection may wait for its client; the connection's state machine acts
/// on them when the handler's clock says they passed (``HTTP2Connection/expire(now:)``).
struct HTTP2Timeouts: Sendable {
    /// For the HTTP/2 preface; with no stream open (then GOAWAY and close); for a
    /// request message begun and not whole (then its stream is reset).
    var idle: TimeAmount
    /// For an answer waiting on the client's flow-control window with no byte sent
    /// (then its stream is reset with `ENHANCE_YOUR_CALM`); for the socket's send
    /// buffer to drain below its low-water mark (then the connection is closed).
    var write: TimeAmount
    /// For the streams of a connection the server's shutdown winds down (GOAWAY sent)
    /// to finish; then the connection is closed whatever they were doing.
    var drain: TimeAmount = .seconds(10)

    /// How often a connection looks for what ran out: a quarter of the shorter
    /// timeout (so each acts within a quarter past its time), at least 250 ms.
    var sweep: TimeAmount {
        .nanoseconds(max(min(idle.nanoseconds, write.nanoseconds) / 4, TimeAmount.milliseconds(250).nanoseconds))
    }

    /// `time` in seconds, as a sentence names it.
    static func seconds(_ time: TimeAmount) -> String {
        let milliseconds = time.nanoseconds / 1_000_000
        return milliseconds % 1000 == 0 ? String(milliseconds / 1000) : String(Double(milliseconds) / 1000)
    }
}
