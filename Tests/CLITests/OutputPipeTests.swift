import DiscfgTestSupport
import Foundation
import Testing

/// Standard output that goes away: a reader that stops reading, a full disk.
@Suite("CLI: standard output that goes away")
struct OutputPipeTests {
    @Test("a reader that stops reading ends discfg by SIGPIPE, with nothing on stderr; a full disk is one sentence and status 74")
    func closedAndFullOutput() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "demo")
        let document = "{" + (0..<3_000).map { #""/k\#($0)": "value \#($0)""# }.joined(separator: ",") + "}"
        #expect(try await cli.run("import", "demo", cli.write("keys.json", Data(document.utf8))).status == 0)

        var environment = cli.environment
        environment["DISCFG"] = CLIRunner.executable.path
        // `head` closes the pipe after one line, long before 3,000 keys are written.
        let piped = try await ChildProcess.run(
            "/bin/bash", ["-c", #""$DISCFG" ls demo -r 2>stderr.txt | head -1 >/dev/null; echo "${PIPESTATUS[0]}""#],
            environment: environment, directory: cli.directory.path
        )
        #expect(piped.stdout == "141\n", "stdout: \(piped.stdout) stderr: \(piped.stderr)")
        let stderr = try String(contentsOf: cli.directory.appendingPathComponent("stderr.txt"), encoding: .utf8)
        #expect(stderr.isEmpty, "stderr: \(stderr)")

        let full = try await ChildProcess.run(
            "/bin/bash", ["-c", #""$DISCFG" export demo >/dev/full"#], environment: environment, directory: cli.directory.path
        )
        #expect(full.status == 74)
        #expect(full.stderr == "discfg: cannot write to standard output: No space left on device\n", "stderr: \(full.stderr)")
    }
}
