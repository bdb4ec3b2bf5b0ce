import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `discfg agent` as a separate process over a SQLite file, and the CLI reading through it.
@Suite("CLI: agent")
struct AgentCommandTests {
    @Test("the CLI reads through the agent, a write is refused naming the store, a change arrives within an interval", .timeLimit(.minutes(2)))
    func readsThroughTheAgent() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("create", "demo").status == 0)
        #expect(try await cli.run("set", "demo", "/db/host", "db1").status == 0)
        let (agent, port) = try await cli.agent(["--cache-dir", cli.directory.appendingPathComponent("cache").path])

        var remote = cli
        remote.environment["DISCFG_STORE"] = "http://127.0.0.1:\(port)"
        #expect(try await remote.run("get", "demo", "/db/host").stdout == "db1\n")
        #expect(try await remote.run("ls", "demo", "-r", "-f", "json").envelope().items?.map(\.key) == ["/db/host"])
        let refused = try await remote.run("set", "demo", "/db/host", "x")
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("read-only"), "\(refused.stderr)")
        let notHeld = try await remote.run("get", "other", "/k")
        #expect(notHeld.status == 3)
        #expect(notHeld.stderr.contains("demo"), "names the configs it holds: \(notHeld.stderr)")

        #expect(try await cli.run("set", "demo", "/db/host", "db2").status == 0)
        try await eventually("the agent serves db2", timeout: .seconds(5), interval: .milliseconds(100)) {
            try await remote.run("get", "demo", "/db/host").stdout == "db2\n"
        }
        let exported = try await remote.run("exec", "demo", "--", "/bin/sh", "-c", "echo $DB_HOST")
        #expect(exported.stdout == "db2\n", "\(exported.stderr)")
        _ = await agent.kill(SIGTERM)

        // Started again over a store it cannot reach, it serves its last known good copy.
        var offline = cli
        offline.environment["DISCFG_STORE"] = "http://localhost:9"
        let (again, secondPort) = try await offline.agent(["--cache-dir", cli.directory.appendingPathComponent("cache").path])
        remote.environment["DISCFG_STORE"] = "http://127.0.0.1:\(secondPort)"
        let cached = try await remote.run("get", "demo", "/db/host")
        #expect(cached.stdout == "db2\n", "\(cached.stderr)")
        _ = await again.kill(SIGTERM)
    }

    @Test("a cache that fails its check is never served; --config twice is refused by other commands")
    func refusals() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let cache = cli.directory.appendingPathComponent("cache")
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
        try Data(#"{"format":"discfg-snapshot/1","config":"demo"}"#.utf8).write(to: cache.appendingPathComponent("demo.json"))
        var offline = cli
        offline.environment["DISCFG_STORE"] = "http://localhost:9"
        let started = try await offline.run("agent", "--config", "demo", "--port", "0", "--cache-dir", cache.path)
        #expect(started.status != 0, "no store and no good copy: nothing to serve")
        #expect(started.stderr.contains("demo"), "\(started.stderr)")
        #expect(try await cli.run("agent", "--port", "0").status == 2, "no --config")
        for interval in ["0", "-1", "9223372036854775808", "18446744073709551616"] {
            #expect(try await cli.run("agent", "--config", "demo", "--interval", interval).status == 2, "\(interval)")
        }
        let twice = try await cli.run("get", "k", "--config", "a", "--config", "b")
        #expect(twice.status == 2)
        #expect(twice.stderr.contains("--config"))
    }
}
