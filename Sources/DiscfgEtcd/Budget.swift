import Synchronization

/// An amount the etcd API holds against a limit, taken and given back from any thread:
/// bytes of requests a connection, or the whole server, holds before its methods have
/// taken them (parts of messages still arriving, whole requests still being answered,
/// streaming requests not yet read); bytes of events a watch stream holds for a client
/// that reads slowly; watchers open on the server. Whatever many connections, streams
/// or watchers a client opens, what they hold stays within bounds.
final class Budget: Sendable {
    /// The most held at once.
    let limit: Int
    private let held = Atomic<Int>(0)

    init(limit: Int) {
        self.limit = limit
    }

    /// Held now.
    var current: Int { held.load(ordering: .relaxed) }

    /// Holds `count` more; false, holding nothing more, when that would pass the limit
    /// (or `count` is negative).
    func take(_ count: Int) -> Bool {
        guard count >= 0 else { return false }
        var current = held.load(ordering: .relaxed)
        while true {
            guard count <= limit - current else { return false }
            let (exchanged, original) = held.compareExchange(expected: current, desired: current + count, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    /// Lets go of `count` taken before.
    func give(_ count: Int) {
        held.subtract(count, ordering: .relaxed)
    }
}

/// What one request stream holds of its connection's and the server's budgets, given
/// back as its messages are taken and, whatever is left, when the stream ends.
final class StreamBytes: Sendable {
    enum Refusal: Error, Equatable {
        /// The connection's limit would be passed.
        case connection(limit: Int)
        /// The limit of all connections together would be passed.
        case server(limit: Int)
    }

    private let connection: Budget
    private let server: Budget
    /// Bytes held, and whether the stream is still open (an ended stream holds nothing).
    private let state = Mutex((held: 0, open: true))

    init(connection: Budget, server: Budget) {
        self.connection = connection
        self.server = server
    }

    /// Holds `count` more bytes of the stream's requests.
    func take(_ count: Int) throws(Refusal) {
        guard connection.take(count) else { throw .connection(limit: connection.limit) }
        guard server.take(count) else {
            connection.give(count)
            throw .server(limit: server.limit)
        }
        let kept = state.withLock { state in
            if state.open { state.held += count }
            return state.open
        }
        if !kept { giveBack(count) }
    }

    /// The method took a message of `count` bytes: they are its now, not the stream's.
    func taken(_ count: Int) {
        let given = state.withLock { state -> Int in
            guard state.open else { return 0 }
            let given = min(count, state.held)
            state.held -= given
            return given
        }
        giveBack(given)
    }

    /// The stream ended: everything it still holds goes back.
    func end() {
        let given = state.withLock { state -> Int in
            defer { state = (held: 0, open: false) }
            return state.held
        }
        giveBack(given)
    }

    private func giveBack(_ count: Int) {
        guard count > 0 else { return }
        connection.give(count)
        server.give(count)
    }
}
