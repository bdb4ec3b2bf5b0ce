import DiscfgCore
import DiscfgTestSupport
import DiscfgWire
import Foundation
import Testing

/// Several discfg processes on one SQLite file at once, as with a CLI next to a server.
@Suite("CLI: processes sharing one store")
struct TwoProcessTests {
    @Test("a watch in one process sees sets from other processes, in order, once each; Ctrl-C exits 0")
    func watchAcrossProcesses() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "shared")
        try await cli.run("set", "shared", "/app/before", "0")

        let watcher = try cli.launch(["watch", "shared", "/app/", "--from-revision", "1", "-f", "json"], stderr: .discard)
        try await withServer(watcher) { watcher in
            for index in 1...3 { try await cli.run("set", "shared", "/app/k\(index)", "v\(index)") }
            try await cli.run("set", "shared", "/elsewhere", "ignored")
            try await cli.run("delete", "shared", "/app/k2")

            let lines = try await readLines(watcher, count: 5, timeout: .seconds(15))
            let events = try lines.map { try JSONDecoder.discfg().decode(Envelope.self, from: Data($0.utf8)) }
            #expect(events.compactMap { $0.event?.revision.rawValue } == [1, 2, 3, 4, 6])
            #expect(events.compactMap { $0.event?.type } == [.put, .put, .put, .put, .delete])
            #expect(events.compactMap { $0.event?.key } == ["/app/before", "/app/k1", "/app/k2", "/app/k3", "/app/k2"])

            #expect(await watcher.kill(SIGINT) == .exited(0))
        }
    }

    @Test("concurrent writer processes lose no change")
    func concurrentWriters() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "busy")
        let writers = try (1...6).map { index in
            try cli.launch(["set", "busy", "/k\(index)", "v"], stdout: .discard, stderr: .discard)
        }
        for process in writers {
            #expect(try await process.wait(timeout: .seconds(300)).status == 0)
        }
        #expect(try await cli.run("info", "busy", "-f", "json").envelope().revision == 6)
        #expect(try await cli.run("ls", "busy", "-r", "-f", "json").envelope().items?.count == 6)
    }

    /// The first `count` lines the watcher prints, failing after `timeout` instead of hanging.
    private func readLines(_ watcher: ChildProcess, count: Int, timeout: Duration) async throws -> [String] {
        do {
            return try await watcher.waitForOutput(timeout: timeout) { output in
                let lines = output.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
                return lines.count >= count ? Array(lines.prefix(count)) : nil
            }
        } catch {
            Issue.record("the watcher printed fewer than \(count) lines within \(timeout): \(error)")
            throw error
        }
    }
}
