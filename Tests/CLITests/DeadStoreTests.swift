import AsyncHTTPClient
import DiscfgCore
import DiscfgTestSupport
import DiscfgWire
import Foundation
import NIOCore
import Testing

/// `discfg serve --etcd --request-timeout 2` over DynamoDB (moto behind a fault proxy),
/// whose endpoint goes silent and then refuses connections in the middle of the test.
/// Every face (REST, etcd gRPC and its JSON gateway) answers `unavailable` within the
/// request timeout — not after the AWS client's whole retry budget, which took 41.6 s for
/// a plain PUT; a refused endpoint at once (`DeadStoreTests+Refused.swift`) — in words
/// that name no table, endpoint or library, with the details in the server's log; and
/// once the endpoint is back nothing was changed.
@Suite("serve over a dead DynamoDB endpoint: unavailable within the request timeout, on every face")
struct DeadStoreTests {
    /// serve's `--request-timeout`, in seconds.
    static let timeout = 2
    /// What "within the timeout" is held to: three times it. A correctness bound (it
    /// did not wait out the retries), not a measure of speed.
    static var bound: Double { Double(timeout * 3) }

    /// One answer of either face and how long it took.
    struct Answer: CustomStringConvertible {
        var name: String
        /// The HTTP status, or the gRPC status name.
        var status: String
        var message: String
        var correlationID: String?
        var seconds: Double
        var description: String { "\(name): \(status) in \(String(format: "%.2f", seconds)) s — \(message)" }
    }

    /// The running server, its ports and the client's environment.
    struct Serve {
        let cli: CLIRunner
        let server: ChildProcess
        let restPort: Int
        let etcdPort: Int

        /// One REST request, answered in full.
        func rest(_ name: String, _ method: String, _ path: String, body: String? = nil) async throws -> (Answer, Envelope?) {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(restPort)\(path)")
            request.method = .init(rawValue: method)
            if let body {
                request.body = .bytes(ByteBuffer(string: body))
                if body.hasPrefix("{") { request.headers.add(name: "Content-Type", value: "application/json") }
            }
            let start = ContinuousClock.now
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
            let bytes = try await response.body.collect(upTo: 1 << 20)
            let seconds = Self.seconds(ContinuousClock.now - start)
            let envelope = try? JSONDecoder.discfg().decode(Envelope.self, from: Data(bytes.readableBytesView))
            let text = envelope?.error?.message ?? String(decoding: bytes.readableBytesView, as: UTF8.self)
            return (Answer(name: name, status: String(response.status.code), message: text, correlationID: envelope?.error?.correlationId, seconds: seconds), envelope)
        }

        /// A GET of the etcd port's `path` (its health probes): the status and the body.
        func probe(_ path: String) async throws -> (status: UInt, body: String) {
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(etcdPort)\(path)"), timeout: .seconds(60))
            let bytes = try await response.body.collect(upTo: 1 << 20)
            return (response.status.code, String(decoding: bytes.readableBytesView, as: UTF8.self))
        }

        /// One etcd KV call by a gRPC client (``Tests/Peers/etcd_call.py``).
        func etcd(_ name: String, _ arguments: String...) async throws -> (Answer, [String: Any]) {
            let output = try await ChildProcess.run(
                "python3", [PeerScript.path("etcd_call.py"), String(etcdPort)] + arguments,
                environment: ChildProcess.environment(["HOME": cli.directory.path]), timeout: .seconds(120)
            )
            let line = try #require(output.stdout.split(separator: "\n").last, "etcd_call.py printed nothing: \(output.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let message = json["message"] as? String ?? ""
            let id = message.range(of: #"correlation id [0-9a-f]{16}"#, options: .regularExpression).map { String(message[$0].suffix(16)) }
            return (Answer(name: name, status: json["code"] as? String ?? "?", message: message, correlationID: id, seconds: json["seconds"] as? Double ?? .infinity), json)
        }

        static func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }
    }

    /// Words of the store, AWS, the network and the libraries that no caller reads.
    static func internalWords(table: String, proxy: URL) -> [String] {
        [table, "DynamoDB", "dynamodb", "us-east-1", "127.0.0.1", String(proxy.port ?? 0), "NetworkError", "AWSError", "HTTPClientError",
         "NIO", "Swift", "connection refused", "Connection refused", "timed out", "deadlineExceeded", "remoteConnectionClosed"]
    }

    @Test("REST (fast PUT, GET, routed list and txn), etcd (Put, Range) and its gateway answer unavailable within the timeout; nothing changed", .timeLimit(.minutes(5)))
    func deadEndpoint() async throws {
        try await Self.withServe { serve, proxy, table, direct in
            try await Self.exercise(serve, proxy: proxy, table: table, direct: direct)
        }
    }

    @Test("a value past the limit is refused on both faces naming the limit, never the table or AWS's words", .timeLimit(.minutes(3)))
    func valueTooLarge() async throws {
        try await Self.withServe { serve, proxy, table, _ in
            #expect(try await serve.rest("create", "PUT", "/v1/app", body: "").0.status == "201")
            let big = String(repeating: "x", count: 300 * 1024)
            let rest = try await serve.rest("REST PUT of 300 KiB", "PUT", "/v1/app/keys/big", body: big).0
            let etcd = try await serve.etcd("etcd Put of 300 KiB", "put", "big", "bytes:\(big.utf8.count)").0
            #expect(rest.status == "413", "\(rest)")
            #expect(etcd.status == "INVALID_ARGUMENT", "\(etcd)")
            for answer in [rest, etcd] {
                #expect(answer.message.contains(String(Limits.maxValueBytes)), "names the limit: \(answer)")
                for word in Self.internalWords(table: table, proxy: proxy.endpoint) { #expect(!answer.message.contains(word), "\"\(word)\" shown: \(answer)") }
            }
        }
    }

    /// Runs `body` with `serve --etcd --request-timeout TIMEOUT --auth none --read-views on`
    /// (2 s unless told) on a fresh table reached through a fault proxy, with the store
    /// URL straight to moto for checking the table.
    static func withServe(
        timeout: Int = Self.timeout, _ body: (Serve, FaultProxy, _ table: String, _ direct: String) async throws -> Void
    ) async throws {
        let (runner, _) = try await CLIRunner.onDynamoDB()
        var cli = runner
        defer { cli.cleanUp() }
        let moto = try await SharedMotoServer.shared.server().endpoint
        let table = "dead-\(UUID().uuidString.prefix(12))"
        let direct = "dynamodb://us-east-1/\(table)?endpoint=\(moto.absoluteString)"
        #expect(try await cli.run("init", "--store", direct).status == 0)

        try await withServer(try await FaultProxy.start(upstream: moto, seed: 1, rates: [:])) { proxy in
            cli.environment["DISCFG_STORE"] = "dynamodb://us-east-1/\(table)?endpoint=\(proxy.endpoint.absoluteString)"
            let process = try cli.launch(
                [
                    "serve", "--port", "0", "--log-level", "error", "--etcd", "127.0.0.1:0", "--request-timeout", String(timeout),
                    // Every call goes to the store (no token check first), and the event
                    // loop takes plain PUTs and view reads (views are off by default on DynamoDB).
                    "--auth", "none", "--read-views", "on",
                ],
                stdout: .discard
            )
            do {
                let ports = try await process.waitForOutput(timeout: .seconds(60)) { output -> (Int, Int)? in
                    // "serving STORE on http://…": the store URL names the proxy's address first.
                    guard let rest = output.stderr.range(of: #" on http://127\.0\.0\.1:(\d+)"#, options: .regularExpression),
                          let etcd = output.stderr.range(of: #"etcd API over config etcd on 127\.0\.0\.1:(\d+)"#, options: .regularExpression),
                          let restPort = Int(output.stderr[rest].split(separator: ":").last ?? ""),
                          let etcdPort = Int(output.stderr[etcd].split(separator: ":").last ?? "")
                    else { return nil }
                    return (restPort, etcdPort)
                }
                try await body(Serve(cli: cli, server: process, restPort: ports.0, etcdPort: ports.1), proxy, table, direct)
            } catch {
                await process.stop()
                throw error
            }
            await process.stop()
        }
    }

    static func exercise(_ serve: Serve, proxy: FaultProxy, table: String, direct: String) async throws {
        // Alive: a config, a key read once (so the event loop's view holds it), an etcd key.
        #expect(try await serve.rest("create", "PUT", "/v1/app", body: "").0.status == "201")
        #expect(try await serve.rest("put", "PUT", "/v1/app/keys/a", body: "1").0.status == "201")
        #expect(try await serve.rest("get", "GET", "/v1/app/keys/a").1?.item?.value == "1")
        let put = try await serve.etcd("etcd put", "put", "e", "1").1
        #expect(put["code"] as? String == "OK")
        let revisionBefore = try await serve.rest("info", "GET", "/v1/app").1?.revision
        #expect(try await serve.probe("/health") == (200, #"{"health":"true"}"#))
        #expect(try await serve.probe("/readyz") == (200, "ok"))
        let etcdRevisionBefore = put["revision"] as? Int

        let words = internalWords(table: table, proxy: proxy.endpoint)
        var answers: [Answer] = []
        for mode in [FaultProxy.Mode.blackHole, .refuse] {
            try await proxy.set(mode)
            let died = ContinuousClock.now
            // The view answers from what it last knew only until its watch's reads fail
            // (each bounded by `watchReadTimeout`): then the key is the store's to answer.
            let viewed = try await eventually("\(mode): the view stops answering", timeout: .seconds(60), interval: .milliseconds(250)) {
                let answer = try await serve.rest("\(mode) REST GET of a viewed key", "GET", "/v1/app/keys/a").0
                return answer.status == "200" ? nil : answer
            }
            let stale = Serve.seconds(ContinuousClock.now - died)
            #expect(viewed.status == "503", "\(viewed)")
            // The poll's read and the watch's read, each bounded, and the answer's own bound.
            #expect(stale < 2 * Serve.seconds(watchReadTimeout) + 1 + bound, "the view answered for \(stale) s after the store died")
            answers.append(viewed)
            print("dead store: \(mode) a viewed key was answered from the view for at most \(String(format: "%.1f", stale)) s")
            var rest: [Answer] = []
            rest.append(try await serve.rest("\(mode) REST PUT (event loop)", "PUT", "/v1/app/keys/a", body: "2").0)
            rest.append(try await serve.rest("\(mode) REST GET of a key no view holds", "GET", "/v1/app/keys/b").0)
            rest.append(try await serve.rest("\(mode) REST list (router)", "GET", "/v1/app/keys").0)
            rest.append(try await serve.rest(
                "\(mode) REST txn (router)", "POST", "/v1/app/txn", body: #"{"success": [{"op": "put", "key": "/t", "value": "x"}]}"#
            ).0)
            // The etcd JSON gateway answers HTTP 503 too.
            rest.append(try await serve.gateway("\(mode) etcd gateway put", "put", key: "e", value: "2"))
            rest.append(try await serve.gateway("\(mode) etcd gateway range", "range", key: "e"))
            let etcd = [try await serve.etcd("\(mode) etcd Put", "put", "e", "2").0, try await serve.etcd("\(mode) etcd Range", "range", "e").0]
            for answer in rest {
                #expect(answer.status == "503", "\(answer)")
            }
            for answer in etcd {
                #expect(answer.status == "UNAVAILABLE", "\(answer)")
                #expect(answer.message.hasPrefix("etcdserver: "), "\(answer)")
            }
            for answer in rest + etcd {
                #expect(answer.seconds < bound, "\(answer)")
                for word in words { #expect(!answer.message.contains(word), "\"\(word)\" shown: \(answer)") }
                // The store's failure is told with a correlation id, under which the log
                // has the details; a request the deadline cut off says so, which is the
                // server's own word about it (nothing was changed).
                if let id = answer.correlationID {
                    #expect(answer.message.contains("the store is unavailable"), "\(answer)")
                    let log = serve.server.output.stderr
                    #expect(log.contains(id), "the log has correlation id \(id)")
                } else {
                    #expect(answer.message.contains("deadline") || answer.message.contains("abandoned"), "\(answer)")
                }
            }
            answers += rest + etcd
            // The etcd port's probes: unhealthy and not ready while the store is gone,
            // alive all the same, each within its 2 s bound.
            let start = ContinuousClock.now
            let health = try await serve.probe("/health")
            #expect(health.status == 503 && health.body.hasPrefix(#"{"health":"false","reason":"#), "\(mode): \(health)")
            #expect(try await serve.probe("/readyz").status == 503)
            #expect(try await serve.probe("/livez") == (200, "ok"))
            #expect(Serve.seconds(ContinuousClock.now - start) < 3 * bound, "\(mode): the probes took too long")
        }
        for answer in answers { print("dead store: \(answer)") }

        // Back: nothing the dead endpoint was asked for was carried out. The client's
        // connection pool may take a moment to reconnect.
        try await proxy.set(.pass)
        let info = try await eventually("the store answers again", timeout: .seconds(30), interval: .milliseconds(200)) {
            let info = try await serve.rest("info", "GET", "/v1/app")
            return info.0.status == "200" ? info : nil
        }
        #expect(info.1?.revision == revisionBefore, "\(info.0)")
        let range = try await serve.etcd("etcd range", "range", "e").1
        #expect(range["values"] as? [String] == ["1"])
        #expect(range["revision"] as? Int == etcdRevisionBefore)
        let stored = try await serve.cli.run("get", "app", "a", "--store", direct)
        #expect(stored.stdout == "1\n", "\(stored.stderr)")
        for key in ["t", "b"] {
            #expect(try await serve.cli.run("get", "app", key, "--store", direct).status != 0, "\(key) was never written")
        }
    }
}
