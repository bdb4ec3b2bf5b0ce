import DiscfgCore
import DiscfgJSON
import DiscfgTestSupport
import Foundation
import Testing

/// JSON Schemas through the built binary on a SQLite file: attaching them to keys and
/// prefixes, every kind of change checked against them, offline validation, and a set
/// refused through a live `discfg serve`.
@Suite("CLI: JSON Schemas")
struct SchemaCommandTests {
    static let settingsSchema = #"{"type": "object", "required": ["db"], "properties": {"db": {"type": "object", "properties": {"port": {"type": "integer", "maximum": 65535}}}, "debug": {"type": "boolean"}}}"#
    static let appSchema = #"{"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}"#

    /// `KEY: POINTER: message (keyword)`, or `KEY: message (keyword)` for the whole value.
    static func isViolation(_ line: some StringProtocol, key: String, pointer: String, keyword: String) -> Bool {
        let head = pointer.isEmpty ? "\(key): " : "\(key): \(pointer): "
        return line.hasPrefix(head) && line.hasSuffix(" (\(keyword))") && line.count > head.count + keyword.count + 4
    }

    static func lines(_ text: String) -> [Substring] { text.split(separator: "\n") }

    /// A schema's refusal as the CLI says it: one line, `discfg: refused by the schema on
    /// SCHEMA: …; nothing changed`, saying each of `says`.
    static func isRefusal(_ stderr: String, schema: String, says: [String]) -> Bool {
        lines(stderr).count == 1 && stderr.hasPrefix("discfg: refused by the schema on \(schema): ") && stderr.hasSuffix("; nothing changed\n")
            && says.allSatisfy { stderr.contains($0) }
    }

    /// Config `app` selected, with the two schema files written and /app/name set.
    static func runner() async throws -> CLIRunner {
        let cli = try CLIRunner()
        try await cli.run("create", "app")
        try await cli.run("use", "app")
        _ = try cli.write("settings.schema.json", Data(settingsSchema.utf8))
        _ = try cli.write("app.schema.json", Data(appSchema.utf8))
        return cli
    }

    @Test("schema set is refused naming the values that break it; --force attaches it and names them; get, ls and rm")
    func attachAndRemove() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        try await cli.run("set", "app/settings", #"{"db": {"port": 70000}}"#, "--content-type", "application/json")

        let refused = try await cli.run("schema", "set", "app/settings", "settings.schema.json")
        #expect(refused.status == 2)
        #expect(Self.isRefusal(refused.stderr, schema: "/app/settings", says: ["/db/port must be ≤ 65535"]), "\(refused.stderr)")
        #expect(try await cli.run("schema", "get", "app/settings").status == 3, "nothing was attached")

        let forced = try await cli.run("schema", "set", "app/settings", "settings.schema.json", "--force")
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(forced.stdout == "schema of /app/settings set (revision 2)\n")
        let warning = Self.lines(forced.stderr)
        #expect(warning.count == 2 && warning[0] == "discfg: warning: attached with --force; 1 violation of it now:", "\(forced.stderr)")
        #expect(warning.count == 2 && Self.isViolation(warning[1], key: "/app/settings", pointer: "/db/port", keyword: "maximum"))
        let envelope = try await cli.run("schema", "set", "app/settings", "settings.schema.json", "--force", "-f", "json").envelope()
        #expect(envelope.action == "schema-set" && envelope.revision == 3)
        #expect(envelope.item?.key == "/.discfg/schema/%2Fapp%2Fsettings")
        #expect(envelope.violations?.map(\.pointer) == ["/db/port"] && envelope.violations?.map(\.keyword) == ["maximum"])

        #expect(try await cli.run("schema", "get", "app/settings").stdout == Self.settingsSchema + "\n")
        // What breaks it now must be mended before anything else may change it.
        #expect(try await cli.run("patch", "app/settings", #"{"debug": true}"#).status == 2)
        #expect(try await cli.run("patch", "app/settings", #"{"db": {"port": 5432}}"#).status == 0)

        // A prefix's schema checks the keys under it as one document.
        let missing = try await cli.run("schema", "set", "/app/", "app.schema.json")
        #expect(missing.status == 2)
        #expect(Self.isRefusal(missing.stderr, schema: "/app/", says: [#""name" is required"#]), "\(missing.stderr)")
        try await cli.run("set", "app/name", "shop")
        #expect(try await cli.run("schema", "set", "/app/", "app.schema.json").status == 0)

        let table = try await cli.run("schema", "ls")
        #expect(Self.lines(table.stdout).first?.hasPrefix("TARGET") == true)
        #expect(Self.lines(table.stdout).dropFirst().map { $0.split(separator: " ").first.map(String.init) } == ["/app/", "/app/settings"], "\(table.stdout)")
        let listed = try await cli.run("schema", "ls", "-f", "json").envelope()
        #expect(listed.action == "schemas" && listed.schemas?.map(\.target) == ["/app/", "/app/settings"])
        #expect(listed.schemas?.last?.schema == (try JSONParser.parse(Array(Self.settingsSchema.utf8))))
        #expect(try await cli.run("schema", "get", "app/settings", "--revision", "3").stdout == Self.settingsSchema + "\n")
        #expect(try await cli.run("schema", "get", "/app/", "--revision", "3").status == 3, "not attached yet at revision 3")

        let removed = try await cli.run("schema", "rm", "/app/")
        #expect(removed.status == 0 && removed.stdout.hasPrefix("schema of /app/ removed (revision "), "\(removed.stdout)\(removed.stderr)")
        let again = try await cli.run("schema", "rm", "/app/")
        #expect(again.status == 3 && again.stderr.contains("has no schema"), "\(again.stderr)")
        #expect(try await cli.run("delete", "app/name").status == 0, "without the prefix's schema, name may go")
        #expect(try await cli.run("schema", "ls", "-f", "json").envelope().schemas?.count == 1)
    }

    @Test("schema set refuses a file that is not JSON or not a schema, naming the file, and a reserved target")
    func badSchemas() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        let notJSON = try cli.write("broken.json", Data("{\n  \"type\": \"object\",\n}".utf8))
        let broken = try await cli.run("schema", "set", "app/settings", notJSON)
        #expect(broken.status == 2 && broken.stderr.hasPrefix("discfg: \(notJSON): the schema is not valid JSON: line 3, column 1"), "\(broken.stderr)")
        _ = try cli.write("wrong.json", Data(#"{"type": 12}"#.utf8))
        let wrong = try await cli.run("schema", "set", "app/settings", "wrong.json")
        #expect(wrong.status == 2 && wrong.stderr.hasPrefix("discfg: wrong.json: the schema is not a valid JSON Schema"), "\(wrong.stderr)")
        #expect(try await cli.run("schema", "set", "/.discfg/x", "app.schema.json").status == 2)
        #expect(try await cli.run("schema", "set", "app/settings").status == 2, "no file")
        #expect(try await cli.run("info", "-f", "json").envelope().revision == 0)
    }

    @Test("a change that breaks a schema exits 2 with one sentence naming the schema, where and why, and changes nothing: set, patch, delete, txn, import, set --document")
    func everyChangeChecked() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        try await cli.run("set", "app/name", "shop")
        try await cli.run("set", "app/settings", #"{"db": {"port": 5432}, "debug": false}"#, "--content-type", "application/json")
        #expect(try await cli.run("schema", "set", "app/settings", "settings.schema.json").status == 0)
        #expect(try await cli.run("schema", "set", "/app/", "app.schema.json").status == 0)
        let revision = try #require(try await cli.run("info", "-f", "json").envelope().revision)

        let set = try await cli.run("set", "app/settings", #"{"db": {"port": 70000}, "debug": "yes"}"#, "--content-type", "application/json")
        #expect(set.status == 2 && set.stdout.isEmpty)
        #expect(Self.isRefusal(set.stderr, schema: "/app/settings", says: ["/db/port must be ≤ 65535", "/debug must be boolean"]), "\(set.stderr)")
        let text = try await cli.run("set", "app/settings", "not json")
        #expect(text.status == 2 && Self.isRefusal(text.stderr, schema: "/app/settings", says: ["value is not JSON"]), "a schema asks for JSON: \(text.stderr)")

        let patch = try await cli.run("patch", "app/settings", #"{"db": {"port": "x"}}"#)
        #expect(patch.status == 2 && Self.isRefusal(patch.stderr, schema: "/app/settings", says: ["/db/port must be integer"]), "\(patch.stderr)")
        let jsonPatch = try await cli.run("patch", "app/settings", "--json-patch", #"[{"op": "remove", "path": "/db"}]"#)
        #expect(jsonPatch.status == 2 && Self.isRefusal(jsonPatch.stderr, schema: "/app/settings", says: [#""db" is required"#]), "\(jsonPatch.stderr)")

        let delete = try await cli.run("delete", "app/name")
        #expect(delete.status == 2 && Self.isRefusal(delete.stderr, schema: "/app/", says: [#""name" is required"#]), "\(delete.stderr)")
        #expect(try await cli.run("delete", "--prefix", "/app", "--yes").status == 2)

        let txn = try cli.write("txn.json", Data(#"{"success": [{"op": "put", "key": "/app/name", "value": "ok"}, {"op": "patch", "key": "/app/settings", "merge": {"db": {"port": 99999}}}]}"#.utf8))
        let ran = try await cli.run("txn", "--file", txn)
        #expect(ran.status == 2 && Self.isRefusal(ran.stderr, schema: "/app/settings", says: ["/db/port must be ≤ 65535"]), "\(ran.stderr)")

        let snapshot = try cli.write("in.json", Data(#"{"/app/settings": {"db": {"port": 70000}}}"#.utf8))
        let imported = try await cli.run("import", snapshot)
        #expect(imported.status == 2 && Self.isRefusal(imported.stderr, schema: "/app/settings", says: ["/db/port must be ≤ 65535"]), "\(imported.stderr)")

        let document = try await cli.run("set", "/app/", "--document", #"{"name": 7}"#)
        #expect(document.status == 2 && Self.isRefusal(document.stderr, schema: "/app/", says: ["/name must be string"]), "\(document.stderr)")

        // -f json: the error envelope lists the violations.
        let json = try await cli.run("set", "app/settings", #"{"db": {"port": 70000}}"#, "--content-type", "application/json", "-f", "json")
        #expect(json.status == 2)
        let error = try #require(try json.envelope().error)
        #expect(error.code == .schemaViolation && error.violations?.map(\.keyword) == ["maximum"])

        #expect(try await cli.run("info", "-f", "json").envelope().revision == revision, "nothing was changed")
        #expect(try await cli.run("get", "app/name").stdout == "shop\n")
        #expect(try await cli.run("get", "app/settings", "--path", "/db/port").stdout == "5432\n")
        // A change that meets the schemas goes through.
        #expect(try await cli.run("patch", "app/settings", #"{"db": {"port": 6432}}"#).status == 0)
    }

    @Test("schema validate works offline: exit 0 when every document is valid, else 2 with DOC: POINTER: message (keyword) lines")
    func validateOffline() async throws {
        var cli = try await Self.runner()
        defer { cli.cleanUp() }
        cli.environment["DISCFG_STORE"] = "sqlite://\(cli.directory.path)/never/store.db"
        _ = try cli.write("good.json", Data(#"{"db": {"port": 5432}}"#.utf8))
        _ = try cli.write("bad.json", Data(#"{"db": {"port": 70000}, "debug": "yes"}"#.utf8))

        let valid = try await cli.run("schema", "validate", "settings.schema.json", "good.json")
        #expect(valid.status == 0 && valid.stdout == "good.json: valid\n" && valid.stderr.isEmpty, "\(valid.stderr)")
        let piped = try await cli.run(["schema", "validate", "settings.schema.json", "-"], stdin: Data(#"{"db": {}}"#.utf8))
        #expect(piped.status == 0 && piped.stdout == "standard input: valid\n", "\(piped.stderr)")

        let invalid = try await cli.run("schema", "validate", "settings.schema.json", "good.json", "bad.json")
        #expect(invalid.status == 2)
        #expect(invalid.stdout == "good.json: valid\n")
        let lines = Self.lines(invalid.stderr)
        #expect(lines.count == 2, "\(invalid.stderr)")
        #expect(lines.contains { Self.isViolation($0, key: "bad.json", pointer: "/db/port", keyword: "maximum") }, "\(invalid.stderr)")
        #expect(lines.contains { Self.isViolation($0, key: "bad.json", pointer: "/debug", keyword: "type") }, "\(invalid.stderr)")
        let missingRoot = try await cli.run(["schema", "validate", "settings.schema.json", "-"], stdin: Data("[]".utf8))
        #expect(missingRoot.status == 2 && Self.isViolation(missingRoot.stderr.dropLast(), key: "standard input", pointer: "", keyword: "type"), "\(missingRoot.stderr)")

        let json = try await cli.run("schema", "validate", "settings.schema.json", "bad.json", "-f", "json")
        #expect(json.status == 2)
        #expect(try json.envelope().error?.violations?.map(\.key) == ["bad.json", "bad.json"])
        #expect(try await cli.run("schema", "validate", "settings.schema.json", "good.json", "-f", "json").envelope().action == "schema-validate")

        _ = try cli.write("notjson.json", Data("{\"db\": \n  [1,}".utf8))
        let notJSON = try await cli.run("schema", "validate", "settings.schema.json", "good.json", "notjson.json")
        #expect(notJSON.status == 2 && notJSON.stderr.hasPrefix("discfg: notjson.json is not valid JSON: line 2, column 6"), "\(notJSON.stderr)")
        _ = try cli.write("broken.schema.json", Data("{\n  \"type\": \"object\"\n  \"required\": []}".utf8))
        let broken = try await cli.run("schema", "validate", "broken.schema.json", "good.json")
        #expect(broken.status == 2 && broken.stderr.hasPrefix("discfg: broken.schema.json: the schema is not valid JSON: line 3, column 3"), "\(broken.stderr)")
        _ = try cli.write("wrong.schema.json", Data(#"{"minimum": "zero"}"#.utf8))
        let wrong = try await cli.run("schema", "validate", "wrong.schema.json", "good.json")
        #expect(wrong.status == 2 && wrong.stderr.hasPrefix("discfg: wrong.schema.json: the schema is not a valid JSON Schema"), "\(wrong.stderr)")
        #expect(try await cli.run("schema", "validate", "settings.schema.json").status == 2, "no document")
        #expect(try await cli.run("schema", "validate", "settings.schema.json", "absent.json").status == 2)
        #expect(!FileManager.default.fileExists(atPath: cli.directory.appendingPathComponent("never").path), "no store was opened")
    }

    @Test("through a live serve: schema set, get, ls and rm; set, patch and set --document refused with the violations; get --path and --document", .timeLimit(.minutes(2)))
    func throughServer() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        let (server, port) = try await cli.serve()
        defer { Task { await server.kill() } }
        var remote = cli
        remote.environment["DISCFG_STORE"] = "http://127.0.0.1:\(port)"
        #expect(try await remote.run("set", "app/settings", #"{"db": {"port": 70000}}"#, "--content-type", "application/json").status == 0)

        let refusal = try await remote.run("schema", "set", "app/settings", "settings.schema.json")
        #expect(refusal.status == 2 && Self.isRefusal(refusal.stderr, schema: "/app/settings", says: ["/db/port must be ≤ 65535"]), "\(refusal.stderr)")
        let forced = try await remote.run("schema", "set", "app/settings", "settings.schema.json", "--force", "-f", "json")
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(try forced.envelope().violations?.map(\.pointer) == ["/db/port"])
        #expect(try await remote.run("schema", "get", "app/settings").stdout == Self.settingsSchema + "\n")
        #expect(try await remote.run("schema", "ls", "-f", "json").envelope().schemas?.map(\.target) == ["/app/settings"])

        let set = try await remote.run("set", "app/settings", #"{"db": {"port": 70001}, "debug": 1}"#, "--content-type", "application/json")
        #expect(set.status == 2)
        #expect(Self.isRefusal(set.stderr, schema: "/app/settings", says: ["/db/port must be ≤ 65535", "/debug must be boolean"]), "\(set.stderr)")
        let patch = try await remote.run("patch", "app/settings", #"{"debug": "yes"}"#)
        #expect(patch.status == 2 && Self.isRefusal(patch.stderr, schema: "/app/settings", says: ["/debug must be boolean"]), "\(patch.stderr)")
        #expect(try await remote.run("patch", "app/settings", #"{"db": {"port": 5432}}"#).status == 0)
        let failed = try await remote.run("patch", "app/settings", "--json-patch", #"[{"op": "test", "path": "/db/port", "value": 1}]"#)
        #expect(failed.status == 4 && failed.stderr.contains("nothing was changed"), "\(failed.stderr)")
        let document = try await remote.run("set", "/app/", "--document", #"{"settings": {"db": {"port": "x"}}}"#)
        #expect(document.status == 2 && Self.isRefusal(document.stderr, schema: "/app/settings", says: ["/db/port must be integer"]), "\(document.stderr)")
        let invalid = try await remote.run("set", "app/other", "{", "--content-type", "application/json")
        #expect(invalid.status == 2 && invalid.stderr.contains("line 1, column 2"), "\(invalid.stderr)")

        #expect(try await remote.run("get", "app/settings", "--path", "/db/port").stdout == "5432\n")
        #expect(try await remote.run("get", "app/settings", "--path", "/db/host").status == 3)
        #expect(try await remote.run("set", "/app/", "--document", #"{"name": "shop"}"#).status == 0)
        #expect(try await remote.run("get", "/app/", "--document", "--raw").stdout == #"{"name":"shop","settings":{"db":{"port":5432}}}"#)
        #expect(try await remote.run("schema", "rm", "app/settings").status == 0)
        #expect(try await remote.run("schema", "rm", "app/settings").status == 3)
        // The server's file holds what the remote commands wrote.
        #expect(try await cli.run("get", "app/settings", "--path", "/db/port").stdout == "5432\n")
    }

    @Test("schema get and rm complete the config's schema targets")
    func completion() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        try await cli.run("set", "app/name", "shop")
        #expect(try await cli.run("schema", "set", "/app/", "app.schema.json").status == 0)
        #expect(try await cli.run("schema", "set", "/web", "app.schema.json", "--force").status == 0)
        let all = try await CompletionTests.complete(cli, ["schema", "get"], "positional@0", ["discfg", "schema", "get", "/"])
        #expect(all.status == 0 && all.stdoutLines == ["/app/", "/web"], "\(all.stdout)\(all.stderr)")
        let named = try await CompletionTests.complete(cli, ["schema", "rm"], "positional@0", ["discfg", "schema", "rm", "app", "/a"])
        #expect(named.stdoutLines == ["/app/"])
    }
}
