import DiscfgCore
import Synchronization

/// Abandons requests that outlive their deadline, with one shared ticker for all of them
/// instead of a timer per request.
///
/// Each request's body runs in its own task, registered here with its deadline; a single
/// ticker task, running only while requests are in flight, cancels the tasks whose
/// deadline has passed. An abandoned request ends with `unavailable` (503) whatever its
/// body did after the cancellation. A deadline is enforced within one tick (a tenth of
/// the timeout, between 10 ms and 1 s) of when it passes.
///
/// ```swift
/// let deadlines = RequestDeadlines(timeout: .seconds(30))
/// let response = try await deadlines.run { try await handle(request) }
/// ```
final class RequestDeadlines: Sendable {
    private struct Entry {
        let deadline: ContinuousClock.Instant
        let cancel: @Sendable () -> Void
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var expired: Set<UInt64> = []
        var nextID: UInt64 = 0
        var tickerRunning = false
    }

    /// How long a request may take.
    let timeout: Duration
    private let tick: Duration
    private let state = Mutex(State())

    /// Creates the deadlines for requests that may take up to `timeout`.
    init(timeout: Duration) {
        self.timeout = timeout
        tick = min(max(timeout / 10, .milliseconds(10)), .seconds(1))
    }

    /// Runs `body`, cancelling it and throwing `unavailable` once it has taken longer
    /// than the timeout. Cancelling the caller cancels `body` too.
    func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        // A task of its own, so that abandoning the body leaves the caller (the
        // connection, which still has to write the 503) uncancelled.
        let task = Task { try await body() }
        let id = register { task.cancel() }
        let result = await withTaskCancellationHandler { await task.result } onCancel: { task.cancel() }
        if unregister(id) {
            throw DiscfgError(.unavailable, "the request took longer than \(timeout) and was abandoned", field: "timeout")
        }
        return try result.get()
    }

    private func register(_ cancel: @escaping @Sendable () -> Void) -> UInt64 {
        let deadline = ContinuousClock.now + timeout
        let (id, startTicker) = state.withLock { state in
            let id = state.nextID
            state.nextID &+= 1
            state.entries[id] = Entry(deadline: deadline, cancel: cancel)
            defer { state.tickerRunning = true }
            return (id, !state.tickerRunning)
        }
        if startTicker {
            Task.detached { [self] in await runTicker() }
        }
        return id
    }

    /// Removes a finished request; whether it had been abandoned.
    private func unregister(_ id: UInt64) -> Bool {
        state.withLock { state in
            state.entries[id] = nil
            return state.expired.remove(id) != nil
        }
    }

    /// Cancels overdue requests every tick, and stops when none are left.
    private func runTicker() async {
        while true {
            try? await Task.sleep(for: tick)
            let now = ContinuousClock.now
            let (overdue, keepRunning) = state.withLock { state in
                var overdue: [@Sendable () -> Void] = []
                for (id, entry) in state.entries where entry.deadline <= now && !state.expired.contains(id) {
                    state.expired.insert(id)
                    overdue.append(entry.cancel)
                }
                if state.entries.isEmpty { state.tickerRunning = false }
                return (overdue, state.tickerRunning)
            }
            // Outside the lock: cancelling runs the tasks' cancellation handlers.
            for cancel in overdue { cancel() }
            if !keepRunning { return }
        }
    }
}
