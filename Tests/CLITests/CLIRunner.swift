import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// Runs the built `discfg` binary in a scratch directory with its own store and HOME,
/// the way a person would from a shell.
struct CLIRunner {
    typealias Result = ChildProcess.Output

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

    /// The built binary.
    static var executable: URL { ChildProcess.discfg }

    /// Runs `discfg arguments…` to completion.
    @discardableResult
    func run(_ arguments: String..., stdin: Data? = nil, in subdirectory: String? = nil) async throws -> Result {
        try await run(arguments, stdin: stdin, in: subdirectory)
    }

    /// Runs the binary without blocking Swift's cooperative threads for long: the pipes
    /// are read and the exit is awaited on Dispatch threads, so other tests in this
    /// process keep running while this one waits.
    func run(_ arguments: [String], stdin: Data? = nil, in subdirectory: String? = nil) async throws -> Result {
        try await ChildProcess.run(start(arguments, in: subdirectory), stdin: stdin)
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
