import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// The original discfg's README examples and the issue's acceptance walk-through.
@Suite("CLI: the original's examples")
struct OriginalExamplesTests {
    @Test("create, use, set, get -f json: version 1, then prevItem and version 2, then a failed --if-version changes nothing")
    func acceptanceWalkThrough() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("create", "demo").status == 0)
        #expect(try await cli.run("use", "demo").status == 0)
        #expect(try await cli.run("set", "greeting", "hello").status == 0)

        let first = try await cli.run("get", "greeting", "-f", "json")
        #expect(first.status == 0)
        let firstEnvelope = try first.envelope()
        #expect(firstEnvelope.action == "get")
        #expect(firstEnvelope.item?.version == 1)
        #expect(firstEnvelope.item?.value == "hello")

        let second = try await cli.run("set", "greeting", "world", "-f", "json")
        let secondEnvelope = try second.envelope()
        #expect(secondEnvelope.action == "set")
        #expect(secondEnvelope.item?.version == 2)
        #expect(secondEnvelope.prevItem?.value == "hello")
        #expect(secondEnvelope.prevItem?.version == 1)

        let failed = try await cli.run("set", "greeting", "again", "--if-version", "1")
        #expect(failed.status == 4)
        #expect(failed.stderr.contains("condition failed"))
        let after = try await cli.run("get", "greeting", "-f", "json").envelope()
        #expect(after.item?.value == "world")
        #expect(after.item?.version == 2)
        #expect(try await cli.run("info", "-f", "json").envelope().revision == 2)
    }

    @Test("the README's forms: JSON values, -d file, explicit config, missing leading slash")
    func readmeForms() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "mycfg")
        try await cli.run("use", "mycfg")
        #expect(try await cli.run("set", "mykey", #"{"json": "works"}"#).status == 0)
        #expect(try await cli.run("get", "mykey").stdout == "{\"json\": \"works\"}\n")

        let file = try cli.write("file.json", Data(#"{"foo": "test"}"#.utf8))
        #expect(try await cli.run("set", "mykey", "-d", file).status == 0)
        #expect(try await cli.run("get", "/mykey", "--raw").stdout == #"{"foo": "test"}"#)

        #expect(try await cli.run("set", "mycfg", "other", "VALUE").status == 0)
        #expect(try await cli.run("get", "mycfg", "other").stdout == "VALUE\n")
        let envelope = try await cli.run("get", "mykey", "-f", "json").envelope()
        #expect(envelope.item?.key == "/mykey")
        #expect(envelope.item?.version == 2)
    }

    @Test("-f silent prints nothing but keeps the exit code")
    func silentFormat() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let created = try await cli.run("create", "quiet", "-f", "silent")
        #expect(created.status == 0 && created.stdout.isEmpty && created.stderr.isEmpty)
        let missing = try await cli.run("get", "quiet", "nothing", "-f", "silent")
        #expect(missing.status == 3 && missing.stdout.isEmpty && missing.stderr.isEmpty)
    }
}
