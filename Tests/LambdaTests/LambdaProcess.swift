import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `discfg lambda` running as a child process, its output collected for assertions.
final class LambdaProcess: Sendable {
    private struct Output {
        var stdout = Data()
        var stderr = Data()
        var openStreams = 2
    }

    private let process: Process
    private let output = Mutex(Output())

    /// Launches `executable arguments…` with `environment`.
    init(executable: URL = DiscfgCommand.executable, arguments: [String] = ["lambda"], environment: [String: String]) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        self.process = process
        try process.launchSerially()
        collect(out.fileHandleForReading, standardOutput: true)
        collect(err.fileHandleForReading, standardOutput: false)
    }

    private func collect(_ handle: FileHandle, standardOutput: Bool) {
        DispatchQueue.global().async { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                output.withLock { output in
                    if standardOutput { output.stdout.append(chunk) } else { output.stderr.append(chunk) }
                }
            }
            output.withLock { $0.openStreams -= 1 }
        }
    }

    /// Everything printed on standard output so far.
    var stdout: String { output.withLock { String(decoding: $0.stdout, as: UTF8.self) } }
    /// Everything printed on standard error so far.
    var stderr: String { output.withLock { String(decoding: $0.stderr, as: UTF8.self) } }
    /// Both, for failure messages.
    var logs: String { "stdout:\n\(stdout)\nstderr:\n\(stderr)" }

    /// Standard output's lines.
    var stdoutLines: [String] { stdout.split(separator: "\n").map(String.init) }

    /// Whether the process is still running.
    var isRunning: Bool { process.isRunning }

    /// Waits until a line of standard output satisfies `matches`, and returns it.
    func waitForLine(timeout: Duration = .seconds(10), where matches: (String) -> Bool) async throws -> String {
        let clock = ContinuousClock()
        let end = clock.now + timeout
        while true {
            if let line = stdoutLines.first(where: matches) { return line }
            guard clock.now < end else { throw LambdaTestFailure("no matching log line within \(timeout); \(logs)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits for the process to exit on its own and returns its status; nil if it is
    /// still running after `timeout`.
    func exitStatus(within timeout: Duration) async throws -> Int32? {
        let clock = ContinuousClock()
        let end = clock.now + timeout
        while process.isRunning {
            guard clock.now < end else { return nil }
            try await Task.sleep(for: .milliseconds(20))
        }
        // Let the readers drain the pipes.
        while output.withLock({ $0.openStreams > 0 }), clock.now < end + .seconds(2) {
            try await Task.sleep(for: .milliseconds(10))
        }
        return process.terminationStatus
    }

    /// Stops the process: SIGTERM, then SIGKILL if it has not exited within two seconds.
    func stop() async {
        guard process.isRunning else { return }
        process.terminate()
        let status = try? await exitStatus(within: .seconds(2))
        if status == nil, process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            _ = try? await exitStatus(within: .seconds(5))
        }
    }
}
