import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// Health that readers see, end to end: an application reads `/app/a` through an agent
/// that follows `discfg serve`, and after each read reports how its requests went against
/// the version it was given (`POST /v1/demo/health` to the agent). The agent passes its
/// counts to serve each interval, serve to the store, and serve's monitor runs the
/// sequential test on them: errors only on the candidate roll the deployment back by
/// itself; equal error rates let it complete.
@Suite("CLI: health-driven rollback through an agent and serve's monitor")
struct HealthRollbackTests {
    /// `demo` with `/app/a` = 1, served with a one-second monitor, and an agent following the server.
    static func setUp(_ cli: CLIRunner) async throws -> (server: ChildProcess, serverPort: Int, agent: ChildProcess, agentPort: Int) {
        for arguments in [["create", "demo"], ["set", "demo", "/app/a", "1"]] {
            let result = try await cli.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        _ = try cli.write("candidate.json", Data(#"{"/app/a": "2"}"#.utf8))
        let (server, serverPort) = try await cli.serve(["--monitor-interval", "1"])
        do {
            let (agent, agentPort) = try await cli.agent(["--store", "http://127.0.0.1:\(serverPort)"])
            return (server, serverPort, agent, agentPort)
        } catch {
            await server.kill()
            throw error
        }
    }

    static func start(_ cli: CLIRunner, interval: String) async throws {
        let started = try await cli.run(
            "deploy", "start", "demo", "--prefix", "/app/", "-d", "candidate.json", "--strategy", "linear", "--step", "50", "--interval", interval,
            "--bake", "0s", "--rollback-on", "health", "-m", "two"
        )
        #expect(started.status == 0, "\(started.stderr)")
    }

    /// One round of the application: each user reads `/app/a` through the agent and
    /// reports 10 requests, `errors(version)` of them failed, against the version it read.
    /// Returns the versions read, by user.
    @discardableResult
    static func round(agentPort: Int, users: Int = 20, errors: (String) -> Int) async throws -> [String: String] {
        var versions: [String: String] = [:]
        for user in 0..<users {
            let reply = try await LoopbackHTTP.exchange(port: agentPort, "GET /v1/demo/keys/app/a?raw", body: Data(), headers: ["Discfg-Entity: user-\(user)"])
            guard let header = reply.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("discfg-deployment:") }),
                  let version = header.split(separator: ";").last?.trimmingCharacters(in: .whitespaces) else { continue }
            versions["user-\(user)"] = version
            let body = #"{"version": "\#(version)", "requests": 10, "errors": \#(errors(version))}"#
            let posted = try await LoopbackHTTP.exchange(port: agentPort, "POST /v1/demo/health", body: Data(body.utf8), headers: ["Content-Type: application/json"])
            #expect(posted.hasPrefix("HTTP/1.1 202"), "\(posted)")
        }
        return versions
    }

    /// The JSON object serve answers `GET path` with.
    static func json(_ port: Int, _ path: String) async throws -> [String: Any] {
        let reply = try await LoopbackHTTP.exchange(port: port, "GET \(path)", body: Data())
        guard let body = reply.range(of: "\r\n\r\n").map({ reply[$0.upperBound...] }),
              let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] else { return [:] }
        return object
    }

    /// The first deployment's record as serve lists it.
    static func deployment(_ port: Int) async throws -> [String: Any] {
        (try await json(port, "/v1/demo/deployments")["deployments"] as? [[String: Any]])?.first ?? [:]
    }

    /// The deployment's health reports added up.
    static func health(_ port: Int, _ id: String) async throws -> [String: Any] {
        try await json(port, "/v1/demo/deployments/\(id)/health")["health"] as? [String: Any] ?? [:]
    }

    @Test("errors only on the candidate: the monitor rolls the deployment back by itself, naming the health test; the live key never changed")
    func rollsBack() async throws {
        let cli = try CLIRunner()
        let (server, serverPort, agent, agentPort) = try await Self.setUp(cli)
        defer { Task { await agent.kill(); await server.kill() } }
        try await Self.start(cli, interval: "1h")
        // The agent sees the deployment within its interval; a 50 % share gives both versions among 20 users.
        _ = try await eventually("the agent serves both versions", timeout: .seconds(30), interval: .milliseconds(200)) {
            let versions = try await Self.round(agentPort: agentPort) { $0 == "candidate" ? 3 : 0 }
            return Set(versions.values) == ["candidate", "stable"] ? versions : nil
        }
        let transitions = try await eventually("the monitor rolls back on health", timeout: .seconds(60), interval: .milliseconds(300)) {
            let transitions = try await Self.deployment(serverPort)["transitions"] as? [[String: Any]] ?? []
            if transitions.contains(where: { $0["state"] as? String == "ROLLING_BACK" }) { return transitions }
            try await Self.round(agentPort: agentPort) { $0 == "candidate" ? 3 : 0 }
            return nil
        }
        let rollback = try #require(transitions.first { $0["state"] as? String == "ROLLING_BACK" })
        #expect(rollback["by"] as? String == "system:monitor")
        #expect((rollback["reason"] as? String)?.contains("signal health") == true, "\(rollback)")
        #expect((rollback["reason"] as? String)?.contains("significantly more often") == true, "\(rollback)")
        #expect(try await cli.run("get", "demo", "/app/a").stdout.contains("1"))
    }

    @Test("equal error rates on both versions: the deployment completes; the reports reached the store, readers and all")
    func completes() async throws {
        let cli = try CLIRunner()
        let (server, serverPort, agent, agentPort) = try await Self.setUp(cli)
        defer { Task { await agent.kill(); await server.kill() } }
        try await Self.start(cli, interval: "6s")
        let id = try #require(try await Self.deployment(serverPort)["id"] as? String)
        let transitions = try await eventually("the deployment completes", timeout: .seconds(60), interval: .milliseconds(300)) {
            let deployment = try await Self.deployment(serverPort)
            let transitions = deployment["transitions"] as? [[String: Any]] ?? []
            if transitions.contains(where: { $0["state"] as? String == "COMPLETE" }) { return transitions }
            // Once the share is 100 % every user reads the candidate: keep the rate equal.
            try await Self.round(agentPort: agentPort) { _ in 1 }
            return nil
        }
        #expect(!transitions.contains { $0["state"] as? String == "ROLLING_BACK" }, "\(transitions)")
        #expect(try await cli.run("get", "demo", "/app/a").stdout.contains("2"))
        let health = try await Self.health(serverPort, id)
        let candidate = health["candidate"] as? [String: Any] ?? [:]
        let stable = health["stable"] as? [String: Any] ?? [:]
        #expect((health["reporters"] as? Int ?? 0) >= 1, "the agent's reports reached the store while the deployment ran: \(health)")
        #expect((candidate["requests"] as? Int ?? 0) > 0 && (stable["requests"] as? Int ?? 0) > 0, "\(health)")
        #expect((candidate["readers"] as? Int ?? 0) > 0 && (stable["readers"] as? Int ?? 0) > 0, "the agent counted the readers of each version: \(health)")
        #expect(health["decision"] as? String != "rollback", "\(health)")
    }
}
