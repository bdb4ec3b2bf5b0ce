import DiscfgCore
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
        let loop = Process()
        loop.executableURL = URL(fileURLWithPath: "/bin/bash")
        loop.arguments = ["-c", script]
        var environment = cli.environment
        environment["DISCFG"] = CLIRunner.executable.path
        loop.environment = environment
        let output = Pipe()
        loop.standardOutput = output
        loop.standardError = FileHandle.nullDevice
        try loop.launchSerially()
        let group = loop.processIdentifier
        setpgid(group, group)

        // Let it write for a while, then kill the shell and whichever `discfg set` runs.
        try await Task.sleep(for: .milliseconds(1500))
        kill(-group, SIGKILL)
        kill(group, SIGKILL)
        system("pkill -KILL -f 'set crash counter' >/dev/null 2>&1")
        await loop.exited()

        let acknowledged = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .split(separator: "\n").compactMap { Int($0) }.max() ?? 0
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
