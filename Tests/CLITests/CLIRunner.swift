import DiscfgCore
import Foundation
import Testing

/// Runs the built `discfg` binary in a scratch directory with its own store and HOME,
/// the way a person would from a shell.
struct CLIRunner {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var stdoutData: Data

        /// The JSON envelope printed with `-f json`.
        func envelope() throws -> Envelope {
            try JSONDecoder.discfg().decode(Envelope.self, from: stdoutData)
        }
    }

    let directory: URL
    var environment: [String: String]

    /// A fresh directory and SQLite store for one test.
    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = directory.path
        environment["DISCFG_STORE"] = "sqlite://\(directory.path)/store.db"
        environment.removeValue(forKey: "DISCFG_CONFIG")
        environment.removeValue(forKey: "XDG_DATA_HOME")
        self.environment = environment
    }

    func cleanUp() {
        try? FileManager.default.removeItem(at: directory)
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
        candidates.append(URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../.build/debug/discfg").standardized)
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            fatalError("the discfg binary was not built; looked in \(candidates.map(\.path))")
        }
        return found
    }()

    /// Runs `discfg arguments…` to completion.
    @discardableResult
    func run(_ arguments: String..., stdin: Data? = nil, in subdirectory: String? = nil) async throws -> Result {
        try await run(arguments, stdin: stdin, in: subdirectory)
    }

    /// Runs the binary without blocking Swift's cooperative threads for long: the pipes
    /// are read and the exit is awaited on Dispatch threads, so other tests in this
    /// process keep running while this one waits.
    func run(_ arguments: [String], stdin: Data? = nil, in subdirectory: String? = nil) async throws -> Result {
        let process = start(arguments, in: subdirectory)
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
                continuation.resume(returning: Result(
                    status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
                    stderr: String(decoding: err, as: UTF8.self), stdoutData: out
                ))
            }
        }
    }

    /// A process set up to run `discfg arguments…`, not yet started.
    func start(_ arguments: [String], in subdirectory: String? = nil) -> Process {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = arguments
        process.environment = environment
        process.currentDirectoryURL = subdirectory.map { directory.appendingPathComponent($0) } ?? directory
        return process
    }

    /// Writes a file in the scratch directory and returns its path.
    func write(_ name: String, _ contents: Data) throws -> String {
        let url = directory.appendingPathComponent(name)
        try contents.write(to: url)
        return url.path
    }
}

extension Process {
    /// Waits for the process to exit on a Dispatch thread, not a cooperative one.
    func exited() async {
        let process = self
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                process.waitUntilExit()
                continuation.resume()
            }
        }
    }
}

extension FileHandle {
    /// The next bytes available (empty at end of file), read on a Dispatch thread.
    func nextChunk() async -> Data {
        let handle = self
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: handle.availableData) }
        }
    }
}

/// Foundation's `Process.run()` on Linux crashed under many concurrent launches here,
/// so every launch in these tests goes through one lock.
private let launchLock = NSLock()

extension Process {
    /// Starts the process, one launch at a time across the test process.
    func launchSerially() throws {
        launchLock.lock()
        defer { launchLock.unlock() }
        try run()
    }
}
