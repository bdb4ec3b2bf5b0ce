import DiscfgCore
import Foundation

/// Runs the built `discfg` binary in a scratch directory with its own store and HOME,
/// the way a person would from a shell.
///
/// ```swift
/// let cli = try CLIRunner()
/// defer { cli.cleanUp() }
/// #expect(try await cli.run("create", "web").status == 0)
/// ```
public struct CLIRunner: Sendable {
    /// What a finished `discfg` printed, and how it ended.
    public typealias Result = ChildProcess.Output

    /// The scratch directory: HOME, working directory and SQLite store of every child.
    public let directory: URL
    /// The whole environment of every child: the basics of this process's (PATH, locale)
    /// and this runner's HOME and store, nothing else.
    public var environment: [String: String]

    /// A fresh directory and SQLite store for one test.
    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        environment = ChildProcess.environment([
            "HOME": directory.path,
            "DISCFG_STORE": "sqlite://\(directory.path)/store.db",
        ])
    }

    /// Removes the scratch directory.
    public func cleanUp() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// The built binary.
    public static var executable: URL { ChildProcess.discfg }

    /// Runs `discfg arguments…` to completion.
    @discardableResult
    public func run(_ arguments: String..., stdin: Data? = nil, in subdirectory: String? = nil) async throws -> Result {
        try await run(arguments, stdin: stdin, in: subdirectory)
    }

    /// Runs `discfg arguments…` to completion, feeding it `stdin` (or `/dev/null`).
    public func run(_ arguments: [String], stdin: Data? = nil, in subdirectory: String? = nil) async throws -> Result {
        try await ChildProcess.run(
            Self.executable.path, arguments, environment: environment, directory: workingDirectory(subdirectory),
            stdin: stdin.map { .bytes($0) } ?? .none
        )
    }

    /// Starts `discfg arguments…` and returns it running.
    public func launch(
        _ arguments: [String], stdout: ChildProcess.Destination = .capture, stderr: ChildProcess.Destination = .capture
    ) throws -> ChildProcess {
        try ChildProcess.launch(Self.executable.path, arguments, environment: environment, directory: workingDirectory(nil), stdout: stdout, stderr: stderr)
    }

    /// Starts a bash `script` with `$DISCFG` naming the built binary, in a process group
    /// of its own so that a signal reaches the commands it runs too.
    public func launchShell(
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
    public func write(_ name: String, _ contents: Data) throws -> String {
        let url = directory.appendingPathComponent(name)
        try contents.write(to: url)
        return url.path
    }
}
