import AsyncHTTPClient
@testable import DiscfgAPI
import DiscfgCore
import DiscfgTestSupport
import Foundation
import NIOCore
import Testing

/// A watch outlives the request that admitted it, so its caller is asked again while it
/// runs: a revoked token ends its stream and its long poll, and an anonymous stream ends
/// once the server starts requiring tokens. A token still valid keeps its stream.
@Suite("API: a watch ends when its caller's admission does")
struct RevokedWatchTests {
    /// What a watch's stream said before it ended (or `seconds` passed), and when.
    struct Ended {
        var text: String
        var seconds: Double
        var ended: Bool
    }

    /// Opens an SSE watch of config `app` with `headers`, runs `meanwhile` once the stream
    /// has begun, and reads until the stream ends or `limit` passes.
    static func stream(_ server: LiveServer, headers: [(String, String)], limit: Duration = .seconds(15), meanwhile: () async throws -> Void) async throws -> Ended {
        var request = HTTPClientRequest(url: server.baseURL + "/v1/app/watch?heartbeat=1")
        request.headers.add(name: "Accept", value: "text/event-stream")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await server.client.execute(request, timeout: .seconds(30))
        #expect(response.status.code == 200)
        var text = ""
        var started: ContinuousClock.Instant?
        let deadline = ContinuousClock.now + limit
        var iterator = response.body.makeAsyncIterator()
        while ContinuousClock.now < deadline {
            guard let buffer = try await iterator.next() else {
                return Ended(text: text, seconds: started.map { Double((ContinuousClock.now - $0).components.seconds) } ?? 0, ended: true)
            }
            text += String(buffer: buffer)
            if started == nil, text.contains(": watching") {
                try await meanwhile()
                started = .now
            }
        }
        return Ended(text: text, seconds: Double(limit.components.seconds), ended: false)
    }

    static func issue(_ server: LiveServer, role: Role = .read) async throws -> (token: String, id: String) {
        let (token, record) = try TokenFormat.generate(role: role, configs: nil, description: "watcher", now: Date())
        try await server.store.saveToken(record)
        return (token, record.id)
    }

    @Test("a revoked token's SSE stream ends with an unauthenticated error event")
    func revokedStream() async throws {
        try await withServer(try await LiveServer.start(auth: .required)) { server in
            let admin = try await Self.issue(server, role: .admin)
            #expect(try await server.put("/v1/app", "", headers: [("Authorization", "Bearer \(admin.token)")]).status == 201)
            let watcher = try await Self.issue(server)
            let ended = try await Self.stream(server, headers: [("Authorization", "Bearer \(watcher.token)")]) {
                try await server.store.revokeToken(id: watcher.id)
            }
            #expect(ended.ended, "the stream went on after its token was revoked: \(ended.text)")
            #expect(ended.text.contains("event: error"))
            #expect(ended.text.contains("\"unauthenticated\""))
            #expect(ended.text.contains("revoked"))
            #expect(!ended.text.contains(watcher.token), "the token is never echoed")
        }
    }

    @Test("a valid token's stream goes on, heartbeat after heartbeat")
    func validStream() async throws {
        try await withServer(try await LiveServer.start(auth: .required)) { server in
            let admin = try await Self.issue(server, role: .admin)
            #expect(try await server.put("/v1/app", "", headers: [("Authorization", "Bearer \(admin.token)")]).status == 201)
            let watcher = try await Self.issue(server)
            let ongoing = try await Self.stream(server, headers: [("Authorization", "Bearer \(watcher.token)")], limit: .seconds(5)) {}
            #expect(!ongoing.ended)
            #expect(!ongoing.text.contains("event: error"))
            #expect(ongoing.text.components(separatedBy: ": heartbeat").count >= 3)
        }
    }

    @Test("an anonymous stream ends once the server requires tokens (auto mode's first token)")
    func anonymousStreamOnceTokensExist() async throws {
        try await withServer(try await LiveServer.start(auth: .onceTokensExist)) { server in
            #expect(try await server.put("/v1/app", "").status == 201)
            let ended = try await Self.stream(server, headers: []) {
                _ = try await Self.issue(server)
            }
            #expect(ended.ended, "the anonymous stream went on: \(ended.text)")
            #expect(ended.text.contains("\"unauthenticated\""))
            #expect(ended.text.contains("now needs a bearer token"))
        }
    }

    @Test("a revoked token's long poll is answered 401 before its timeout")
    func revokedLongPoll() async throws {
        try await withServer(try await LiveServer.start(auth: .required)) { server in
            let admin = try await Self.issue(server, role: .admin)
            #expect(try await server.put("/v1/app", "", headers: [("Authorization", "Bearer \(admin.token)")]).status == 201)
            let watcher = try await Self.issue(server)
            let start = ContinuousClock.now
            async let poll = server.get("/v1/app/watch?timeout=60", headers: [("Authorization", "Bearer \(watcher.token)")])
            try await Task.sleep(for: .milliseconds(300))
            try await server.store.revokeToken(id: watcher.id)
            let answer = try await poll
            #expect(answer.status == 401)
            #expect(try answer.envelope().error?.code == .unauthenticated)
            #expect(ContinuousClock.now - start < .seconds(30), "answered at the revocation, not at the poll's timeout")
        }
    }
}
