/// What one connection holds for its client, against its own limit and the limit of all
/// connections together (``StreamBytes``'s rules: the connection's floor, the server's
/// reserve for connections that hold little). Both state machines of a connection take
/// from it: HTTP/2's (header blocks in progress, answers until they left) and gRPC's
/// (each stream's overhead and its request messages, through ``StreamBytes``).
struct ConnectionBudget: Sendable {
    /// This connection's bytes, and all connections'.
    let connection: Budget
    let server: Budget

    init(connection: Budget, server: Budget) {
        self.connection = connection
        self.server = server
    }

    /// Holds `count` more bytes.
    func take(_ count: Int) throws(StreamBytes.Refusal) {
        try StreamBytes.take(count, connection: connection, server: server)
    }

    /// Holds an answer of `count` bytes (``StreamBytes/takeAnswer(_:connection:server:)``).
    func takeAnswer(_ count: Int) throws(StreamBytes.Refusal) {
        try StreamBytes.takeAnswer(count, connection: connection, server: server)
    }

    /// Lets go of `count` bytes taken before.
    func give(_ count: Int) {
        StreamBytes.give(count, connection: connection, server: server)
    }

    /// What a new stream's requests will hold, given back as they are taken.
    func streamBytes() -> StreamBytes {
        StreamBytes(connection: connection, server: server)
    }
}
