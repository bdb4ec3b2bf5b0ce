import DiscfgCore
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

        let watcher = cli.start(["watch", "shared", "/app/", "--from-revision", "1", "-f", "json"])
        let output = Pipe()
        watcher.standardOutput = output
        watcher.standardError = FileHandle.nullDevice
        watcher.standardInput = FileHandle.nullDevice
        try watcher.launchSerially()
        defer { if watcher.isRunning { watcher.terminate() } }

        for index in 1...3 { try await cli.run("set", "shared", "/app/k\(index)", "v\(index)") }
        try await cli.run("set", "shared", "/elsewhere", "ignored")
        try await cli.run("delete", "shared", "/app/k2")

        let lines = try await readLines(output.fileHandleForReading, count: 5, timeout: .seconds(15))
        let events = try lines.map { try JSONDecoder.discfg().decode(Envelope.self, from: Data($0.utf8)) }
        #expect(events.compactMap { $0.event?.revision.rawValue } == [1, 2, 3, 4, 6])
        #expect(events.compactMap { $0.event?.type } == [.put, .put, .put, .put, .delete])
        #expect(events.compactMap { $0.event?.key } == ["/app/before", "/app/k1", "/app/k2", "/app/k3", "/app/k2"])

        kill(watcher.processIdentifier, SIGINT)
        await watcher.exited()
        #expect(watcher.terminationReason == .exit)
        #expect(watcher.terminationStatus == 0)
    }

    @Test("concurrent writer processes lose no change")
    func concurrentWriters() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "busy")
        let writers = (1...6).map { index in
            let process = cli.start(["set", "busy", "/k\(index)", "v"])
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            return process
        }
        for process in writers { try process.launchSerially() }
        for process in writers {
            await process.exited()
            #expect(process.terminationStatus == 0)
        }
        #expect(try await cli.run("info", "busy", "-f", "json").envelope().revision == 6)
        #expect(try await cli.run("ls", "busy", "-r", "-f", "json").envelope().items?.count == 6)
    }

    /// Reads `count` lines, failing after `timeout` instead of hanging.
    private func readLines(_ handle: FileHandle, count: Int, timeout: Duration) async throws -> [String] {
        try await withThrowingTaskGroup(of: [String].self) { group in
            group.addTask {
                var buffer = Data()
                var lines: [String] = []
                while lines.count < count {
                    let chunk = await handle.nextChunk()
                    if chunk.isEmpty { break }
                    buffer.append(chunk)
                    while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                        lines.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                        buffer.removeSubrange(buffer.startIndex...newline)
                    }
                }
                return lines
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw CancellationError()
            }
            do {
                let lines = try await group.next() ?? []
                group.cancelAll()
                return lines
            } catch {
                Issue.record("the watcher printed fewer than \(count) lines within \(timeout)")
                throw error
            }
        }
    }
}
