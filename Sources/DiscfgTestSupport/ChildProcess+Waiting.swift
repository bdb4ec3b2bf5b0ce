import Foundation
import Synchronization

extension ChildProcess {
    /// What the reader and reaper threads have learnt, and the tasks waiting for more.
    struct State {
        var stdout = Data()
        var stderr = Data()
        /// Captured streams not yet at end of file.
        var openStreams: Int
        /// Set by the reaper, under the lock, as it reaps the child.
        var termination: Termination?
        /// Raised on every change; a waiter that saw one version waits for the next.
        var version = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        /// Waiters woken (by a timer or a cancellation) before they were registered.
        var woken: Set<Int> = []
        var nextWaiter = 0
    }

    /// Applies `update` and wakes every waiting task, after the lock is released.
    func change(_ update: (inout State) -> Void) {
        let waiters = state.withLock { state in
            update(&state)
            state.version += 1
            defer { state.waiters = [:] }
            return state.waiters
        }
        for waiter in waiters.values { waiter.resume() }
    }

    /// Waits until `check` gives a value, re-checking on every change; nil once `deadline`
    /// has passed or the task is cancelled.
    func until<T>(_ deadline: ContinuousClock.Instant?, _ check: (State) -> T?) async -> T? {
        while true {
            let (value, version) = state.withLock { (check($0), $0.version) }
            if let value { return value }
            if Task.isCancelled { return nil }
            if let deadline, ContinuousClock.now >= deadline { return nil }
            await nextChange(after: version, deadline: deadline)
        }
    }

    /// Suspends until the state changes past `version`, `deadline` passes or the task is
    /// cancelled, whichever comes first.
    private func nextChange(after version: Int, deadline: ContinuousClock.Instant?) async {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        let timer = deadline.map { deadline in
            Task {
                do { try await Task.sleep(until: deadline, clock: .continuous) } catch { return }
                self.wake(id)
            }
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state in
                    if state.version != version || state.woken.remove(id) != nil { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            wake(id)
        }
        timer?.cancel()
        state.withLock { _ = $0.woken.remove(id) }
    }

    /// Resumes waiter `id` now, or as soon as it registers.
    private func wake(_ id: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiters.removeValue(forKey: id) { return waiter }
            state.woken.insert(id)
            return nil
        }
        waiter?.resume()
    }
}
