import DiscfgTestSupport
import Foundation
import Testing

/// How the web console opens: it asks the server with no token, and goes straight to the
/// configs where none is needed, or to the sign-in form where one is (the server's 401).
/// In headless Chromium through Selenium (`Tests/Browser/console_entry_check.py`).
@Suite("Web console: straight to the configs on a server that needs no token, a token asked for where one is needed")
struct ConsoleEntryTests {
    /// Runs the check script in `mode` against a `discfg serve` started with `arguments`.
    static func check(_ mode: String, serve arguments: [String], token: (CLIRunner) async throws -> String?) async throws {
        var cli = try CLIRunner()
        defer { cli.cleanUp() }
        cli.environment["DISCFG_STORE"] = "sqlite://\(cli.directory.path)/store.db"
        let token = try await token(cli)
        let (server, port) = try await cli.serve(arguments)
        do {
            let run = try await ChildProcess.run(
                "python3",
                [ConsoleTests.root.appendingPathComponent("Tests/Browser/console_entry_check.py").path, mode, "http://127.0.0.1:\(port)", CLIRunner.executable.path] + (token.map { [$0] } ?? []),
                environment: ChildProcess.environment(["HOME": cli.directory.path]), timeout: .seconds(180)
            )
            #expect(run.termination == .exited(0), "\(run.stdout)\(run.stderr)")
            #expect(run.stdout.contains("ok the page broke no rule of its Content-Security-Policy"), "\(run.stdout)\(run.stderr)")
        } catch {
            await server.kill()
            throw error
        }
        await server.kill()
    }

    @Test("an open server (loopback, no token yet): the configs at once, never the sign-in form, no sign-out; the first token issued in the console is kept on screen, then the console asks for a token, without an error on the next opening")
    func openServer() async throws {
        try await Self.check("open", serve: []) { _ in nil }
    }

    @Test("a server requiring tokens: the sign-in form with no error and no configs, an empty token refused with the server's reason, the token signs in and is kept on reload")
    func tokenServer() async throws {
        try await Self.check("tokens", serve: ["--auth", "token"]) { cli in
            let created = try await cli.run("token", "create", "--role", "read")
            #expect(created.status == 0, "\(created.stderr)")
            let token: String = try #require(created.stdout.split(separator: "\n").first.map(String.init))
            return token
        }
    }
}
