import DiscfgCore
import NIOCore

/// What a ``ConnectionStateMachine`` is in, and what it answers each event with: the
/// handler does what these say.
extension ConnectionStateMachine {
    /// Where the connection is in its life.
    enum Phase: Equatable {
        /// Not yet active.
        case inactive
        /// Admitted and serving.
        case serving
        /// Over the cap: waiting for the first request head, to answer it `503`.
        case refusing
        /// Shutting down: finishing the requests already read.
        case quiescing
        /// Asked to close: everything that arrives is dropped.
        case closing
        /// Inactive after being active.
        case closed
    }

    /// What to do with a request part that arrived.
    enum Receipt: Equatable {
        /// Take it: start, continue or end a request.
        case take
        /// Nothing now: it is parked until the store has answered the write taken here
        /// (``unpark()``).
        case park
        /// Answer the refusal and close.
        case refuse
        /// Drop it.
        case drop
    }

    /// What to do once an answer's end is written.
    enum AnswerEnd: Equatable {
        /// Nothing more.
        case none
        /// Schedule the idle timer.
        case scheduleIdleTimer(at: NIODeadline)
        /// Flush, and close once the end is written.
        case close
    }

    /// What to do when the idle timer fires.
    enum IdleTimeout: Equatable {
        /// Nothing: the connection is answering, or closing already.
        case none
        /// Close: idle for the whole timeout.
        case close
        /// Schedule the timer again: something happened since it was set.
        case reschedule(at: NIODeadline)
    }

    /// What to do when the client's reading changes.
    enum Stall: Equatable {
        case none
        /// The client stopped reading: close unless it reads again within this.
        case scheduleStallTimer(in: TimeAmount)
        /// The client reads again.
        case cancelStallTimer
    }

    /// What to do at the end of a read from the socket.
    struct ReadComplete: Equatable {
        /// Flush the answers written here.
        var flush: Bool
        /// Tell the router's channel: it was handed something.
        var fireReadComplete: Bool
    }

    /// What to do with a final answer head from the router.
    struct RoutedHead: Equatable {
        /// The config whose view to load: a read the views missed, answered 200 or 304
        /// (the key is there either way, and a client that polls with `If-None-Match`
        /// gets only 304s).
        var wantView: ConfigName?
        /// Whether the answer must say `Connection: close`.
        var closing: Bool
    }
}
