import DiscfgTestSupport
import Foundation
import Testing

/// `discfg agent --port` and `--interval` attacked with values out of range, too large for
/// any integer, or no number at all: each refused with exit 2 naming the flag, nothing
/// served; a port another process holds is one clear start failure naming the port.
@Suite("CLI: agent settings")
struct AgentSettingsTests {
    static let badPorts = ["-1", "65536", "9223372036854775808", "18446744073709551616", "abc", "0x10", "80.5", "１２"]
    static let badIntervals = ["0", "-1", "9223372036854775808", "18446744073709551616", "9223372036854775807ms", "soon", "999ms", "25h", "1.5s", "s", "ms"]

    @Test("--port out of range or not a number: exit 2 naming --port", arguments: badPorts)
    func badPort(_ port: String) async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let result = try await cli.run("agent", "--config", "demo", "--port=\(port)")
        #expect(result.status == 2, "\(port): \(result.stderr)")
        #expect(result.stderr.contains("--port must be a whole number from 0 to 65535"), "\(port): \(result.stderr)")
    }

    @Test("--interval zero, negative, past 24h, past Int64 or not a duration: exit 2 naming --interval and its bounds", arguments: badIntervals)
    func badInterval(_ interval: String) async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let result = try await cli.run("agent", "--config", "demo", "--interval=\(interval)")
        #expect(result.status == 2, "\(interval): \(result.stderr)")
        #expect(result.stderr.contains("--interval must be a duration from 1s to 24h"), "\(interval): \(result.stderr)")
    }

    @Test("a port another process serves on: exit 1 naming 127.0.0.1:PORT and --port, no crash; --port 0 announces the port it bound")
    func portInUse() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("create", "demo").status == 0)
        let (first, port) = try await cli.agent(["--interval", "2m"])
        defer { Task { await first.kill() } }
        #expect(port > 0)
        let second = try await cli.run("agent", "--config", "demo", "--port", String(port))
        #expect(second.status == 1, "\(second.stderr)")
        #expect(second.stderr.contains("cannot serve on 127.0.0.1:\(port): the port is in use"), "\(second.stderr)")
        #expect(second.stderr.contains("--port"), "\(second.stderr)")
        #expect(!second.stderr.contains("errno"), "\(second.stderr)")
        _ = await first.kill(SIGTERM)
    }
}
