import DiscfgCore
import Foundation

/// Runs the built `discfg` binary, as a person would from a shell, against one store.
struct DiscfgCommand: Sendable {
    struct Result: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
        var stdoutData: Data

        /// The JSON envelope printed with `-f json`.
        func envelope() throws -> Envelope {
            try JSONDecoder.discfg().decode(Envelope.self, from: stdoutData)
        }
    }

    /// The `--store` URL every command gets.
    let store: String
    /// The process environment.
    var environment: [String: String]

    /// Runs `discfg arguments… --store STORE` to completion.
    @discardableResult
    func run(_ arguments: String..., stdin: Data? = nil) async throws -> Result {
        try await run(arguments, stdin: stdin)
    }

    /// Runs `discfg arguments… --store STORE`; the pipes are read and the exit awaited on
    /// Dispatch threads, so Swift's cooperative threads stay free.
    func run(_ arguments: [String], stdin: Data? = nil) async throws -> Result {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = arguments + ["--store", store]
        process.environment = environment
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        process.standardOutput = output
        process.standardError = errors
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
                continuation.resume(returning: Result(
                    status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
                    stderr: String(decoding: err, as: UTF8.self), stdoutData: out
                ))
            }
        }
    }

    /// Runs a command that must succeed and returns its `-f json` envelope.
    func json(_ arguments: String...) async throws -> Envelope {
        let result = try await run(arguments + ["-f", "json"])
        guard result.status == 0 else {
            throw LambdaTestFailure("discfg \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr)")
        }
        return try result.envelope()
    }

    /// The built binary: next to the test bundle in the build products directory.
    static let executable: URL = {
        var candidates: [URL] = []
        for start in [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0])] {
            var url = start
            for _ in 0..<4 {
                url = url.deletingLastPathComponent()
                candidates.append(url.appendingPathComponent("discfg"))
            }
        }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            fatalError("the discfg binary was not built; looked in \(candidates.map(\.path))")
        }
        return found
    }()
}

/// A test's own failure, with a message that says what was seen.
struct LambdaTestFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Foundation's `Process.run()` on Linux crashed under concurrent launches, so every
/// launch in these tests goes through one lock.
private let launchLock = NSLock()

extension Process {
    /// Starts the process, one launch at a time across these tests.
    func launchSerially() throws {
        launchLock.lock()
        defer { launchLock.unlock() }
        try run()
    }
}
