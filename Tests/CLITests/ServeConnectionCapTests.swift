import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `discfg serve` against clients that hold connections: too many of them, ones that
/// never send a request, and ones that never read the answer.
@Suite("CLI: serve connection limits")
struct ServeConnectionCapTests {
    /// The answer to a health check on a new connection, once the server has freed the
    /// place a closed connection held: it frees it when it sees the close, which on a
    /// loaded machine may come after a first new connection, answered 503 like any other
    /// past the limit. Tries for up to 10 s.
    static func servedOnceFreed(port: Int) async throws -> String {
        try await eventually("a new connection is not answered 503", interval: .milliseconds(100)) {
            let connection = try LoopbackHTTP(port: port)
            defer { connection.close() }
            try connection.send(Data("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8))
            let answer = await connection.read(waiting: 10)
            return answer.hasPrefix("HTTP/1.1 503") ? nil : answer
        }
    }

    @Test("over --max-connections a request is answered 503 with Retry-After at once; a new connection is served once one closes", .timeLimit(.minutes(1)))
    func overTheCap() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let (server, port) = try await cli.serve(["--max-connections", "1"])
        try await withServer(server) { server in
            let healthz = Data("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8)

            let first = try LoopbackHTTP(port: port)
            try first.send(healthz)
            #expect(await first.read(waiting: 10).hasPrefix("HTTP/1.1 200"), "the first connection is served and kept alive")

            let second = try LoopbackHTTP(port: port)
            defer { second.close() }
            try second.send(healthz)
            let refused = await second.readToEnd(waiting: 10)
            #expect(refused.hasPrefix("HTTP/1.1 503"), "\(refused)")
            #expect(refused.lowercased().contains("retry-after: 1"), "\(refused)")
            #expect(refused.contains(#""code":"unavailable""#) && refused.contains("--max-connections"), "\(refused)")

            first.close()
            #expect(try await Self.servedOnceFreed(port: port).hasPrefix("HTTP/1.1 200"), "served once the first closed")
            #expect(server.isRunning)
        }
    }

    @Test("bytes that are no HTTP request (a header line without a colon, a TLS hello, garbage after a request) are answered 400 and closed, and the server goes on serving", .timeLimit(.minutes(1)))
    func unparsableBytes() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let (server, port) = try await cli.serve([])
        try await withServer(server) { _ in
            let payloads = [
                "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n",
                "\u{16}\u{03}\u{01}garbage\r\n\r\n",
                "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGARBAGE \u{01}\r\n\r\n",
            ]
            for payload in payloads {
                let connection = try LoopbackHTTP(port: port)
                defer { connection.close() }
                try connection.send(Data(payload.utf8))
                let answer = await connection.readToEnd(waiting: 10)
                #expect(answer.contains("HTTP/1.1 400 Bad Request"), "\(payload.debugDescription) → \(answer.prefix(200).debugDescription)")
            }
            let healthy = try await Self.servedOnceFreed(port: port)
            #expect(healthy.hasPrefix("HTTP/1.1 200"), "\(healthy.prefix(200))")
        }
    }

    @Test("a connection that sends no whole request is closed after --idle-timeout, freeing its place", .timeLimit(.minutes(1)))
    func silentConnection() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let (server, port) = try await cli.serve(["--max-connections", "1", "--idle-timeout", "1"])
        try await withServer(server) { server in
            let silent = try LoopbackHTTP(port: port)
            defer { silent.close() }
            // Half a request head, and then nothing (slowloris).
            try silent.send(Data("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1".utf8))
            let start = ContinuousClock.now
            #expect(await silent.read(waiting: 10) == "", "closed without an answer")
            #expect(ContinuousClock.now - start < .seconds(9), "closed by the idle timeout, not the test's")
            #expect(try await Self.servedOnceFreed(port: port).hasPrefix("HTTP/1.1 200"))
        }
    }

    @Test("an event stream nobody reads is disconnected after --write-timeout, and its watch is freed", .timeLimit(.minutes(2)))
    func unreadStream() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let (server, port) = try await cli.serve(["--max-watches", "1", "--write-timeout", "1", "--stream-backlog", "64"])
        try await withServer(server) { server in
            #expect(try await LoopbackHTTP.exchange(port: port, "PUT /v1/w", body: Data()).hasPrefix("HTTP/1.1 201"))

            let stalled = try LoopbackHTTP(port: port, receiveBuffer: 4096)
            defer { stalled.close() }
            try stalled.send(Data("GET /v1/w/watch?heartbeat=3600 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\r\n".utf8))
            // The stream's head says the server holds its watch.
            let head = await stalled.read(waiting: 10)
            #expect(head.hasPrefix("HTTP/1.1 200"), "\(head)")
            let poll = "GET /v1/w/watch?fromRevision=1&timeout=1"
            #expect(try await LoopbackHTTP.exchange(port: port, poll, body: Data()).hasPrefix("HTTP/1.1 503"), "the one watch is taken")

            // Enough events to fill every buffer between the server and the stalled reader.
            let value = Data(String(repeating: "v", count: 200 * 1024).utf8)
            for index in 0..<200 {
                let reply = try await LoopbackHTTP.exchange(port: port, "PUT /v1/w/keys/k\(index)", body: value)
                try #require(reply.hasPrefix("HTTP/1.1 201"), "write \(index): \(reply.prefix(200))")
            }
            try await eventually("the stalled stream's watch is released", timeout: .seconds(60), interval: .milliseconds(250)) {
                try await LoopbackHTTP.exchange(port: port, poll, body: Data()).hasPrefix("HTTP/1.1 200")
            }
            #expect(server.isRunning)
        }
    }
}
