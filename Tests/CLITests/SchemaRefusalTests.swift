import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// A schema's refusal reads as one sentence naming the schema's prefix, the failing
/// JSON pointer in its document and the reason, whichever command made the change, on a
/// SQLite file and through `discfg serve` (where the violation carries its schema over
/// REST).
@Suite("CLI: a schema refusal is one sentence")
struct SchemaRefusalTests {
    static let schema = #"{"type": "object", "properties": {"db": {"type": "object", "properties": {"port": {"type": "integer", "maximum": 65535}}}}}"#
    static let sentence = "discfg: refused by the schema on /app/: /db/port must be ≤ 65535; nothing changed\n"

    static func exercise(_ cli: CLIRunner) async throws {
        let file = try cli.write("app.schema.json", Data(schema.utf8))
        for arguments in [
            ["create", "app"], ["create", "staging"],
            ["set", "app", "/app/db", #"{"port": 70000}"#, "--content-type", "json"],
            ["set", "app", "/app/db", #"{"port": 5432}"#, "--content-type", "json"],
            ["schema", "set", "app", "/app/", file],
            ["set", "staging", "/app/db", #"{"port": 70000}"#, "--content-type", "json"],
        ] {
            let result = try await cli.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        let snapshot = try cli.write("in.json", Data(#"{"/app/db": {"port": 70000}}"#.utf8))
        let document = try cli.write("doc.json", Data(#"{"db": {"port": 70000}}"#.utf8))
        let refusals: [[String]] = [
            ["set", "app", "/app/db", #"{"port": 70000}"#, "--content-type", "json"],
            ["patch", "app", "/app/db", #"{"port": 70000}"#],
            ["import", "app", snapshot],
            ["set", "app", "/app/", "--document", "-d", document],
            ["set", "app", "/app/", "--document", "-d", document, "--dry-run"],
            ["promote", "staging", "app"],
            ["rollback", "app", "--to-revision", "1", "--prefix", "/app/"],
        ]
        for arguments in refusals {
            let refused = try await cli.run(arguments)
            #expect(refused.status == 2 && refused.stderr == sentence, "\(arguments): \(refused.stderr)")
        }
        #expect(try await cli.run("get", "app", "/app/db").stdout == #"{"port": 5432}"# + "\n", "a refusal changed the value")
        let json = try await cli.run("set", "app", "/app/db", #"{"port": 70000}"#, "--content-type", "json", "-f", "json").envelope()
        #expect(json.error?.violations?.map(\.schema) == ["/app/"] && json.error?.violations?.map(\.location) == ["/db/port"], "\(String(describing: json.error))")
    }

    @Test("SQLite: set, patch, import, set --document (and its plan), promote and rollback")
    func sqlite() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await Self.exercise(cli)
    }

    @Test("discfg serve (http store): the same, the schema carried in the REST error")
    func server() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("init", "-f", "silent").status == 0)
        let (server, port) = try await cli.serve()
        try await withServer(server) { _ in
            var remote = cli
            remote.environment["DISCFG_STORE"] = "http://127.0.0.1:\(port)"
            try await Self.exercise(remote)
        }
    }

    @Test("the sentence: a key's schema, the whole value, more than three violations, and those outside a caller's scopes")
    func sentences() {
        let port = SchemaViolation(key: "/app/db", pointer: "/port", keyword: "maximum", message: "must be ≤ 65535", schema: "/app/")
        #expect(SchemaViolation.refusal([port]) == "refused by the schema on /app/: /db/port must be ≤ 65535; nothing changed")
        let whole = SchemaViolation(key: "/app/db", pointer: "", keyword: "type", message: "must be object, not string", schema: "/app/db")
        #expect(SchemaViolation.refusal([whole]) == "refused by the schema on /app/db: the value must be object, not string; nothing changed")
        let required = SchemaViolation(key: "/app/", pointer: "", keyword: "required", message: #""name" is required"#, schema: "/app/")
        #expect(SchemaViolation.refusal([required, port]) == #"refused by the schema on /app/: "name" is required, /db/port must be ≤ 65535; nothing changed"#)
        #expect(SchemaViolation.refusal([port, whole, port, port]) == "refused by the schema on /app/: /db/port must be ≤ 65535, and by the schema on /app/db: the value must be object, not string, and by the schema on /app/: /db/port must be ≤ 65535 (and 1 more); nothing changed")
        let outside = SchemaViolation(key: "", pointer: "", keyword: "scope", message: "1 more violation outside your scopes")
        #expect(SchemaViolation.refusal([port, outside]) == "refused by the schema on /app/: /db/port must be ≤ 65535; and 1 more violation outside your scopes; nothing changed")
        let odd = SchemaViolation(key: "/a~b/c", pointer: "", keyword: "type", message: "must be integer", schema: "/")
        #expect(odd.location == "/a~0b/c")
    }
}
