import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// A client that closes its sending side once its requests are out (`shutdown(SHUT_WR)`,
/// as `nc -N` and some scripts do) still gets every answer, in order, and then the
/// connection closes. The writes are slow here (``SlowWriteStore``), as DynamoDB's are, so
/// the end of input arrives while a write taken on the event loop is with the store. Were
/// it passed on at once, the router's channel would end, the connection close, and the
/// write be cancelled unanswered; it is held until the write's answer and what was parked
/// behind it. So are bytes the HTTP codec cannot read, which the router answers `400`.
@Suite("serve: a client that half-closes its socket")
struct HalfClosedClientTests {
    static func slowServer() async throws -> LiveServer {
        let server = try await LiveServer.start(serving: { SlowWriteStore($0, delay: .milliseconds(300)) })
        _ = try await server.put("/v1/app", "")
        return server
    }

    /// `requests` sent on one connection in one write, its sending side then closed; the
    /// status lines of everything that came back before the server closed.
    static func halfClosed(_ server: LiveServer, _ requests: [String]) async throws -> (statuses: [String], text: String) {
        let connection = try LoopbackHTTP(port: server.port)
        defer { connection.close() }
        try connection.send(Data(requests.joined().utf8))
        connection.shutdownWrite()
        let text = await connection.readToEnd(waiting: 30)
        return (statuses(text), text)
    }

    /// The status lines of the answers in `text`. A JSON body ends in a newline, with the
    /// next answer's status line right after it.
    static func statuses(_ text: String) -> [String] {
        text.components(separatedBy: "HTTP/1.1 ").dropFirst().map { "HTTP/1.1 " + ($0.components(separatedBy: "\r\n").first ?? "") }
    }

    static func put(_ server: LiveServer, _ key: String, _ value: String, headers: String = "") -> String {
        "PUT /v1/app/keys/\(key) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\(headers)Content-Length: \(value.utf8.count)\r\n\r\n\(value)"
    }

    static func get(_ server: LiveServer, _ key: String) -> String {
        "GET /v1/app/keys/\(key)?raw HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\r\n"
    }

    @Test("one write, then the end of input: the write is answered and stored")
    func oneWrite() async throws {
        try await withServer(try await Self.slowServer()) { server in
            let reply = try await Self.halfClosed(server, [Self.put(server, "db/host", "db1")])
            #expect(reply.statuses == ["HTTP/1.1 201 Created"], "\(reply.text)")
            #expect(try await server.get("/v1/app/keys/db/host?raw").text == "db1")
        }
    }

    @Test("a write, a routed write and a read pipelined, then the end of input: three answers in order")
    func pipelined() async throws {
        try await withServer(try await Self.slowServer()) { server in
            // `Connection: keep-alive` sends the second write through the router.
            let requests = [
                Self.put(server, "a", "1"),
                Self.put(server, "b", "2", headers: "Connection: keep-alive\r\n"),
                Self.get(server, "a"),
            ]
            let reply = try await Self.halfClosed(server, requests)
            #expect(reply.statuses == ["HTTP/1.1 201 Created", "HTTP/1.1 201 Created", "HTTP/1.1 200 OK"], "\(reply.text)")
            #expect(reply.text.hasSuffix("\r\n\r\n1"), "the read sees the write before it: \(reply.text)")
            #expect(try await server.get("/v1/app/keys/b?raw").text == "2")
        }
    }

    @Test("requests for the router alone, then the end of input: every one answered")
    func routedAlone() async throws {
        try await withServer(try await Self.slowServer()) { server in
            let keepAlive = "Connection: keep-alive\r\n"
            let requests = [Self.put(server, "a", "1", headers: keepAlive), "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\r\n"]
            let reply = try await Self.halfClosed(server, requests)
            #expect(reply.statuses == ["HTTP/1.1 201 Created", "HTTP/1.1 200 OK"], "\(reply.text)")
        }
    }

    @Test("a write, then bytes that are not HTTP, in one send or while it is with the store: its answer, then 400", arguments: [false, true])
    func unreadableAfterAWrite(whileWriting: Bool) async throws {
        var slow: SlowWriteStore?
        let server = try await LiveServer.start(serving: {
            let store = SlowWriteStore($0, delay: .milliseconds(300))
            slow = store
            return store
        })
        try await withServer(server) { server in
            _ = try await server.put("/v1/app", "")
            let store = try #require(slow)
            let connection = try LoopbackHTTP(port: server.port)
            defer { connection.close() }
            let unreadable = "NOT HTTP AT ALL\r\n\r\n"
            try connection.send(Data((Self.put(server, "g", "1") + (whileWriting ? "" : unreadable)).utf8))
            if whileWriting {
                try await eventually("the write is with the store") { store.begun.count == 1 }
                try connection.send(Data(unreadable.utf8))
            }
            let text = await connection.readToEnd(waiting: 30)
            #expect(Self.statuses(text) == ["HTTP/1.1 201 Created", "HTTP/1.1 400 Bad Request"], "\(text)")
            #expect(try await server.get("/v1/app/keys/g?raw").text == "1")
        }
    }
}
