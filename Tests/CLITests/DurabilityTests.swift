import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// An acknowledged write survives the writer being killed at any moment.
@Suite("CLI: durability")
struct DurabilityTests {
    @Test("SIGKILL during a stream of sets: every acknowledged value is stored, the file is intact")
    func killedWriter() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "crash")
        // A shell loop acknowledges each value only after `discfg set` returned.
        let script = "for i in $(seq 1 100000); do \"$DISCFG\" set crash counter $i -f silent || exit 1; echo $i; done"
        let output = try await withServer(try cli.launchShell(script, stderr: .discard)) { loop in
            // Let it write for a while, then kill the shell and whichever `discfg set` runs:
            // the loop has a process group of its own.
            _ = try await loop.waitForOutput(timeout: .seconds(120)) { $0.stdoutLines.count >= 10 ? true : nil }
            await loop.kill(SIGKILL)
            // Standard output ends once every process of the group has died.
            return try await loop.wait(timeout: .seconds(60))
        }

        let acknowledged = output.stdoutLines.compactMap { Int($0) }.max() ?? 0
        #expect(acknowledged > 0, "the loop acknowledged no write before it was killed")
        let stored = try await cli.run("get", "crash", "counter")
        #expect(stored.status == 0, "stderr: \(stored.stderr)")
        let value = Int(stored.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        #expect(value >= acknowledged, "acknowledged \(acknowledged) but the store holds \(value)")
        // The killed writer may have committed one more than it acknowledged, never less.
        #expect(value <= acknowledged + 1)
        let info = try await cli.run("info", "crash", "-f", "json").envelope()
        #expect(info.revision?.rawValue == UInt64(value))
        let integrity = try await cli.run("set", "crash", "after", "ok")
        #expect(integrity.status == 0)
    }
}
