@testable import DiscfgEtcd
import Testing

/// The bytes of requests the etcd API holds: each stream's take counts against its
/// connection's limit and the server's, and comes back as messages are read and when the
/// stream ends, however it ends. (The connection's limit over real sockets is in
/// `Tests/Peers/h2_abuse.py`.)
@Suite("etcd API: the request bytes a connection and the server hold")
struct RequestBudgetTests {
    @Test("a take past either limit is refused, names that limit and holds nothing more")
    func refusals() throws {
        let connection = Budget(limit: 100)
        let server = Budget(limit: 150)
        let other = Budget(limit: 100)
        let first = StreamBytes(connection: connection, server: server)
        try first.take(100)
        #expect(throws: StreamBytes.Refusal.connection(limit: 100)) { try first.take(1) }
        let second = StreamBytes(connection: other, server: server)
        try second.take(50)
        #expect(throws: StreamBytes.Refusal.server(limit: 150)) { try second.take(1) }
        #expect(connection.current == 100)
        #expect(other.current == 50)
        #expect(server.current == 150)
    }

    @Test("bytes come back as messages are read, the rest when the stream ends, once")
    func givingBack() throws {
        let connection = Budget(limit: 1_000)
        let server = Budget(limit: 1_000)
        let stream = StreamBytes(connection: connection, server: server)
        try stream.take(300)
        stream.taken(120)
        #expect(connection.current == 180)
        #expect(server.current == 180)
        stream.end()
        #expect(connection.current == 0)
        #expect(server.current == 0)
        // After its end a stream holds nothing: late reads and takes change no count.
        stream.taken(50)
        try stream.take(40)
        stream.end()
        #expect(connection.current == 0)
        #expect(server.current == 0)
    }

    @Test("at 0, −1 and the largest sizes the counts stay within their limits", arguments: [0, -1, Int.max, Int.max / 2 + 1])
    func edges(size: Int) {
        let connection = Budget(limit: 1 << 24)
        let server = Budget(limit: 1 << 28)
        let stream = StreamBytes(connection: connection, server: server)
        let took = (try? stream.take(size)) != nil
        #expect(took == (0...(1 << 24)).contains(size))
        #expect(connection.current >= 0 && connection.current <= connection.limit)
        stream.end()
        #expect(connection.current == 0 && server.current == 0)
    }
}

/// The server's budget is shared fairly: connections past a largest message's worth
/// leave its reserve to the others.
@Suite("etcd API: the server budget's fair share")
struct FairShareTests {
    @Test("connections at their own limits hold at most the server's limit less its reserve; one that holds little still takes the reserve")
    func reserve() throws {
        let server = Budget(limit: 64 << 20, reserve: 16 << 20)
        var full: [Budget] = []
        // Slow clients, each filling its own 16 MiB as far as the server lets it.
        for _ in 0..<5 {
            let connection = Budget(limit: 16 << 20)
            while (try? StreamBytes.take(1 << 20, connection: connection, server: server)) != nil {}
            full.append(connection)
        }
        // Three fill their own limits up to the server's limit less its reserve; past
        // that each holds one largest message's worth at most, from the reserve.
        #expect(full.map(\.current) == [16 << 20, 16 << 20, 16 << 20, 4 << 20, 4 << 20])
        #expect(server.current == 56 << 20)
        // An ordinary client: a request of its largest size fits the reserve.
        let ordinary = Budget(limit: 16 << 20)
        try StreamBytes.take(GRPCConnection.maxMessageBytes, connection: ordinary, server: server)
        // Past its own small holding it may not take the rest of the reserve.
        #expect(throws: StreamBytes.Refusal.server(limit: 64 << 20)) {
            try StreamBytes.take(StreamBytes.smallHolderBytes, connection: ordinary, server: server)
        }
        #expect(server.current == 60 << 20)
    }

    @Test("an answer larger than a connection's limit goes out on a connection that holds little, within the server's budget less its reserve; a second is refused")
    func largeAnswer() throws {
        let server = Budget(limit: 64 << 20, reserve: 16 << 20)
        let connection = Budget(limit: 16 << 20)
        try StreamBytes.takeAnswer(40 << 20, connection: connection, server: server)
        #expect(connection.current == 40 << 20)
        #expect(throws: StreamBytes.Refusal.connection(limit: 16 << 20)) {
            try StreamBytes.takeAnswer(1 << 20, connection: connection, server: server)
        }
        let other = Budget(limit: 16 << 20)
        #expect(throws: StreamBytes.Refusal.connection(limit: 16 << 20), "past the server's limit less its reserve") {
            try StreamBytes.takeAnswer(20 << 20, connection: other, server: server)
        }
        #expect(server.current == 40 << 20 && other.current == 0)
        StreamBytes.give(40 << 20, connection: connection, server: server)
        #expect(connection.current == 0 && server.current == 0)
    }

    @Test("what a connection holds up to its floor is not the server's: when the server is full a small request still fits, and gives and takes in any order keep the counts exact")
    func floor() throws {
        let server = Budget(limit: 1 << 20)
        let full = Budget(limit: 2 << 20, floor: 16 << 10)
        try StreamBytes.take((1 << 20) + (16 << 10), connection: full, server: server)
        #expect(server.current == 1 << 20)
        #expect(throws: StreamBytes.Refusal.server(limit: 1 << 20)) { try StreamBytes.take(1, connection: full, server: server) }
        let small = Budget(limit: 2 << 20, floor: 16 << 10)
        try StreamBytes.take(10 << 10, connection: small, server: server)
        try StreamBytes.take(6 << 10, connection: small, server: server)
        #expect(throws: StreamBytes.Refusal.server(limit: 1 << 20)) { try StreamBytes.take(1, connection: small, server: server) }
        StreamBytes.give(100 << 10, connection: full, server: server)
        try StreamBytes.take(50 << 10, connection: small, server: server)
        #expect(server.current == (1 << 20) - (100 << 10) + (50 << 10))
        StreamBytes.give(66 << 10, connection: small, server: server)
        StreamBytes.give((1 << 20) + (16 << 10) - (100 << 10), connection: full, server: server)
        #expect(server.current == 0 && full.current == 0 && small.current == 0)
    }
}
