import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `discfg serve` moves deployments along by itself: its monitor records COMPLETE when the
/// schedule ends, which makes the candidate live for every reader, and rolls a deployment
/// back when its health URL fails; `--monitor-interval 0` runs none.
@Suite("CLI: serve's deployment monitor")
struct ServeMonitorTests {
    static func runner() async throws -> CLIRunner {
        let cli = try CLIRunner()
        for arguments in [["create", "app"], ["set", "app", "/db/host", "db1"]] {
            let result = try await cli.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        _ = try cli.write("candidate.json", Data(#"{"/db/host": "db2"}"#.utf8))
        return cli
    }

    static func start(_ cli: CLIRunner, _ extra: [String] = []) async throws {
        let started = try await cli.run(
            ["deploy", "start", "app", "--prefix", "/db/", "-d", "candidate.json", "--strategy", "linear", "--step", "100", "--interval", "1s", "--bake", "0s", "-m", "db2"] + extra
        )
        #expect(started.status == 0, "\(started.stderr)")
    }

    /// The deployment's transitions as the server lists them (a read that records nothing,
    /// unlike `deploy status`, which settles what the clock has decided).
    static func transitions(_ port: Int) async throws -> [[String: Any]] {
        let reply = try await LoopbackHTTP.exchange(port: port, "GET /v1/app/deployments", body: Data())
        guard let body = reply.range(of: "\r\n\r\n").map({ reply[$0.upperBound...] }),
              let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] else { return [] }
        return ((object["deployments"] as? [[String: Any]])?.first?["transitions"] as? [[String: Any]]) ?? []
    }

    @Test("serve records COMPLETE once the schedule ends: the live key becomes the candidate, attributed to the monitor")
    func completes() async throws {
        let cli = try await Self.runner()
        let (server, port) = try await cli.serve(["--monitor-interval", "1"])
        defer { Task { await server.kill() } }
        try await Self.start(cli)
        let value = try await eventually("the monitor makes the candidate live", timeout: .seconds(30), interval: .milliseconds(200)) {
            let reply = try await LoopbackHTTP.exchange(port: port, "GET /v1/app/keys/db/host?raw", body: Data())
            return reply.hasSuffix("\r\n\r\ndb2") ? "db2" : nil
        }
        #expect(value == "db2")
        let recorded = try await eventually("COMPLETE is recorded", timeout: .seconds(30), interval: .milliseconds(200)) {
            let transitions = try await Self.transitions(port)
            return transitions.last?["state"] as? String == "COMPLETE" ? transitions : nil
        }
        #expect(recorded.last?["by"] as? String == "system:monitor")
        #expect(try await cli.run("get", "app", "/db/host").stdout.contains("db2"))
    }

    @Test("a failing health URL rolls the deployment back; the live key never changes")
    func rollsBack() async throws {
        try await withServer(try await SignalPeer.start()) { peer in
            let cli = try await Self.runner()
            let (server, port) = try await cli.serve(["--monitor-interval", "1"])
            defer { Task { await server.kill() } }
            let started = try await cli.run(
                "deploy", "start", "app", "--prefix", "/db/", "-d", "candidate.json", "--strategy", "linear", "--step", "10", "--interval", "1h", "--bake", "0s",
                "--rollback-on", "http:\(peer.base)/status/503", "-m", "db2"
            )
            #expect(started.status == 0, "\(started.stderr)")
            let recorded = try await eventually("the monitor rolls back", timeout: .seconds(30), interval: .milliseconds(200)) {
                let transitions = try await Self.transitions(port)
                return transitions.contains { $0["state"] as? String == "ROLLED_BACK" } ? transitions : nil
            }
            #expect(recorded.first?["state"] as? String == "ROLLING_BACK" && (recorded.first?["reason"] as? String)?.contains("503") == true, "\(recorded)")
            #expect(recorded.allSatisfy { $0["by"] as? String == "system:monitor" })
            #expect(try await cli.run("get", "app", "/db/host").stdout.contains("db1"))
        }
    }
}
