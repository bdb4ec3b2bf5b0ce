import DiscfgCore
import Hummingbird
import Synchronization

/// The count of open watches (Server-Sent Events streams and long polls), capped so
/// that many idle or slow watchers cannot hold the server's memory and tasks without
/// bound. A watch over the cap is answered 503 with `Retry-After`.
final class StreamSlots: Sendable {
    /// The most watches open at once.
    let capacity: Int
    private let open = Mutex(0)

    /// Slots for at most `capacity` watches.
    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Takes a slot; false when all are taken.
    func acquire() -> Bool {
        open.withLock { open in
            guard open < capacity else { return false }
            open += 1
            return true
        }
    }

    /// Gives a slot back.
    func release() {
        open.withLock { $0 -= 1 }
    }

    /// The answer to a watch over the cap: 503, `Retry-After`, the JSON error envelope.
    func refusal() -> Response {
        var response = APIResponse.error(
            DiscfgError(.unavailable, "the server already serves its maximum of \(capacity) watches (streams and long polls); retry later", field: "watch"),
            action: "watch"
        )
        response.headers[.retryAfter] = "1"
        return response
    }
}

/// What an Server-Sent Events stream holds for its reader: bytes written by the watch
/// but not yet sent. A reader slower than the changes is cut off once this passes the
/// budget, and told to resume from its last event, rather than buffered without bound.
final class StreamBacklog: Sendable {
    private let budget: Int
    private let held = Mutex((bytes: 0, count: 0, overflowed: false))

    /// A backlog of at most `budget` bytes (one message is always let through).
    init(budget: Int) {
        self.budget = budget
    }

    /// Counts `bytes` in; false (and overflowed from then on) when they do not fit.
    func admit(_ bytes: Int) -> Bool {
        held.withLock { held in
            guard !held.overflowed else { return false }
            if held.count > 0, held.bytes + bytes > budget {
                held.overflowed = true
                return false
            }
            held.bytes += bytes
            held.count += 1
            return true
        }
    }

    /// Counts `bytes` out once sent.
    func sent(_ bytes: Int) {
        held.withLock { held in
            held.bytes -= bytes
            held.count -= 1
        }
    }

    /// Whether nothing is waiting to be sent.
    var isEmpty: Bool { held.withLock { $0.count == 0 } }

    /// Whether the reader fell behind by more than the budget.
    var overflowed: Bool { held.withLock { $0.overflowed } }
}
