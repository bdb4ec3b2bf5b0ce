import Synchronization

/// An amount the etcd API holds against a limit, taken and given back from any thread:
/// bytes of memory a connection, or the whole server, holds for its clients (parts of
/// request messages still arriving, whole requests still being answered, streaming
/// requests not yet read, answers the client has not taken, and a fixed overhead for
/// each open stream and each message); bytes of events a watch stream holds for a client
/// that reads slowly; watchers open on the server. Whatever many connections, streams
/// or watchers a client opens, what they hold stays within bounds.
final class Budget: Sendable {
    /// The most held at once.
    let limit: Int
    /// The last bytes of the limit, which only a holder that holds little may take (see
    /// ``StreamBytes/take(_:connection:server:)``); 0 for none.
    let reserve: Int
    /// For a connection's budget: what it may hold whatever the server holds; the
    /// server's budget counts only what the connection holds above it (see
    /// ``StreamBytes/take(_:connection:server:)``). 0 for none.
    let floor: Int
    private let held = Atomic<Int>(0)
    /// Keeps a connection's take or give and the server's share of it together.
    fileprivate let serial = Mutex(())

    init(limit: Int, reserve: Int = 0, floor: Int = 0) {
        self.limit = limit
        self.reserve = min(max(reserve, 0), limit)
        self.floor = min(max(floor, 0), limit)
    }

    /// What of `amount` held lies above the floor.
    fileprivate func aboveFloor(_ amount: Int) -> Int { max(0, amount - floor) }

    /// Held now.
    var current: Int { held.load(ordering: .relaxed) }

    /// Holds `count` more; false, holding nothing more, when that would pass the limit
    /// (or, unless `reserved`, reach into the reserve), or `count` is negative.
    func take(_ count: Int, reserved: Bool = true) -> Bool {
        guard count >= 0 else { return false }
        let ceiling = reserved ? limit : limit - reserve
        var current = held.load(ordering: .relaxed)
        while true {
            guard count <= ceiling - current else { return false }
            let (exchanged, original) = held.compareExchange(expected: current, desired: current + count, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    /// Holds `count` more whatever the limit (see
    /// ``StreamBytes/takeAnswer(_:connection:server:)``).
    func takeBeyondLimit(_ count: Int) {
        held.add(count, ordering: .relaxed)
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
        /// The limit of all connections together would be passed (or, for a connection
        /// past its fair share, the part of it kept for the others).
        case server(limit: Int)
    }

    /// What a connection may hold and still take the server's reserve: one request
    /// message of the largest size, with its stream's and its message's overhead.
    ///
    /// Fair share: the server's budget is shared first come, first served, but its last
    /// ``Budget/reserve`` bytes only go to connections holding no more than this. However
    /// many connections fill their own limits (slow clients, unfinished messages, answers
    /// nobody reads), together they hold at most the server's limit less its reserve, and
    /// a client that holds little (an ordinary Put, a Range) still finds room in the
    /// reserve. Taking it back needs many connections each holding a largest message,
    /// and each of those is bounded in time: a message not whole within the idle timeout
    /// is reset, and so is an answer left waiting on a closed window past the write
    /// timeout.
    ///
    /// And a floor: each connection may hold ``GRPCConnection/floorBytes`` whatever the
    /// server holds (the server's budget counts what a connection holds above it), so
    /// however many connections attackers open, an ordinary small request on a
    /// connection of its own is never refused for the server's budget.
    static let smallHolderBytes = GRPCConnection.maxMessageBytes + GRPCConnection.streamOverheadBytes + 2 * GRPCConnection.messageOverheadBytes

    private let connection: Budget
    private let server: Budget
    /// Bytes held, and whether the stream is still open (an ended stream holds nothing).
    private let state = Mutex((held: 0, open: true))

    init(connection: Budget, server: Budget) {
        self.connection = connection
        self.server = server
    }

    /// Holds `count` more bytes of the connection's against its limit and the server's,
    /// the server's reserve only while the connection holds little
    /// (``smallHolderBytes``).
    static func take(_ count: Int, connection: Budget, server: Budget) throws(Refusal) {
        try connection.serial.withLock { _ throws(Refusal) in
            let before = connection.current
            guard connection.take(count) else { throw .connection(limit: connection.limit) }
            let above = connection.aboveFloor(before + count) - connection.aboveFloor(before)
            guard server.take(above, reserved: before + count <= smallHolderBytes) else {
                connection.give(count)
                throw .server(limit: server.limit)
            }
        }
    }

    /// Holds an answer of `count` bytes as ``take(_:connection:server:)`` does, except
    /// that a connection holding little (``smallHolderBytes``) may pass its own limit
    /// with it while the server's budget less its reserve has room: an answer larger
    /// than a connection's limit (a watch response carrying one large transaction) is
    /// not refused for its size alone, and the server's limit still holds.
    static func takeAnswer(_ count: Int, connection: Budget, server: Budget) throws(Refusal) {
        do {
            try take(count, connection: connection, server: server)
        } catch .connection(let limit) {
            try connection.serial.withLock { _ throws(Refusal) in
                let before = connection.current
                let above = connection.aboveFloor(before + count) - connection.aboveFloor(before)
                guard before <= smallHolderBytes, server.take(above, reserved: false) else { throw .connection(limit: limit) }
                connection.takeBeyondLimit(count)
            }
        } catch {
            throw error
        }
    }

    /// Lets go of `count` bytes taken with ``take(_:connection:server:)``.
    static func give(_ count: Int, connection: Budget, server: Budget) {
        guard count > 0 else { return }
        connection.serial.withLock { _ in
            let before = connection.current
            connection.give(count)
            server.give(connection.aboveFloor(before) - connection.aboveFloor(before - count))
        }
    }

    /// Holds `count` more bytes of the stream's requests.
    func take(_ count: Int) throws(Refusal) {
        try Self.take(count, connection: connection, server: server)
        let kept = state.withLock { state in
            if state.open { state.held += count }
            return state.open
        }
        if !kept { Self.give(count, connection: connection, server: server) }
    }

    /// The method took a message of `count` bytes: they are its now, not the stream's.
    func taken(_ count: Int) {
        let given = state.withLock { state -> Int in
            guard state.open else { return 0 }
            let given = min(count, state.held)
            state.held -= given
            return given
        }
        Self.give(given, connection: connection, server: server)
    }

    /// The stream ended: everything it still holds goes back.
    func end() {
        let given = state.withLock { state -> Int in
            defer { state = (held: 0, open: false) }
            return state.held
        }
        Self.give(given, connection: connection, server: server)
    }
}
