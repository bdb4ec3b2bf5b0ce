import DiscfgCore
import Synchronization

/// The document reads (`GET …?document`) a server builds at once, capped so that
/// concurrent reads of a large prefix cannot multiply its memory: each holds up to 16 MiB
/// of values and 16 MiB of text while it is built and sent. A read over the cap waits for
/// a turn, in order, for as long as its request may take (then 503 as any request out of
/// time).
///
/// A turn is held by a ``Lease`` until the answer has been written (or dropped), not only
/// built: a reader that does not read holds its answer's memory until the connection's
/// write timeout.
final class DocumentReadSlots: Sendable {
    /// A turn to build and send one document; given back once, by ``release()`` or when
    /// it is freed.
    final class Lease: Sendable {
        private let slots: DocumentReadSlots
        private let held = Mutex(true)

        fileprivate init(_ slots: DocumentReadSlots) {
            self.slots = slots
        }

        /// Gives the turn to the next read waiting, if any.
        func release() {
            guard held.withLock({ held in defer { held = false }; return held }) else { return }
            slots.handOver()
        }

        deinit { release() }
    }

    private struct State {
        var taken = 0
        var waiting: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextID: UInt64 = 0
    }

    /// The most documents built and sent at once.
    let capacity: Int
    private let state = Mutex(State())

    /// Turns for at most `capacity` document reads at once.
    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Waits for a turn.
    /// - Throws: `CancellationError` when the request is cancelled (its deadline passed) first.
    func acquire() async throws -> Lease {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // nil: cancelled already; true: a turn is free; false: waiting in line.
                let granted: Bool? = state.withLock { state in
                    if Task.isCancelled { return nil }
                    guard state.taken >= capacity else {
                        state.taken += 1
                        return true
                    }
                    state.waiting.append((id, continuation))
                    return false
                }
                switch granted {
                case nil: continuation.resume(throwing: CancellationError())
                case true?: continuation.resume()
                case false?: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                state.waiting.firstIndex { $0.id == id }.map { state.waiting.remove(at: $0).continuation }
            }
            waiter?.resume(throwing: CancellationError())
        }
        return Lease(self)
    }

    /// A finished read's turn passes to the first waiting, or is freed.
    fileprivate func handOver() {
        let next = state.withLock { state in
            guard !state.waiting.isEmpty else {
                state.taken -= 1
                return nil as CheckedContinuation<Void, any Error>?
            }
            return state.waiting.removeFirst().continuation
        }
        next?.resume()
    }
}
