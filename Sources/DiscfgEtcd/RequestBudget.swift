import Synchronization

/// Bytes of request messages a server holds before its methods have taken them: parts of
/// messages still arriving, whole requests still being answered, streaming requests not
/// yet read. Each connection has a limit of its own, and all connections share one, so
/// neither many unfinished messages on one connection nor many connections can make the
/// server hold more than a bounded amount.
final class RequestBytes: Sendable {
    /// The most bytes held at once.
    let limit: Int
    private let held = Atomic<Int>(0)

    init(limit: Int) {
        self.limit = limit
    }

    /// Bytes held now.
    var current: Int { held.load(ordering: .relaxed) }

    /// Holds `count` more bytes; false, holding nothing more, when that would pass the
    /// limit (or `count` is negative).
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

    /// Lets go of `count` bytes taken before.
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

    private let connection: RequestBytes
    private let server: RequestBytes
    /// Bytes held, and whether the stream is still open (an ended stream holds nothing).
    private let state = Mutex((held: 0, open: true))

    init(connection: RequestBytes, server: RequestBytes) {
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
