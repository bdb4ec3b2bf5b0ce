import DiscfgTestSupport
import Foundation
import Testing

/// JSON values in the web console, in headless Chromium through Selenium
/// (`Tests/Browser/console_json_check.py`) against a `discfg serve` that requires tokens,
/// while the REST API changes the same keys.
@Suite("Web console: JSON edits as merge patches, schema violations beside the editor, a key's schemas")
struct ConsoleJSONTests {
    @Test("in headless Chromium: a merge-patch edit lands over another member's change and both stay; the same member's change opens the conflict view; a 422 lists each violation beside the editor; a key names the schemas that check it; bad JSON is refused with its line and column; a text value is saved by PUT with If-Match")
    func jsonEdits() async throws {
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
                [ConsoleTests.root.appendingPathComponent("Tests/Browser/console_json_check.py").path, "http://127.0.0.1:\(port)", token, screenshots.path],
                environment: ChildProcess.environment(["HOME": cli.directory.path]), timeout: .seconds(180)
            )
            #expect(run.termination == .exited(0), "\(run.stdout)\(run.stderr)")
            #expect(run.stdout.contains("ok the page broke no rule of its Content-Security-Policy"), "\(run.stdout)\(run.stderr)")
            for name in ["json-conflict.png", "json-violations.png"] {
                #expect(FileManager.default.fileExists(atPath: screenshots.appendingPathComponent(name).path), "screenshot \(name)")
            }
        } catch {
            await server.kill()
            throw error
        }
        await server.kill()
    }
}
