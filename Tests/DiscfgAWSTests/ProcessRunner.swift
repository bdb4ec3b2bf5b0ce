import Foundation

/// Runs a child process off the cooperative thread pool and collects its output.
enum ProcessRunner {
    struct Output: Sendable {
        let status: Int32
        let stdout: Data
        let stderr: String
    }

    /// Runs `arguments` through `/usr/bin/env` so the test PATH decides which tool is used.
    static func run(_ arguments: [String], stdin: Data = Data()) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = arguments
                let input = Pipe()
                let output = Pipe()
                let errors = Pipe()
                process.standardInput = input
                process.standardOutput = output
                process.standardError = errors
                do {
                    try process.run()
                } catch {
                    continuation.resume(throwing: error)
                    return
                }
                input.fileHandleForWriting.write(stdin)
                try? input.fileHandleForWriting.close()
                // Drain stderr concurrently so a chatty child cannot fill the pipe and block.
                let stderrBox = DataBox()
                let group = DispatchGroup()
                group.enter()
                DispatchQueue.global().async {
                    stderrBox.data = errors.fileHandleForReading.readDataToEndOfFile()
                    group.leave()
                }
                let stdout = output.fileHandleForReading.readDataToEndOfFile()
                group.wait()
                process.waitUntilExit()
                continuation.resume(returning: Output(
                    status: process.terminationStatus,
                    stdout: stdout,
                    stderr: String(decoding: stderrBox.data, as: UTF8.self)
                ))
            }
        }
    }

    /// Holds bytes written by one thread and read by another after a DispatchGroup wait.
    private final class DataBox: @unchecked Sendable {
        var data = Data()
    }
}
