import DiscfgTestSupport
import Foundation
import Testing

/// Managing a config in the web console, in headless Chromium through Selenium
/// (`Tests/Browser/console_manage_check.py`) against a `discfg serve` that requires
/// tokens, while the REST API changes the same config.
@Suite("Web console: internals hidden, schema badges, JSON indented and diffed by pointer, change messages, the key in the address, stale errors cleared, revisions compared and rolled back")
struct ConsoleManageTests {
    @Test("in headless Chromium: /.discfg/ out of the tree and counts with a badge for a schema's keys; JSON indented and saved as stored; history by JSON Pointer and by line; a change message sent and shown; a link and a reload open the key; an error box cleared by the next action; two revisions compared; a reviewed rollback refused after a change and applied as one revision, and not offered where it would write a sealed secret as it was")
    func manage() async throws {
        var cli = try CLIRunner()
        defer { cli.cleanUp() }
        cli.environment["DISCFG_STORE"] = "sqlite://\(cli.directory.path)/store.db"
        let created = try await cli.run("token", "create", "--role", "admin")
        #expect(created.status == 0, "\(created.stderr)")
        let token = try #require(created.stdout.split(separator: "\n").first.map(String.init))
        let (server, port) = try await cli.serve(["--auth", "token"])
        let screenshots = ConsoleTests.root.appendingPathComponent(".build/console-screenshots")
        try FileManager.default.createDirectory(at: screenshots, withIntermediateDirectories: true)
        do {
            let run = try await ChildProcess.run(
                "python3",
                [ConsoleTests.root.appendingPathComponent("Tests/Browser/console_manage_check.py").path, "http://127.0.0.1:\(port)", token, CLIRunner.executable.path, screenshots.path],
                environment: ChildProcess.environment(["HOME": cli.directory.path]), timeout: .seconds(240)
            )
            #expect(run.termination == .exited(0), "\(run.stdout)\(run.stderr)")
            #expect(run.stdout.contains("ok the page broke no rule of its Content-Security-Policy"), "\(run.stdout)\(run.stderr)")
            for name in ["manage-tree.png", "manage-history.png", "manage-compare.png", "manage-rollback.png"] {
                #expect(FileManager.default.fileExists(atPath: screenshots.appendingPathComponent(name).path), "screenshot \(name)")
            }
        } catch {
            await server.kill()
            throw error
        }
        await server.kill()
    }
}
