import Foundation

/// One run of a web console check in a real browser: a script of `Tests/Browser` that
/// drives headless Chromium through Selenium (`scripts/setup` installs both) against a
/// `discfg serve` over a fresh SQLite store, started for it and stopped after.
///
/// Every script takes the command line `Tests/Browser/headless.py` reads: `--url` (the
/// server), `--discfg` (the built binary, for the CLI's changes meanwhile),
/// `--screenshots` (``screenshots``), `--token` where the server requires one, then the
/// script's own arguments. A script prints a line a check and ends with
/// ``keptToPolicy`` when the page logged no Content-Security-Policy violation.
///
/// ```swift
/// let check = try await BrowserCheck.run("console_json_check.py", screenshots: ["json-conflict.png"], timeout: .seconds(180))
/// #expect(check.failures.isEmpty, "\(check)")
/// ```
public struct BrowserCheck: Sendable, CustomStringConvertible {
    /// How the server lets the console in.
    public enum Access: Sendable {
        /// `discfg serve` on loopback with no token yet: it needs none, and the script is given none.
        case open
        /// `discfg serve --auth token`, and a token of `role` made with `discfg token create` for the script.
        case token(role: String)
    }

    /// Making the token for the script failed: what `discfg token create` said.
    public struct TokenNotCreated: Error, CustomStringConvertible {
        public let description: String
    }

    /// The line a script prints last when the page broke no rule of its Content-Security-Policy.
    public static let keptToPolicy = "ok the page broke no rule of its Content-Security-Policy"
    /// The checkout this file is in.
    public static let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// Where the scripts save their screenshots, to be looked at after a run: `.build/console-screenshots`.
    public static let screenshots = checkout.appendingPathComponent(".build/console-screenshots")

    /// How the script ended and what it printed.
    public let output: ChildProcess.Output
    /// What went wrong, a sentence each: the script's end if not `exit(0)`, no
    /// ``keptToPolicy`` line, each screenshot asked for and not saved. Empty when it passed.
    public let failures: [String]

    /// The failures, then all the script printed.
    public var description: String {
        (failures + [output.stdout + output.stderr]).joined(separator: "\n")
    }

    /// Runs `Tests/Browser/<script>` against a `discfg serve` of its own, with its HOME
    /// the server's scratch directory.
    /// - Parameters:
    ///   - script: the script's file name in `Tests/Browser`.
    ///   - arguments: the script's own arguments, after those every script takes.
    ///   - access: whether the server requires a token, and of which role.
    ///   - expected: the screenshots the script must save in ``screenshots``; any left
    ///     from an earlier run are removed first, so only this run's count.
    ///   - timeout: how long the script may run.
    /// - Returns: the run, with its ``failures``.
    /// - Throws: ``TokenNotCreated``, and when the server or the script cannot be
    ///   started or the script runs past `timeout` (``ChildProcess/TimedOut``).
    public static func run(
        _ script: String, _ arguments: [String] = [], access: Access = .token(role: "admin"), screenshots expected: [String] = [],
        timeout: Duration
    ) async throws -> BrowserCheck {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        var serve: [String] = []
        var common = ["--discfg", CLIRunner.executable.path, "--screenshots", screenshots.path]
        if case .token(let role) = access {
            let created = try await cli.run("token", "create", "--role", role)
            guard created.status == 0, let token = created.stdout.split(separator: "\n").first.map(String.init) else {
                throw TokenNotCreated(description: "discfg token create --role \(role) failed (exit \(created.status)): \(created.stderr)")
            }
            serve = ["--auth", "token"]
            common += ["--token", token]
        }
        try FileManager.default.createDirectory(at: screenshots, withIntermediateDirectories: true)
        for name in expected {
            try? FileManager.default.removeItem(at: screenshots.appendingPathComponent(name))
        }
        let (server, port) = try await cli.serve(serve)
        let output = try await withServer(server) { _ in
            try await ChildProcess.run(
                "python3", [checkout.appendingPathComponent("Tests/Browser/\(script)").path, "--url", "http://127.0.0.1:\(port)"] + common + arguments,
                environment: ChildProcess.environment(["HOME": cli.directory.path]), timeout: timeout
            )
        }
        var failures: [String] = []
        if output.termination != .exited(0) {
            failures.append("\(script) \(output.termination?.description ?? "did not end"), not with status 0")
        }
        if !output.stdout.contains(keptToPolicy) {
            failures.append("\(script) did not print \"\(keptToPolicy)\"")
        }
        for name in expected where !FileManager.default.fileExists(atPath: screenshots.appendingPathComponent(name).path) {
            failures.append("\(script) saved no screenshot \(name)")
        }
        return BrowserCheck(output: output, failures: failures)
    }
}
