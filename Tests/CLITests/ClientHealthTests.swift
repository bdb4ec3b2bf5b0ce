import DiscfgClient
import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// The Swift client's error counter per version, against a real `discfg serve`: an
/// application reads `/app/a` during a 50 % deployment of `/app/` and tells its
/// ``RemoteConfig`` how its requests went; the client counts them against the version its
/// entity sees and posts them to serve, which passes them to the store each monitor
/// interval, where `GET /v1/demo/deployments/{id}/health` adds them up.
@Suite("CLI: the Swift client reports requests and errors per version of a deployment")
struct ClientHealthTests {
    /// `demo` with `/app/a` and `/other/b`, a 50 % deployment of `/app/` that rolls back on
    /// health (one step an hour), and serve with a one-second monitor.
    static func setUp(_ cli: CLIRunner) async throws -> (server: ChildProcess, port: Int, deployment: Deployment) {
        for arguments in [["create", "demo"], ["set", "demo", "/app/a", "1"], ["set", "demo", "/other/b", "x"]] {
            let result = try await cli.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        _ = try cli.write("candidate.json", Data(#"{"/app/a": "2"}"#.utf8))
        let started = try await cli.run(
            "deploy", "start", "demo", "--prefix", "/app/", "-d", "candidate.json", "--strategy", "linear", "--step", "50", "--interval", "1h",
            "--bake", "0s", "--rollback-on", "health", "-m", "two"
        )
        #expect(started.status == 0, "\(started.stderr)")
        let status = try await cli.run("deploy", "status", "demo", "-f", "json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let deployment = try JSONDecoder().decode(Deployment.self, from: try JSONSerialization.data(withJSONObject: try #require(object["deployment"])))
        let (server, port) = try await cli.serve(["--monitor-interval", "1"])
        return (server, port, deployment)
    }

    /// The first of `user-0`, `user-1`, … that reads `version` of `deployment` now.
    static func entity(reading version: String, of deployment: Deployment) -> String {
        let now = SystemClock().now().milliseconds
        let candidate = version == "candidate"
        return (0...).lazy.map { "user-\($0)" }.first { deployment.seesCandidate(entity: $0, at: now) == candidate }!
    }

    /// The `health` document serve answers for the deployment.
    static func health(_ port: Int, _ id: String) async throws -> [String: Any] {
        let reply = try await LoopbackHTTP.exchange(port: port, "GET /v1/demo/deployments/\(id)/health", body: Data())
        guard let body = reply.range(of: "\r\n\r\n").map({ reply[$0.upperBound...] }),
              let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] else { return [:] }
        return object["health"] as? [String: Any] ?? [:]
    }

    static func counts(_ health: [String: Any], _ version: String) -> (requests: Int, errors: Int) {
        let counts = health[version] as? [String: Any] ?? [:]
        return (counts["requests"] as? Int ?? 0, counts["errors"] as? Int ?? 0)
    }

    @Test("20 requests 5 failed on the candidate, 20 without failure on stable: serve's health shows each on its version, flushed or sent by the interval; a deployment of keys not read is not charged; bad counts are refused")
    func countsPerVersion() async throws {
        let cli = try CLIRunner()
        let (server, port, deployment) = try await Self.setUp(cli)
        defer { Task { await server.kill() } }
        let client = try ConfigClient(url: URL(string: "http://127.0.0.1:\(port)")!)
        let onCandidate = Self.entity(reading: "candidate", of: deployment)
        let onStable = Self.entity(reading: "stable", of: deployment)

        // Reads only /other/b: the deployment of /app/ is not charged with its requests.
        let elsewhere = try await client.config("demo", entity: onCandidate, healthInterval: .seconds(3600))
        #expect(try await elsewhere.string("/other/b") == "x")
        try elsewhere.recordRequests(7, failed: 7)
        try await elsewhere.flushHealth()

        // Sent on an explicit flush.
        let candidate = try await client.config("demo", entity: onCandidate, healthInterval: .seconds(3600))
        #expect(try await candidate.string("/app/a") == "2")
        for failed in [false, true, false, false] { candidate.recordRequest(failed: failed) }
        try candidate.recordRequests(16, failed: 4)
        #expect(throws: DiscfgError.self) { try candidate.recordRequests(-1, failed: 0) }
        #expect(throws: DiscfgError.self) { try candidate.recordRequests(3, failed: -1) }
        #expect(throws: DiscfgError.self) { try candidate.recordRequests(3, failed: 4) }
        // Requests served as another entity read (item(_:as:)) count on that entity's version.
        try candidate.recordRequests(5, failed: 0, as: onStable)
        try await candidate.flushHealth()

        // Sent by itself, every 200 ms.
        await #expect(throws: DiscfgError.self) { try await client.config("demo", entity: onStable, healthInterval: .zero) }
        let stable = try await client.config("demo", entity: onStable, healthInterval: .milliseconds(200))
        #expect(try await stable.string("/app/a") == "1")
        try stable.recordRequests(15, failed: 0)

        let health = try await eventually("serve's health shows both versions' counts", timeout: .seconds(30), interval: .milliseconds(200)) {
            let health = try await Self.health(port, deployment.id)
            return Self.counts(health, "candidate").requests >= 20 && Self.counts(health, "stable").requests >= 20 ? health : nil
        }
        #expect(Self.counts(health, "candidate") == (20, 5), "\(health)")
        #expect(Self.counts(health, "stable") == (20, 0), "\(health)")
    }

    @Test("after the deployment ended, counts are dropped without an error; while serve is down they are kept and the flush says so")
    func endedAndUnreachable() async throws {
        let cli = try CLIRunner()
        let (server, port, deployment) = try await Self.setUp(cli)
        var serverRunning = true
        defer { if serverRunning { Task { await server.kill() } } }
        let client = try ConfigClient(url: URL(string: "http://127.0.0.1:\(port)")!)
        // Not following, with a long max age: both keep seeing the deployment they read.
        let ended = try await client.config("demo", maxAge: .seconds(3600), entity: Self.entity(reading: "candidate", of: deployment), healthInterval: .seconds(3600))
        let kept = try await client.config("demo", maxAge: .seconds(3600), entity: Self.entity(reading: "stable", of: deployment), healthInterval: .seconds(3600))
        #expect(try await ended.string("/app/a") == "2")
        #expect(try await kept.string("/app/a") == "1")

        let rolledBack = try await cli.run("deploy", "rollback", "demo", "-m", "stop")
        #expect(rolledBack.status == 0, "\(rolledBack.stderr)")
        let observation = Data(#"{"deployment": "\#(deployment.id)", "version": "candidate", "requests": 1}"#.utf8)
        try await eventually("serve refuses health for the ended deployment", timeout: .seconds(30), interval: .milliseconds(200)) {
            let reply = try await LoopbackHTTP.exchange(port: port, "POST /v1/demo/health", body: observation, headers: ["Content-Type: application/json"])
            return reply.hasPrefix("HTTP/1.1 404")
        }
        ended.recordRequest(failed: true)
        try ended.recordRequests(10, failed: 2)
        try await ended.flushHealth()

        await server.kill()
        serverRunning = false
        // Nothing was kept for the ended deployment: no request, so no failure.
        try await ended.flushHealth()
        kept.recordRequest(failed: false)
        for _ in 0..<2 {
            await #expect(throws: DiscfgError.self, "serve is down: the counts stay for the next try") { try await kept.flushHealth() }
        }
    }

    @Test("counts past one report's bound (2^40) are sent as several reports, none losing a request")
    func largeCounts() async throws {
        let cli = try CLIRunner()
        let (server, port, deployment) = try await Self.setUp(cli)
        defer { Task { await server.kill() } }
        let client = try ConfigClient(url: URL(string: "http://127.0.0.1:\(port)")!)
        let config = try await client.config("demo", entity: Self.entity(reading: "candidate", of: deployment), healthInterval: .seconds(3600))
        #expect(try await config.string("/app/a") == "2")
        let most = Int(HealthObservation.maxCount)
        #expect(throws: DiscfgError.self) { try config.recordRequests(most + 1, failed: 0) }
        try config.recordRequests(most, failed: 0)
        try config.recordRequests(most, failed: 0)
        config.recordRequest(failed: true)
        try await config.flushHealth()
        let health = try await eventually("serve's health shows the counts", timeout: .seconds(30), interval: .milliseconds(200)) {
            let health = try await Self.health(port, deployment.id)
            return Self.counts(health, "candidate").requests > 0 ? health : nil
        }
        #expect(Self.counts(health, "candidate") == (2 * most + 1, 1), "\(health)")
    }
}
