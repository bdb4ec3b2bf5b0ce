import AsyncHTTPClient
import DiscfgAPI
import DiscfgCore
import DiscfgTestSupport
import DiscfgWire
import Foundation
import NIOCore
import Testing

@Suite("API: request timeout")
struct RequestTimeoutTests {
    @Test("a request that outlives the timeout is abandoned with a 503 envelope; the next is served")
    func abandonsSlowRequest() async throws {
        // Every request of this server has the timeout, so it is long enough for the others
        // to be answered in time on a machine busy with other tests.
        try await withServer(try await LiveServer.start { $0.api.requestTimeout = .seconds(2) }) { server in
            #expect(try await server.put("/v1/c", "").status == 201)

            // A body that promises 10 bytes, sends 3 and then stalls past the timeout.
            let (parts, continuation) = AsyncStream.makeStream(of: ByteBuffer.self)
            continuation.yield(ByteBuffer(string: "abc"))
            var request = HTTPClientRequest(url: server.baseURL + "/v1/c/keys/slow")
            request.method = .PUT
            request.body = .stream(parts, length: .known(Int64(10)))
            // Its connection is not the next request's: what follows a body cut short is
            // another matter than the timeout.
            request.headers.add(name: "Connection", value: "close")
            let started = ContinuousClock.now
            // The client would give up only after a minute: an earlier answer is the server's.
            let response = try await server.client.execute(request, timeout: .seconds(60))
            let elapsed = ContinuousClock.now - started
            continuation.finish()
            let body = try await response.body.collect(upTo: 1024 * 1024)
            #expect(response.status.code == 503)
            let envelope = try JSONDecoder.discfg().decode(Envelope.self, from: Data(body.readableBytesView))
            #expect(envelope.action == "set")
            #expect(envelope.error?.code == .unavailable)
            #expect(envelope.error?.field == "timeout")
            #expect(elapsed >= .seconds(2))
            #expect(elapsed < .seconds(60), "answered by the server's timeout, not the client's")

            #expect(try await server.get("/v1/c/keys/slow").status == 404)
            #expect(try await server.put("/v1/c/keys/fast", "ok").status == 201)
        }
    }

    @Test("a write the store is slow to commit runs to its end and answers what it did, never 503 after committing")
    func slowCommitIsReportedTruthfully() async throws {
        // The timeout is long enough for the other requests to be answered in time on a
        // machine busy with other tests, and the lock is held well past it.
        try await withServer(try await LiveServer.start { $0.api.requestTimeout = .seconds(1) }) { server in
            #expect(try await server.put("/v1/c", "").status == 201)
            // Another process holds the file's write lock for three seconds, well past the timeout.
            let blocker = try ChildProcess.launch("python3", ["-c", """
            import sqlite3, sys, time
            c = sqlite3.connect(sys.argv[1], isolation_level=None)
            c.execute('BEGIN IMMEDIATE')
            print('locked', flush=True)
            time.sleep(3)
            c.execute('ROLLBACK')
            """, server.directory.appendingPathComponent("store.db").path], environment: ChildProcess.environment(inheriting: ChildProcess.pythonEnvironment))
            try await withServer(blocker) { blocker in
                _ = try await blocker.waitForOutput(timeout: .seconds(60)) { $0.stdout.contains("locked") ? true : nil }
                let started = ContinuousClock.now
                let reply = try await server.put("/v1/c/keys/slow", "committed")
                let elapsed = ContinuousClock.now - started
                _ = try await blocker.wait(timeout: .seconds(60))
                #expect(elapsed > .seconds(1), "the write did wait for the lock")
                #expect(reply.status == 201, "\(reply.status) \(reply.text)")
                #expect(try await server.get("/v1/c/keys/slow").envelope().item?.value == "committed")
            }
        }
    }
}
