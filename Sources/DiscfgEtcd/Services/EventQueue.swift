import DiscfgCore
import Foundation
import GRPCCore
import Synchronization

/// Events between the watch that delivers them and the loop that sends them, at most
/// `maxBytes` of them (``PageBudget``'s measure) and no more than its stream's `shared`
/// budget has room for: past that it drops what it holds and says so, and the loop
/// reads the gap from history instead.
final class EventQueue: Sendable {
    private struct State {
        var events: [Event] = []
        var bytes = 0
        var peakBytes = 0
        var overflowed = false
        var ending: (any Error)?
        var finished = false
        var waiter: CheckedContinuation<Bool, Never>?
    }

    /// What ``takeAll()`` hands over.
    struct Taken {
        /// The events held, in order; none when ``overflowed``.
        var events: [Event]
        /// Whether events were dropped since the last take: every event after the last
        /// one sent must be read from history.
        var overflowed: Bool
        /// Why the watch ended, once it has.
        var ending: (any Error)?
    }

    private let maxBytes: Int
    /// What this queue holds counts here too, with other queues' (one watch stream's).
    private let shared: Budget?
    private let state = Mutex(State())

    init(maxBytes: Int, shared: Budget? = nil) {
        self.maxBytes = maxBytes
        self.shared = shared
    }

    deinit {
        shared?.give(state.withLock { $0.bytes })
    }

    /// The most bytes of events held at once so far.
    var peakBytes: Int { state.withLock { $0.peakBytes } }

    func push(_ event: Event) {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard !state.overflowed else { return nil }
            let size = PageBudget.size(event)
            if state.bytes + size > maxBytes || !(shared?.take(size) ?? true) {
                shared?.give(state.bytes)
                state.events = []
                state.bytes = 0
                state.overflowed = true
            } else {
                state.events.append(event)
                state.bytes += size
                state.peakBytes = max(state.peakBytes, state.bytes)
            }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: true)
    }

    func finish(_ error: (any Error)?) {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            state.finished = true
            state.ending = error
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: true)
    }

    /// Waits until events, an overflow or the end are there; false when the queue ended
    /// with nothing left and no error to report.
    func waitForEvents() async -> Bool {
        await withTaskCancellationHandler {
            await wait()
        } onCancel: {
            finish(CancellationError())
        }
    }

    private func wait() async -> Bool {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool? in
                if !state.events.isEmpty || state.overflowed || state.ending != nil { return true }
                if state.finished { return false }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    func takeAll() -> Taken {
        state.withLock { state in
            defer {
                shared?.give(state.bytes)
                state.events = []
                state.bytes = 0
                state.overflowed = false
            }
            return Taken(events: state.events, overflowed: state.overflowed, ending: state.finished ? state.ending : nil)
        }
    }
}
