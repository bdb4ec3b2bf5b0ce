import DiscfgCore
import DiscfgService
import Synchronization

/// The gRPC adapter's hold over one call while it runs: the client's deadline (its
/// `grpc-timeout`), which the services hand the pipeline as the call's, and the
/// adapter's power to cancel the call's task.
///
/// The adapter answers `DEADLINE_EXCEEDED` when the client's timeout passes (the client
/// stops waiting then, whatever the server does) and cancels a call whose client reset
/// its stream; either cancels the task only while no write of the call has begun. Once
/// one has (``DiscfgService/Pipeline/commit(_:)``), the call runs to its end: a change
/// is never abandoned half-way.
final class GRPCCallHold: RequestCutoff {
    private enum State {
        /// Running, and the adapter may cancel it.
        case running
        /// A write has begun: out of the adapter's reach for the rest of the call.
        case writing
        /// Cut off by the adapter: no write may begin.
        case cut
    }

    /// When the client stops waiting; nil when it sent no `grpc-timeout`.
    let deadline: Deadline?
    private let state = Mutex(State.running)

    /// The hold of a call whose client allows it `timeout`, if it sent one.
    init(timeout: Duration?) {
        deadline = timeout.map { Deadline.after($0) }
    }

    /// The hold of the call the current task runs, bound by the adapter; nil off the
    /// adapter (the JSON gateway, a test calling a service).
    static var current: GRPCCallHold? { Pipeline.cutoff as? GRPCCallHold }

    func writeBegins() throws(DiscfgError) {
        let cut = state.withLock { state in
            if case .cut = state { return true }
            state = .writing
            return false
        }
        if cut { throw Deadline.exceeded("the call") }
    }

    /// Cuts the call off; whether its task may be cancelled (no write of it has begun).
    func cut() -> Bool {
        state.withLock { state in
            guard case .running = state else { return false }
            state = .cut
            return true
        }
    }
}
