import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

@Suite("CLI: notification targets")
struct NotifyCommandTests {
    @Test("update --notify sets, shows (secret hidden), replaces and clears a config's targets")
    func notifyTargets() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "app")
        let secretFile = cli.directory.appendingPathComponent("hook.key")
        try Data("s3cret-value\n".utf8).write(to: secretFile)

        let set = try await cli.run("update", "app", "--notify", "eventbridge", "--notify", "https://hooks.example.com/discfg", "--webhook-secret-file", secretFile.path)
        #expect(set.status == 0, "stderr: \(set.stderr)")
        #expect(set.stdout.contains("notify: eventbridge:default, https://hooks.example.com/discfg (signed)"))

        let info = try await cli.run("info", "app")
        #expect(info.stdout.contains("eventbridge:default"))
        #expect(info.stdout.contains("https://hooks.example.com/discfg (signed)"))
        let json = try await cli.run("info", "app", "-f", "json")
        #expect(!json.stdout.contains("s3cret"), "the secret is never printed")
        let targets = try json.envelope().configInfo?.settings.notify
        #expect(targets == [.eventBridge(bus: "default"), .webhook(url: "https://hooks.example.com/discfg", secret: NotificationTarget.redactedSecret)])

        // The stored secret is the file's first line, for the stream handler to sign with.
        let exported = try await cli.run("update", "app", "--history", "7d", "-f", "json")
        #expect(exported.status == 0)
        #expect(try await cli.run("info", "app").stdout.contains("(signed)"), "other updates keep the targets")

        let cleared = try await cli.run("update", "app", "--notify", "none")
        #expect(cleared.stdout.contains("notify: nobody"))
        #expect(!(try await cli.run("info", "app").stdout.contains("notify")))
    }
}
