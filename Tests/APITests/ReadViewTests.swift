@testable import DiscfgAPI
import DiscfgCore
import DiscfgSQLite
import DiscfgTestSupport
import DiscfgWire
import Foundation
import Testing

/// Key reads answered on the event loop from the in-memory views (`ConfigViews`), and
/// key writes handed from the event loop to the store (`ServerConnection`): the same
/// answers as the router's, never staler than the documented bound, and refused to the
/// same callers.
@Suite("serve: key reads and writes on the event loops")
struct ReadViewTests {
    /// Key reads the views have answered so far, from `/metrics`.
    private func viewReads(_ server: LiveServer) async throws -> Int {
        try await counter(server, "discfg_view_reads_total")
    }

    /// A reply read off a raw connection.
    struct RawReply {
        var status: Int
        var head: String
        var body: String

        func header(_ name: String) -> String? {
            head.components(separatedBy: "\r\n").dropFirst().first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
                .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
        }
    }

    /// `PUT path` with `body`, the whole request sent in one write on a connection of its
    /// own, so the server reads it whole (and may take it on the event loop).
    private func putWhole(_ server: LiveServer, _ path: String, _ body: String, headers: [(String, String)] = []) async throws -> RawReply {
        let connection = try LoopbackHTTP(port: server.port)
        defer { connection.close() }
        let extra = headers.map { "\($0): \($1)\r\n" }.joined()
        let request = Data("PUT \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\(extra)Content-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
        try await BlockingCall.run { try connection.send(request) }
        var received = ""
        while true {
            if let end = received.range(of: "\r\n\r\n") {
                let head = String(received[..<end.lowerBound])
                let reply = RawReply(status: Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0, head: head, body: String(received[end.upperBound...]))
                if let length = reply.header("Content-Length").flatMap(Int.init), reply.body.utf8.count >= length { return reply }
            }
            let more = await connection.read(waiting: 30)
            guard !more.isEmpty else { throw DiscfgError(.unavailable, "the server did not answer PUT \(path) whole: \(received)") }
            received += more
        }
    }

    private func counter(_ server: LiveServer, _ name: String) async throws -> Int {
        let text = try await server.get("/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return Int(line?.split(separator: " ").last ?? "") ?? -1
    }

    @Test("a write taken on the event loop is answered as the router answers it: 201 then 200, the ETag, the envelope, and errors")
    func writesOnTheEventLoop() async throws {
        try await withServer(try await LiveServer.start()) { server in
            // `Connection: keep-alive` sends the same request through the router.
            let router = [("Connection", "keep-alive")]
            let taken = { try await counter(server, "discfg_event_loop_writes_total") }
            let missingFast = try await putWhole(server, "/v1/nope/keys/k", "v")
            let missingRouter = try await server.put("/v1/nope/keys/k", "v", headers: router)
            #expect(missingFast.status == 404 && missingFast.body == missingRouter.text)
            #expect(try await taken() == 1)

            _ = try await server.put("/v1/app", "")
            let created = try await putWhole(server, "/v1/app/keys/db/host", "db1", headers: [("Content-Type", "text/plain")])
            let viaRouter = try await server.put("/v1/app/keys/db/port", "5432", headers: router + [("Content-Type", "text/plain")])
            #expect(created.status == 201 && viaRouter.status == 201)
            #expect(created.header("ETag") == "\"1\"" && viaRouter.headers["ETag"] == ["\"2\""])
            for header in ["Content-Type", "Server"] { #expect(created.header(header) == viaRouter.headers[header].first, "\(header)") }
            #expect(created.header("Content-Length") == String(created.body.utf8.count) && created.header("Date") != nil)
            let envelope = try JSONDecoder.discfg().decode(Envelope.self, from: Data(created.body.utf8))
            #expect(envelope.action == "set" && envelope.item?.value == "db1" && envelope.item?.contentType == "text/plain" && envelope.revision == Revision(1))
            let updated = try await putWhole(server, "/v1/app/keys/db/host", "db2", headers: [("Content-Type", "application/x-www-form-urlencoded")])
            #expect(updated.status == 200)
            #expect(try JSONDecoder.discfg().decode(Envelope.self, from: Data(updated.body.utf8)).prevItem?.value == "db1")
            #expect(try await server.get("/v1/app/keys/db/host?raw").headers["Content-Type"] == ["application/octet-stream"])
            #expect(try await taken() == 3)

            // What the event loop leaves to the router is refused or taken as always.
            #expect(try await putWhole(server, "/v1/app/keys/a//b", "v").status == 400)
            #expect(try await server.put("/v1/app/keys/big", String(repeating: "x", count: Limits.maxValueBytes + 1)).status == 413)
            #expect(try await putWhole(server, "/v1/app/keys/db/host", "db3", headers: [("If-Match", "\"1\"")]).status == 412)
            #expect(try await putWhole(server, "/v1/app/keys/db/host?ttl=0", "v").status == 400)
            #expect(try await taken() == 3)
        }
    }

    @Test("writes on the event loop admit exactly the callers the router does")
    func writeCallers() async throws {
        try await withServer(try await LiveServer.start(auth: .required, tokenCacheLifetime: .seconds(600))) { server in
            let (admin, adminRecord) = try TokenFormat.generate(role: .admin, configs: nil, description: nil, now: Date())
            let (reader, readerRecord) = try TokenFormat.generate(role: .read, configs: nil, description: nil, now: Date())
            for record in [adminRecord, readerRecord] { try await server.store.saveToken(record) }
            let bearer = { (token: String) in [("Authorization", "Bearer \(token)")] }
            let taken = { try await counter(server, "discfg_event_loop_writes_total") }
            // Through the router, which reads the token records the event loop then uses.
            _ = try await server.put("/v1/app", "", headers: bearer(admin))
            #expect(try await putWhole(server, "/v1/app/keys/k", "v").status == 401)
            #expect(try await putWhole(server, "/v1/app/keys/k", "v", headers: bearer(admin + "x")).status == 401)
            #expect(try await putWhole(server, "/v1/app/keys/k", "v", headers: [("Authorization", "Basic abc")]).status == 401)
            #expect(try await putWhole(server, "/v1/app/keys/k", "v", headers: bearer(reader)).status == 403)
            #expect(try await taken() == 0)
            #expect(try await putWhole(server, "/v1/app/keys/k", "w", headers: bearer(admin)).status == 201)
            #expect(try await taken() == 1)
            #expect(try await server.get("/v1/app/keys/k", headers: bearer(reader)).envelope().item?.value == "w")
        }
    }

    /// Reads `path` until the views answer it; the view's answer.
    private func readFromView(_ server: LiveServer, _ path: String, headers: [(String, String)] = []) async throws -> LiveServer.Reply {
        try await eventually("the views answer \(path)", interval: .milliseconds(10)) {
            let before = try await viewReads(server)
            let reply = try await server.get(path, headers: headers)
            return try await viewReads(server) > before ? reply : nil
        }
    }

    @Test("a view answers a key read exactly as the router does: status, body, ETag, types and conditional reads")
    func sameAnswers() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/app", "")
            _ = try await server.put("/v1/app/keys/db/host", "db1.internal", headers: [("Content-Type", "text/plain")])
            let fromStore = try await server.get("/v1/app/keys/db/host")
            #expect(try await viewReads(server) == 0)
            let fromView = try await readFromView(server, "/v1/app/keys/db/host")
            #expect(fromView.status == 200)
            #expect(fromView.body == fromStore.body)
            for header in ["ETag", "Content-Type", "Content-Length", "Server"] {
                #expect(fromView.headers[header] == fromStore.headers[header], "\(header)")
            }
            #expect(fromView.headers["Date"].count == 1)
            #expect(try fromView.envelope().item?.value == "db1.internal")

            let before = try await viewReads(server)
            let notModified = try await server.get("/v1/app/keys/db/host", headers: [("If-None-Match", "\"1\"")])
            #expect(notModified.status == 304 && notModified.body.isEmpty && notModified.headers["ETag"] == ["\"1\""])
            #expect(try await server.get("/v1/app/keys/db/host", headers: [("If-None-Match", "\"7\"")]).status == 200)
            // Weak tags and lists are matched as the router matches them (ETag.listMatches).
            #expect(try await server.get("/v1/app/keys/db/host", headers: [("If-None-Match", "\"5\", W/\"1\"")]).status == 304)
            #expect(try await viewReads(server) == before + 3)
            // What the views leave to the router is answered as always.
            #expect(try await server.get("/v1/app/keys/db/host?raw").text == "db1.internal")
            #expect(try await server.get("/v1/app/keys/missing").status == 404)
            #expect(try await server.get("/v1/app/keys/db/").envelope().items?.map(\.key) == ["/db/host"])
            #expect(try await server.get("/v1/app/keys/db//host").status == 400)
            #expect(try await server.get("/v1/app/keys/db/host", headers: [("Host", "evil.example")]).status == 421)
            #expect(try await viewReads(server) == before + 3)
        }
    }

    @Test("read your writes: a read after a write on the same server sees it, every time")
    func readYourWrites() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/app", "")
            _ = try await server.put("/v1/app/keys/counter", "0")
            _ = try await readFromView(server, "/v1/app/keys/counter")
            for round in 1...200 {
                _ = try await server.put("/v1/app/keys/counter", "\(round)")
                #expect(try await server.get("/v1/app/keys/counter").envelope().item?.value == "\(round)")
            }
            #expect(try await server.request(.DELETE, "/v1/app/keys/counter").status == 200)
            #expect(try await server.get("/v1/app/keys/counter").status == 404)
            #expect(try await server.request(.DELETE, "/v1/app/keys?prefix=/&recursive").status == 200)
            // The config deleted and made again with other contents: the old view is gone.
            _ = try await server.put("/v1/app/keys/k", "old")
            _ = try await readFromView(server, "/v1/app/keys/k")
            #expect(try await server.request(.DELETE, "/v1/app").status == 200)
            #expect(try await server.get("/v1/app/keys/k").status == 404)
            _ = try await server.put("/v1/app", "")
            #expect(try await server.get("/v1/app/keys/k").status == 404)
            _ = try await server.put("/v1/app/keys/k", "new")
            #expect(try await server.get("/v1/app/keys/k").envelope().item?.value == "new")
            #expect(try await readFromView(server, "/v1/app/keys/k").envelope().item?.value == "new")
        }
    }

    @Test("another process's writes to the same SQLite file reach the view within its poll interval")
    func otherWriters() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/app", "")
            _ = try await server.put("/v1/app/keys/k", "one")
            _ = try await readFromView(server, "/v1/app/keys/k")
            let other = try SQLiteStore(path: server.directory.appendingPathComponent("store.db").path)
            _ = try await other.set(try Key("/k"), to: Data("two".utf8), in: try ConfigName("app"))
            try await eventually("the other writer's value is read", interval: .milliseconds(5)) {
                try await server.get("/v1/app/keys/k").envelope().item?.value == "two"
            }
            _ = try await other.delete(try Key("/k"), in: try ConfigName("app"), conditions: [])
            try await eventually("the other writer's delete is read") { (try? await server.get("/v1/app/keys/k").status) == 404 }
        }
    }

    @Test("a key whose TTL ran out is not answered from the view, even before the sweeper removes it")
    func expiredKeys() async throws {
        let clock = ManualClock()
        try await withServer(try await LiveServer.start(clock: clock, configure: { $0.sweepInterval = .seconds(3600) })) { server in
            _ = try await server.put("/v1/app", "")
            _ = try await server.put("/v1/app/keys/session?ttl=1", "s")
            _ = try await readFromView(server, "/v1/app/keys/session")
            clock.advance(seconds: 1.5)
            #expect(try await server.get("/v1/app/keys/session").status == 404)
        }
    }

    @Test("the views admit exactly the callers the router does: no token, a wrong token, another config's token")
    func callers() async throws {
        try await withServer(try await LiveServer.start(auth: .required, tokenCacheLifetime: .seconds(60))) { server in
            let (admin, adminRecord) = try TokenFormat.generate(role: .admin, configs: nil, description: nil, now: Date())
            let (other, otherRecord) = try TokenFormat.generate(role: .read, configs: [try ConfigName("other")], description: nil, now: Date())
            for record in [adminRecord, otherRecord] { try await server.store.saveToken(record) }
            let bearer = { (token: String) in [("Authorization", "Bearer \(token)")] }
            _ = try await server.put("/v1/app", "", headers: bearer(admin))
            _ = try await server.put("/v1/app/keys/secret", "s", headers: bearer(admin))
            _ = try await readFromView(server, "/v1/app/keys/secret", headers: bearer(admin))
            let before = try await viewReads(server)
            #expect(try await server.get("/v1/app/keys/secret").status == 401)
            #expect(try await server.get("/v1/app/keys/secret", headers: bearer(admin + "x")).status == 401)
            #expect(try await server.get("/v1/app/keys/secret", headers: [("Authorization", "Basic abc")]).status == 401)
            #expect(try await server.get("/v1/app/keys/secret", headers: bearer(other)).status == 403)
            #expect(try await viewReads(server) == before)
            #expect(try await server.get("/v1/app/keys/secret", headers: bearer(admin)).status == 200)
            #expect(try await viewReads(server) == before + 1)
        }
    }

    @Test("pipelined requests are answered in order, reads after a write seeing it, and a client that reads late gets every answer")
    func pipelining() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/app", "")
            _ = try await server.put("/v1/app/keys/k", "v0")
            _ = try await readFromView(server, "/v1/app/keys/k")
            let connection = try LoopbackHTTP(port: server.port, receiveBuffer: 4096)
            defer { connection.close() }
            let host = "Host: 127.0.0.1:\(server.port)\r\n"
            let get = "GET /v1/app/keys/k HTTP/1.1\r\n\(host)\r\n"
            var batch = ""
            let rounds = 300
            for round in 1...rounds {
                batch += get + get
                batch += "PUT /v1/app/keys/k HTTP/1.1\r\n\(host)Content-Length: \("v\(round)".utf8.count)\r\n\r\nv\(round)"
            }
            batch += get + "GET /v1/app/keys/k HTTP/1.1\r\n\(host)Connection: close\r\n\r\n"
            // Everything sent before anything is read: the answers back up into the server.
            let requests = Data(batch.utf8)
            try await BlockingCall.run { try connection.send(requests) }
            let replies = await connection.readToEnd(waiting: 60)
            let answers = replies.components(separatedBy: "HTTP/1.1 ").dropFirst()
            #expect(answers.count == rounds * 3 + 2)
            // The value each read saw, in the order the reads were sent.
            let values = answers.filter { $0.contains("\"action\":\"get\"") }.map { answer in
                answer.components(separatedBy: "\"value\":\"").dropFirst().first?.prefix { $0 != "\"" } ?? ""
            }
            var expected: [String] = []
            for round in 1...rounds { expected += ["v\(round - 1)", "v\(round - 1)"] }
            expected += ["v\(rounds)", "v\(rounds)"]
            #expect(values.map(String.init) == expected)
        }
    }

    @Test("the views hold at most their byte budget together: a config that would pass it is read from the store, one that grows past it is dropped")
    func byteBudget() async throws {
        let store = MemoryStore()
        let small = try ConfigName("small")
        let large = try ConfigName("large")
        for config in [small, large] { _ = try await store.createConfig(config, settings: ConfigSettings()) }
        _ = try await store.set(try Key("/k"), to: Data(repeating: 0x61, count: 100), in: small)
        _ = try await store.set(try Key("/k"), to: Data(repeating: 0x61, count: 600), in: large)
        let views = ConfigViews(store: store, maxBytes: 500)
        defer { views.close() }
        func answers(_ config: ConfigName) -> Bool {
            if case .found = views.lookup(keyPath: "/k", configName: config.rawValue) { return true }
            return false
        }
        views.want(small)
        views.want(large)
        try await eventually("the small config is viewed") { answers(small) }
        try await Task.sleep(for: .milliseconds(100))
        #expect(!answers(large), "600 bytes do not fit a budget of 500")
        // Growing past the budget drops the view; the store answers from then on.
        _ = try await store.set(try Key("/more"), to: Data(repeating: 0x62, count: 450), in: small)
        try await eventually("the grown config is no longer viewed") { !answers(small) }
    }
}
