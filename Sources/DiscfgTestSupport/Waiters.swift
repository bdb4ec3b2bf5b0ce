import Foundation
import Synchronization

/// Tasks waiting for a value (an emulator's long-polled `next`, or a result), each resumed
/// exactly once: by ``resumeFirst(returning:)``, ``resumeAll(returning:)`` or
/// ``failAll(_:)``, or with `CancellationError` when its task is cancelled.
final class Waiters<Value: Sendable>: Sendable {
    private let waiting = Mutex<[(id: UUID, continuation: CheckedContinuation<Value, any Error>)]>([])

    var isEmpty: Bool { waiting.withLock { $0.isEmpty } }

    /// Waits until a value is handed over. Called from an actor, it is registered before
    /// the actor runs anything else, so the actor never misses it between a check and the wait.
    func wait(isolation: isolated (any Actor)? = #isolation) async throws -> Value {
        let id = UUID()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation(isolation: isolation) { continuation in
                waiting.withLock { waiting in
                    // Checked under the lock: a cancellation either is seen here or finds the entry.
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        waiting.append((id, continuation))
                    }
                }
            }
        } onCancel: {
            let cancelled = waiting.withLock { waiting in
                waiting.firstIndex { $0.id == id }.map { waiting.remove(at: $0) }
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Hands `value` to the longest waiting task; false when none waits.
    @discardableResult
    func resumeFirst(returning value: Value) -> Bool {
        guard let first = waiting.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { return false }
        first.continuation.resume(returning: value)
        return true
    }

    /// Hands `value` to every waiting task.
    func resumeAll(returning value: Value) {
        for waiter in waiting.withLock({ waiting in defer { waiting = [] }; return waiting }) {
            waiter.continuation.resume(returning: value)
        }
    }

    /// Ends every wait with `error`.
    func failAll(_ error: any Error) {
        for waiter in waiting.withLock({ waiting in defer { waiting = [] }; return waiting }) {
            waiter.continuation.resume(throwing: error)
        }
    }
}
