import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

@Suite("CLI: export and import")
struct TransferTests {
    @Test("json and yaml round trip every value, content type and TTL; env writes NAME=value", arguments: ["json", "yaml"])
    func roundTrip(format: String) async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "src")
        try await cli.run("create", "dst")
        try await cli.run("set", "src", "/db/host", "db1")
        try await cli.run("set", "src", "/doc", #"{"a": [1, 2]}"#, "--content-type", "application/json")
        try await cli.run("set", "src", "/multi", "line one\nline two: \"quoted\"")
        try await cli.run("set", "src", "/session", "s", "--ttl", "1h")
        let binary = try cli.write("bin", Data([0, 1, 2, 0xFF, 0xFE]))
        try await cli.run("set", "src", "/blob", "-d", binary)

        let file = cli.directory.appendingPathComponent("snapshot.\(format)").path
        #expect(try await cli.run("export", "src", "-o", file).status == 0)
        let imported = try await cli.run("import", "dst", file, "-f", "json")
        #expect(imported.status == 0)
        #expect(try imported.envelope().events?.count == 5)

        let source = try await cli.run("ls", "src", "-r", "-f", "json").envelope().items ?? []
        let copy = try await cli.run("ls", "dst", "-r", "-f", "json").envelope().items ?? []
        #expect(copy.map(\.key) == source.map(\.key))
        #expect(copy.map(\.value) == source.map(\.value))
        #expect(copy.map(\.encoding) == source.map(\.encoding))
        #expect(copy.map(\.contentType) == source.map(\.contentType))
        #expect(copy.map(\.expiresAt) == source.map(\.expiresAt))

        let again = try await cli.run("import", "dst", file, "-f", "json").envelope()
        #expect(again.events?.isEmpty == true)
        #expect(again.unchanged == 5)
    }

    @Test("env export, env import, plain mappings, --replace")
    func envAndPlain() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "c")
        try await cli.run("use", "c")
        try await cli.run("set", "/db/host", "db1")
        try await cli.run("set", "/greeting", "hello world")
        #expect(try await cli.run("export", "--to", "env").stdout == "DB_HOST=db1\nGREETING=\"hello world\"\n")

        let env = try cli.write("vars.env", Data("# comment\nexport PORT=5432\nNAME='single quoted'\n".utf8))
        #expect(try await cli.run("import", env).status == 0)
        #expect(try await cli.run("get", "/port").stdout == "5432\n")
        #expect(try await cli.run("get", "/name").stdout == "single quoted\n")

        let plain = try cli.write("plain.json", Data(#"{"/db/host": "db2", "/db/port": 5432}"#.utf8))
        #expect(try await cli.run("import", plain, "--replace").status == 0)
        let keys = try await cli.run("ls", "-r", "-f", "json").envelope().items?.map(\.key)
        #expect(keys == ["/db/host", "/db/port"])
        #expect(try await cli.run("get", "/db/port", "-f", "json").envelope().item?.contentType == "application/json")
    }

    @Test("a malformed import file changes nothing", arguments: [
        ("bad.json", "{not json"), ("bad.yaml", "items: [unclosed"), ("list.json", "[1, 2]"),
        ("items.json", #"{"items": [{"key": "/a"}]}"#), ("key.json", #"{"items": [{"key": "a//b", "value": "x"}]}"#),
        ("bad.env", "NOT A LINE"),
    ])
    func malformed(file: String, contents: String) async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "c")
        try await cli.run("set", "c", "keep", "me")
        let path = try cli.write(file, Data(contents.utf8))
        let result = try await cli.run("import", "c", path)
        #expect(result.status == 2, "stderr: \(result.stderr)")
        #expect(result.stderr.contains(file))
        #expect(try await cli.run("info", "c", "-f", "json").envelope().revision == 1)
    }
}
