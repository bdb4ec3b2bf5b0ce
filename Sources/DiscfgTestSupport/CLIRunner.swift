import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// Runs the built `discfg` binary in a scratch directory with its own store and HOME,
/// the way a person would from a shell.
struct CLIRunner {
    typealias Result = ChildProcess.Output

    let directory: URL
    /// The whole environment of every child: the basics of this process's (PATH, locale)
    /// and this runner's HOME and store, nothing else.
    var environment: [String: String]

    /// A fresh directory and SQLite store for one test.
    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        environment = ChildProcess.environment([
            "HOME": directory.path,
            "DISCFG_STORE": "sqlite://\(directory.path)/store.db",
        ])
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

    /// Runs `discfg arguments…` to completion, feeding it `stdin` (or `/dev/null`).
    func run(_ arguments: [String], stdin: Data? = nil, in subdirectory: String? = nil) async throws -> Result {
        try await ChildProcess.run(
            Self.executable.path, arguments, environment: environment, directory: workingDirectory(subdirectory),
            stdin: stdin.map { .bytes($0) } ?? .none
        )
    }

    /// Starts `discfg arguments…` and returns it running.
    func launch(
        _ arguments: [String], stdout: ChildProcess.Destination = .capture, stderr: ChildProcess.Destination = .capture
    ) throws -> ChildProcess {
        try ChildProcess.launch(Self.executable.path, arguments, environment: environment, directory: workingDirectory(nil), stdout: stdout, stderr: stderr)
    }

    /// Starts a bash `script` with `$DISCFG` naming the built binary, in a process group
    /// of its own so that a signal reaches the commands it runs too.
    func launchShell(
        _ script: String, environment extra: [String: String] = [:],
        stdout: ChildProcess.Destination = .capture, stderr: ChildProcess.Destination = .capture
    ) throws -> ChildProcess {
        var environment = environment
        environment["DISCFG"] = Self.executable.path
        environment.merge(extra) { _, new in new }
        return try ChildProcess.launch(
            "/bin/bash", ["-c", script], environment: environment, directory: workingDirectory(nil),
            stdout: stdout, stderr: stderr, ownProcessGroup: true
        )
    }

    private func workingDirectory(_ subdirectory: String?) -> String {
        (subdirectory.map { directory.appendingPathComponent($0) } ?? directory).path
    }

    /// Writes a file in the scratch directory and returns its path.
    func write(_ name: String, _ contents: Data) throws -> String {
        let url = directory.appendingPathComponent(name)
        try contents.write(to: url)
        return url.path
    }
}
