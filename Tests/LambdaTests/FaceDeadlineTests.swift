import AsyncHTTPClient
import DiscfgAPI
import DiscfgCore
import DiscfgEtcd
@testable import DiscfgLambda
import DiscfgService
import DiscfgSQLite
import DiscfgTestSupport
import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import Testing

/// Each face computes its request's deadline from its transport and hands it to the
/// pipeline, which alone applies it to the store step: the store sees it as
/// `Deadline.current` (the router's configured timeout, the event loop's, the Lambda
/// invocation's remaining time, the etcd client's `grpc-timeout` or the etcd API's own
/// timeout), and a write once begun runs to its end past it, never abandoned by the
/// face that cut its caller off.
///
/// The writes go to a ``SlowWriteStore``, which notes the deadline each saw and which
/// abandons a write cancelled while it is under way.
@Suite("Faces: each request's deadline reaches the store through the pipeline")
struct FaceDeadlineTests {
    /// The only write `store` began since it was reset, and how long it was allowed.
    static func allowed(_ store: SlowWriteStore, _ face: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Duration {
        let begun = store.begun
        #expect(begun.count == 1, "\(face): \(begun.count) writes", sourceLocation: sourceLocation)
        return try #require(begun.last?.allowed, "\(face): the store saw no deadline", sourceLocation: sourceLocation)
    }

    @Test("REST and the event loop: the configured timeout reaches the store", .timeLimit(.minutes(2)))
    func rest() async throws {
        var held: SlowWriteStore?
        let server = try await LiveServer.start { $0.api.requestTimeout = .seconds(30) } serving: { base in
            let store = SlowWriteStore(base)
            held = store
            return store
        }
        let store = try #require(held)
        try await withServer(server) { server in
            #expect(try await server.put("/v1/c", "").status == 201)

            // The router: the timeout, and one tick of its ticker (a tenth of it, at most
            // a second) so that its own answer comes first.
            store.reset()
            #expect(try await server.put("/v1/c/keys/routed", "v", headers: [("Connection", "keep-alive")]).status == 201)
            let routed = try Self.allowed(store, "router")
            #expect(routed > .milliseconds(30_500) && routed <= .seconds(31), "router: \(routed)")

            // The event loop's PUT: the timeout itself.
            store.reset()
            let before = try await FaceMatrixTests.counter(server, "discfg_event_loop_writes_total")
            #expect(try await FaceMatrixTests.putWhole(server, "/v1/c/keys/fast", "v", headers: []).status == 201)
            #expect(try await FaceMatrixTests.counter(server, "discfg_event_loop_writes_total") == before + 1, "the event loop took the PUT")
            let fast = try Self.allowed(store, "event loop")
            #expect(fast > .milliseconds(29_500) && fast <= .seconds(30), "event loop: \(fast)")
        }
    }

    @Test("REST: a write the store takes past the request timeout to make is not abandoned; it answers what it did", .timeLimit(.minutes(2)))
    func restWriteBegun() async throws {
        var held: SlowWriteStore?
        let server = try await LiveServer.start { $0.api.requestTimeout = .milliseconds(300) } serving: { base in
            let store = SlowWriteStore(base, delay: .milliseconds(900))
            held = store
            return store
        }
        let store = try #require(held)
        try await withServer(server) { server in
            #expect(try await server.put("/v1/c", "").status == 201)
            let reply = try await server.put("/v1/c/keys/slow", "committed", headers: [("Connection", "keep-alive")])
            #expect(reply.status == 201, "\(reply.status) \(reply.text)")
            #expect(store.abandoned == 0)
            #expect(try await server.get("/v1/c/keys/slow").envelope().item?.value == "committed")
        }
    }

    @Test("Lambda: the invocation's remaining time reaches the store; a write begun when the function must answer still ends", .timeLimit(.minutes(2)))
    func lambda() async throws {
        let config = try ConfigName("c")
        var logger = Logger(label: "face-deadline-lambda")
        logger.logLevel = .critical
        let memory = MemoryStore()
        _ = try await memory.createConfig(config, settings: ConfigSettings())
        func put(_ store: SlowWriteStore, _ key: String, by deadline: ContinuousClock.Instant) async -> (status: Int, body: Data) {
            let handler = LambdaHTTPHandler(store: store, access: LambdaAccess(modes: []), options: ConfigAPI.Options())
            let request = GatewayRequest(method: "PUT", path: "/v1/\(config)/keys/\(key)", query: "", headers: [], body: Data("v".utf8), principal: nil)
            let response = await handler.handle(request, deadline: deadline, logger: logger)
            return (response.status, response.body)
        }

        // Ten seconds left, less the margin the function answers by, and one tick of the
        // router's ticker (a second, for its 30 s timeout).
        let quick = SlowWriteStore(memory)
        #expect(await put(quick, "quick", by: .now + .seconds(10)).status == 201)
        let allowed = try Self.allowed(quick, "Lambda")
        #expect(allowed > .seconds(10) && allowed <= .milliseconds(10_500), "Lambda: \(allowed)")

        // A write that outlasts the invocation: answered in time, and not abandoned.
        let slow = SlowWriteStore(memory, delay: .milliseconds(1500))
        let answer = await put(slow, "slow", by: .now + .seconds(1))
        #expect(answer.status == 503 && String(decoding: answer.body, as: UTF8.self).contains("may or may not"), "\(answer.status)")
        let written = try await eventually("the write outlasting the invocation ends", timeout: .seconds(10)) {
            try await memory.get(try Key("/slow"), in: config) != nil ? true : nil
        }
        #expect(written && slow.abandoned == 0)
    }

    @Test("etcd gRPC and its gateway: the client's grpc-timeout, else the API's own, reaches the store; a put past grpc-timeout still ends", .timeLimit(.minutes(2)))
    func etcd() async throws {
        let config = try ConfigName("face-deadline-etcd")
        let memory = MemoryStore()
        let store = SlowWriteStore(memory)
        try await Self.withEtcd(store, config: config) { port in
            let etcdctl = { (arguments: [String]) in
                try await ChildProcess.run(
                    "etcdctl", ["--endpoints=127.0.0.1:\(port)", "--dial-timeout=20s"] + arguments,
                    environment: ChildProcess.environment(["ETCDCTL_API": "3"]), timeout: .seconds(60)
                )
            }
            // gRPC: the client's grpc-timeout, earlier than the API's 30 s.
            store.reset()
            let put = try await etcdctl(["--command-timeout=7s", "put", "k", "v"])
            #expect(put.termination == .exited(0), "\(put.stderr)")
            let grpc = try Self.allowed(store, "etcd gRPC")
            #expect(grpc > .seconds(6) && grpc <= .seconds(7), "etcd gRPC: \(grpc)")

            // The JSON gateway: no grpc-timeout, the API's own.
            store.reset()
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v3/kv/put")
            request.method = .POST
            request.body = .bytes(ByteBuffer(string: #"{"key": "Zw==", "value": "dg=="}"#))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            #expect(response.status == .ok)
            let gateway = try Self.allowed(store, "etcd gateway")
            #expect(gateway > .milliseconds(29_500) && gateway <= .seconds(30), "etcd gateway: \(gateway)")
        }

        // A put that outlasts the client's grpc-timeout: the client is told DEADLINE_EXCEEDED,
        // the put is not abandoned.
        let fresh = MemoryStore()
        let slow = SlowWriteStore(fresh, delay: .milliseconds(1500))
        try await Self.withEtcd(slow, config: config) { port in
            let put = try await ChildProcess.run(
                "etcdctl", ["--endpoints=127.0.0.1:\(port)", "--dial-timeout=20s", "--command-timeout=500ms", "put", "late", "v"],
                environment: ChildProcess.environment(["ETCDCTL_API": "3"]), timeout: .seconds(60)
            )
            #expect(put.termination != .exited(0), "the client gave up: \(put.stdout)")
            let written = try await eventually("the put outlasting its grpc-timeout ends", timeout: .seconds(10)) {
                try await Self.etcdKeys(in: fresh, config) == 1 ? true : nil
            }
            #expect(written && slow.abandoned == 0)

            // The gateway: a client that goes away once its put has begun does not abandon it.
            slow.reset()
            let connection = try LoopbackHTTP(port: port)
            let body = Data(#"{"key": "Z29uZQ==", "value": "dg=="}"#.utf8)
            try connection.send(Data("POST /v3/kv/put HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
            _ = try await eventually("the gateway's put begins", timeout: .seconds(10)) { slow.begun.isEmpty ? nil : true }
            connection.close()
            let kept = try await eventually("the gateway's put ends though its client left", timeout: .seconds(10)) {
                try await Self.etcdKeys(in: fresh, config) == 2 ? true : nil
            }
            #expect(kept && slow.abandoned == 0)
        }
    }

    /// How many keys of `config` are etcd's: all but the one the etcd API writes to
    /// start a config at revision 1.
    static func etcdKeys(in store: MemoryStore, _ config: ConfigName) async throws -> Int {
        try await store.list(in: config, ListQuery()).items.filter { $0.key != EtcdBackend.revisionOneKey }.count
    }

    /// Runs `body` with the etcd API serving `config` of `store` in this process, open
    /// to anyone on loopback, on a port of its own.
    static func withEtcd(_ store: any ConfigStore, config: ConfigName, _ body: (Int) async throws -> Void) async throws {
        let (port, group, task) = try await InProcessEtcd.listen(store, config: config, label: "face-deadline-etcd")
        do {
            try await body(port)
        } catch {
            await group.triggerGracefulShutdown()
            _ = try? await task.value
            throw error
        }
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }
}
