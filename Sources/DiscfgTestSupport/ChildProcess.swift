import DiscfgCore
import Foundation

/// Running the built `discfg` binary from tests and benchmarks, as a person would from a shell.
public enum ChildProcess {
    /// What a finished process printed, and how it exited.
    public struct Output: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        public var stdoutData: Data

        /// The JSON envelope printed with `-f json`.
        public func envelope() throws -> Envelope {
            try JSONDecoder.discfg().decode(Envelope.self, from: stdoutData)
        }
    }

    /// The built `discfg`: next to the test bundle in the build products directory, or
    /// in `.build/debug` of this checkout.
    public static let discfg: URL = {
        var candidates: [URL] = []
        for start in [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0])] {
            var url = start
            for _ in 0..<4 {
                url = url.deletingLastPathComponent()
                candidates.append(url.appendingPathComponent("discfg"))
            }
        }
        candidates.append(URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../.build/debug/discfg").standardized)
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            fatalError("the discfg binary was not built; looked in \(candidates.map(\.path))")
        }
        return found
    }()

    /// Runs `process` (set up, not started) to completion, feeding it `stdin`.
    ///
    /// Swift's cooperative threads are not blocked: the pipes are read and the exit is
    /// awaited on Dispatch threads, so other tests in this process keep running.
    public static func run(_ process: Process, stdin: Data? = nil) async throws -> Output {
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        process.standardOutput = output
        process.standardError = errors
        // Launch here: Foundation's Process.run crashed when called from Dispatch workers.
        try process.launchSerially()
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                if let stdin {
                    input.fileHandleForWriting.write(stdin)
                    try? input.fileHandleForWriting.close()
                }
                let group = DispatchGroup()
                nonisolated(unsafe) var out = Data()
                nonisolated(unsafe) var err = Data()
                DispatchQueue.global().async(group: group) { out = output.fileHandleForReading.readDataToEndOfFile() }
                DispatchQueue.global().async(group: group) { err = errors.fileHandleForReading.readDataToEndOfFile() }
                group.wait()
                process.waitUntilExit()
                continuation.resume(returning: Output(
                    status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
                    stderr: String(decoding: err, as: UTF8.self), stdoutData: out
                ))
            }
        }
    }
}

/// Foundation's `Process.run()` on Linux crashed under many concurrent launches, so
/// every launch from tests goes through one lock.
private let launchLock = NSLock()

extension Process {
    /// Starts the process, one launch at a time across the test process.
    public func launchSerially() throws {
        launchLock.lock()
        defer { launchLock.unlock() }
        try run()
    }
}

extension Process {
    /// Kills the process with SIGKILL and waits for it to end.
    ///
    /// SIGKILL rather than SIGTERM: a child started from the test process was seen to ignore
    /// SIGTERM (a child inherits the blocked-signal mask of the thread that spawns it, and
    /// Dispatch threads block signals), which left `waitUntilExit` hanging. SIGKILL cannot
    /// be blocked.
    public func killAndWait() {
        guard isRunning else { return }
        kill(processIdentifier, SIGKILL)
        waitUntilExit()
    }
}
