import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// Value and file formats in the everyday CLI: what a command takes for a content type,
/// what it makes of a value that looks like JSON, and how files map to keys.
@Suite("CLI: value and file formats")
struct FormatTrapsTests {
    @Test("--content-type takes json, yaml, text and binary as well as media types, in set and txn")
    func shortContentTypes() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "c")
        let expected = ["json": "application/json", "yaml": "application/yaml", "text": "text/plain", "binary": "application/octet-stream"]
        for (name, media) in expected {
            let value = name == "json" ? #"{"a": 1}"# : "v"
            #expect(try await cli.run("set", "c", "/\(name)", value, "--content-type", name).status == 0)
            #expect(try await cli.run("get", "c", "/\(name)", "-f", "json").envelope().item?.contentType == media)
        }
        #expect(try await cli.run("set", "c", "/full", "v", "--content-type", "text/csv").status == 0)
        #expect(try await cli.run("get", "c", "/full", "-f", "json").envelope().item?.contentType == "text/csv")

        let txn = try await cli.run(["txn", "c", "-i"], stdin: Data("\nput /t 1 --content-type json\n\n".utf8))
        #expect(txn.status == 0, "stderr: \(txn.stderr)")
        #expect(try await cli.run("get", "c", "/t", "-f", "json").envelope().item?.contentType == "application/json")

        let unknown = try await cli.run("set", "c", "/u", "v", "--content-type", "jsn")
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("json, yaml, text, binary"), "stderr: \(unknown.stderr)")
        #expect(unknown.stderr.split(separator: "\n").count == 1)
        #expect(try await cli.run("get", "c", "/u").status == 3)
    }

    @Test("a value that looks like JSON but is not is stored as text with a note naming the byte; -d FILE.json is JSON")
    func brokenJSON() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "c")
        let broken = try await cli.run("set", "c", "/k", #"{"db": }"#)
        #expect(broken.status == 0)
        #expect(broken.stderr.contains("stored as text: it is not valid JSON"), "stderr: \(broken.stderr)")
        #expect(broken.stderr.contains("at byte 7"), "stderr: \(broken.stderr)")
        #expect(try await cli.run("get", "c", "/k").stdout == "{\"db\": }\n")
        let fine = try await cli.run("set", "c", "/ok", #"{"db": 1}"#)
        #expect(fine.stderr.isEmpty, "stderr: \(fine.stderr)")
        #expect(try await cli.run("set", "c", "/plain", "hello").stderr.isEmpty)

        let good = try cli.write("good.json", Data(#"{"port": 5432}"#.utf8))
        #expect(try await cli.run("set", "c", "/good", "-d", good).status == 0)
        #expect(try await cli.run("get", "c", "/good", "-f", "json").envelope().item?.contentType == "application/json")
        let yaml = try cli.write("conf.yml", Data("port: 5432\n".utf8))
        #expect(try await cli.run("set", "c", "/yaml", "-d", yaml).status == 0)
        #expect(try await cli.run("get", "c", "/yaml", "-f", "json").envelope().item?.contentType == "application/yaml")

        let bad = try cli.write("bad.json", Data(#"{"port": }"#.utf8))
        let refused = try await cli.run("set", "c", "/bad", "-d", bad)
        #expect(refused.status == 2, "stderr: \(refused.stderr)")
        #expect(try await cli.run("get", "c", "/bad").status == 3)
        let text = try await cli.run("set", "c", "/bad", "-d", bad, "--content-type", "text")
        #expect(text.status == 0)
        #expect(try await cli.run("get", "c", "/bad", "-f", "json").envelope().item?.contentType == "text/plain")
    }

    @Test("export --prefix writes only the keys under it, in every format", arguments: ["json", "yaml", "env"])
    func exportPrefix(format: String) async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "app")
        try await cli.run("create", "copy")
        try await cli.run("set", "app", "/db/host", "db1")
        try await cli.run("set", "app", "/db/port", "5432")
        try await cli.run("set", "app", "/dbx", "outside")
        try await cli.run("set", "app", "/web/port", "80")
        let file = cli.directory.appendingPathComponent("db.\(format)").path
        let export = try await cli.run("export", "app", "--prefix", "/db/", "--to", format, "-o", file)
        #expect(export.status == 0, "stderr: \(export.stderr)")
        let written = try String(contentsOfFile: file, encoding: .utf8)
        // Keys outside the prefix by their names and values (an export's time may hold "80").
        #expect(!written.contains("outside") && !written.localizedCaseInsensitiveContains("web"), "\(written)")
        if format == "env" {
            #expect(written == "DB_HOST=db1\nDB_PORT=5432\n")
            return
        }
        #expect(try await cli.run("import", "copy", file).status == 0)
        #expect(try await cli.run("ls", "copy", "-r", "-f", "json").envelope().items?.map(\.key) == ["/db/host", "/db/port"])
    }

    @Test("an env file imports as the keys export --to env named: DB_HOST is /db/host, and diff sees no difference")
    func envRoundTrip() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "app")
        try await cli.run("create", "copy")
        try await cli.run("set", "app", "/db/host", "db1")
        try await cli.run("set", "app", "/greeting", "hello world")
        let file = cli.directory.appendingPathComponent("app.env").path
        #expect(try await cli.run("export", "app", "--to", "env", "-o", file).status == 0)
        let imported = try await cli.run("import", "copy", file)
        #expect(imported.status == 0, "stderr: \(imported.stderr)")
        #expect(try await cli.run("ls", "copy", "-r", "-f", "json").envelope().items?.map(\.key) == ["/db/host", "/greeting"])
        #expect(try await cli.run("diff", "copy", file).status == 0)
        #expect(try await cli.run("diff", "app", "copy").status == 0)

        let clash = try cli.write("clash.env", Data("A_B=1\nA__B=2\n".utf8))
        let refused = try await cli.run("import", "copy", clash)
        #expect(refused.status == 2 && refused.stderr.contains("both become key /a/b"), "stderr: \(refused.stderr)")
    }

    @Test("a nested mapping imports as key paths, as set --document writes it; a mapping of /paths keeps its meaning", arguments: ["json", "yaml"])
    func nestedImport(format: String) async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "c")
        let text = format == "json" ? #"{"db": {"host": "x", "port": 5432}, "debug": false}"# : "db:\n  host: x\n  port: 5432\ndebug: false\n"
        let file = try cli.write("nested.\(format)", Data(text.utf8))
        let imported = try await cli.run("import", "c", file)
        #expect(imported.status == 0, "stderr: \(imported.stderr)")
        let items = try await cli.run("ls", "c", "-r", "-f", "json").envelope().items ?? []
        #expect(items.map(\.key) == ["/db/host", "/db/port", "/debug"])
        #expect(try await cli.run("get", "c", "/db/port", "-f", "json").envelope().item?.contentType == "application/json")
        #expect(try await cli.run("get", "c", "/db/host").stdout == "x\n")
        #expect(try await cli.run("diff", "c", file).status == 0, "diff reads the nested file as import does")

        let paths = try cli.write("paths.json", Data(#"{"/svc/cfg": {"a": 1}}"#.utf8))
        #expect(try await cli.run("import", "c", paths).status == 0)
        #expect(try await cli.run("get", "c", "/svc/cfg").stdout == #"{"a":1}"# + "\n")
    }
}
