import GRPCCore
import NIOCore

/// What a connection does about clients that make it wait: one look every
/// ``GRPCConnection/Timeouts/sweep``, on the connection's event loop, at the
/// connection's idleness and at each stream's unfinished message and waiting answer.
extension GRPCConnection {
    /// How long a connection may wait for its client, on the connection's event loop.
    struct Timeouts: Sendable {
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
    }

    /// The time on the connection's event loop (a test's loop keeps its own).
    var now: NIODeadline { context?.eventLoop.now ?? .now() }

    /// Looks again after one sweep period, unless a look is due already.
    func scheduleSweep() {
        guard sweep == nil, !closing, let context else { return }
        sweep = context.eventLoop.assumeIsolated().scheduleTask(in: timeouts.sweep) { [self] in
            sweep = nil
            sweepNow(now)
        }
    }

    /// Acts on what ran out by `now`, then looks again later.
    func sweepNow(_ now: NIODeadline) {
        guard !closing else { return }
        // As gRPC's MaxConnectionIdle: idle means no stream open since the last one
        // ended (or the connection began), whatever else the client sends. A keep-alive
        // PING does not count, or a client pinging a connection it never uses would hold
        // its descriptor for good.
        if let since = idleSince, now - since >= timeouts.idle {
            goAway(.noError, "no request for \(Self.seconds(timeouts.idle)) s (serve --idle-timeout)")
            return
        }
        for stream in Array(streams.values) {
            if let since = stream.waitingSince, now - since >= timeouts.write {
                // The client left its window closed on the answer: what the answer holds
                // goes back, and the client hears the stream was given up.
                reset(stream, .enhanceYourCalm)
            } else if let since = stream.messageSince, now - since >= timeouts.idle {
                expireMessage(stream)
            }
        }
        scheduleSweep()
    }

    /// A request message begun and not whole within the idle timeout: its stream ends,
    /// and the bytes it held go back.
    private func expireMessage(_ stream: Stream) {
        stream.messageSince = nil
        guard stream.queued.isEmpty, stream.trailers == nil else {
            reset(stream, .cancel)
            return
        }
        fail(stream, RPCError(
            code: .resourceExhausted,
            message: "a request message was not whole within \(Self.seconds(timeouts.idle)) s (serve --idle-timeout); send each message without pausing inside it"
        ))
    }

    /// Resets a stream with `code` at once, whatever it was doing: its method is
    /// cancelled, its unsent answers dropped, and all it held goes back to the budgets.
    func reset(_ stream: Stream, _ code: HTTP2Wire.ErrorCode) {
        remove(stream.id)
        drop(stream)
        outbound.writeHTTP2Reset(stream: stream.id, code: code)
        scheduleFlush()
    }

    static func seconds(_ time: TimeAmount) -> String {
        let milliseconds = time.nanoseconds / 1_000_000
        return milliseconds % 1000 == 0 ? String(milliseconds / 1000) : String(Double(milliseconds) / 1000)
    }
}
