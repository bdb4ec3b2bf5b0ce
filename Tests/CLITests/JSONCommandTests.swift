import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// JSON in values through the built binary on a SQLite file: values checked by their
/// content type, `get --path`, `patch` (merge and JSON patch) and prefixes as documents.
@Suite("CLI: JSON values, patches and documents")
struct JSONCommandTests {
    static let settings = #"{"db":{"host":"db1","port":5432},"debug":false,"name":"shop"}"#

    /// A runner with config `app` selected and /app/settings holding ``settings`` as JSON.
    static func runner() async throws -> CLIRunner {
        let cli = try CLIRunner()
        try await cli.run("create", "app")
        try await cli.run("use", "app")
        let set = try await cli.run("set", "app/settings", settings, "--content-type", "application/json")
        try #require(set.status == 0, "\(set.stderr)")
        return cli
    }

    @Test("a value whose content type is JSON must be JSON: refused with its line and column, exit 2, nothing written")
    func invalidJSONRefused() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        let bad = try await cli.run("set", "app/settings", "{\n  \"db\": {\"port\": 5433},\n  \"name\" \"x\"\n}", "--content-type", "application/json")
        #expect(bad.status == 2)
        #expect(bad.stderr.hasPrefix("discfg: value of /app/settings is not valid JSON: line 3, column 10:"), "\(bad.stderr)")
        #expect(bad.stderr.split(separator: "\n").count == 1, "one line: \(bad.stderr)")
        #expect(try await cli.run("get", "app/settings").stdout == Self.settings + "\n")
        // Any +json type, and a file, are checked the same way.
        let file = try cli.write("bad.json", Data("[1, 2,]".utf8))
        let typed = try await cli.run("set", "other", "-d", file, "--content-type", "application/vnd.shop+json; charset=utf-8")
        #expect(typed.status == 2 && typed.stderr.contains("line 1, column 7"), "\(typed.stderr)")
        #expect(try await cli.run("get", "other").status == 3)
        // Without a JSON content type, any bytes are a value.
        #expect(try await cli.run("set", "other", "[1, 2,]").status == 0)
    }

    @Test("get --path prints a string as text and other JSON compactly, -f json as the item's value; at a past revision too")
    func pointerReads() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("get", "app/settings", "--path", "/db/host").stdout == "db1\n")
        #expect(try await cli.run("get", "app/settings", "--path", "/db/port").stdout == "5432\n")
        #expect(try await cli.run("get", "app/settings", "--path", "/db").stdout == #"{"host":"db1","port":5432}"# + "\n")
        #expect(try await cli.run("get", "app/settings", "--path", "/debug").stdout == "false\n")
        #expect(try await cli.run("get", "app/settings", "--path", "").stdout == Self.settings + "\n", "the empty pointer is the whole value")
        #expect(try await cli.run("get", "app/settings", "--path", "/db/host", "--raw").stdout == #""db1""#, "--raw: the part as JSON, as REST's ?path&raw")
        #expect(try await cli.run("get", "app/settings", "--path", "/db", "--raw").stdout == #"{"host":"db1","port":5432}"#)

        let envelope = try await cli.run("get", "app/settings", "--path", "/db", "-f", "json").envelope()
        #expect(envelope.item?.key == "/app/settings")
        #expect(envelope.item?.value == #"{"host":"db1","port":5432}"#)
        #expect(envelope.item?.contentType == "application/json")
        #expect(envelope.item?.version == 1)

        try await cli.run("set", "app/settings", #"{"db":{"host":"db2","port":6543}}"#, "--content-type", "application/json")
        #expect(try await cli.run("get", "app/settings", "--path", "/db/host").stdout == "db2\n")
        #expect(try await cli.run("get", "app/settings", "--path", "/db/host", "--revision", "1").stdout == "db1\n")

        let missing = try await cli.run("get", "app/settings", "--path", "/db/user")
        #expect(missing.status == 3)
        #expect(missing.stderr == "discfg: path \"/db/user\" names nothing in the value of /app/settings\n", "\(missing.stderr)")
        #expect(try await cli.run("get", "app/settings", "--path", "/debug", "--revision", "2").status == 3, "removed by the second set")
        let notPointer = try await cli.run("get", "app/settings", "--path", "db")
        #expect(notPointer.status == 2 && notPointer.stderr.contains("not a JSON Pointer"), "\(notPointer.stderr)")
        try await cli.run("set", "plain", "hello")
        let notJSON = try await cli.run("get", "plain", "--path", "/a")
        #expect(notJSON.status == 2 && notJSON.stderr.contains("/plain is not JSON"), "\(notJSON.stderr)")
        #expect(try await cli.run("get", "absent", "--path", "/a").status == 3)
    }

    @Test("patch: a merge patch from the argument, a file or standard input; a JSON patch; conditions; -f json")
    func patches() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        let merged = try await cli.run("patch", "app/settings", #"{"db":{"port":5433},"debug":null}"#)
        #expect(merged.status == 0, "\(merged.stderr)")
        #expect(merged.stdout == #"patched /app/settings = {"db":{"host":"db1","port":5433},"name":"shop"} (version 2, revision 2)"# + "\n")
        let item = try await cli.run("get", "app/settings", "-f", "json").envelope().item
        #expect(item?.value == #"{"db":{"host":"db1","port":5433},"name":"shop"}"#)
        #expect(item?.contentType == "application/json", "the key keeps its content type")

        let file = try cli.write("merge.json", Data(#"{"name": "store"}"#.utf8))
        #expect(try await cli.run("patch", "app/settings", "-d", file).status == 0)
        #expect(try await cli.run(["patch", "app/settings"], stdin: Data(#"{"tier": 2}"#.utf8)).status == 0)
        #expect(try await cli.run("get", "app/settings", "--path", "/name").stdout == "store\n")
        #expect(try await cli.run("get", "app/settings", "--path", "/tier").stdout == "2\n")

        let ops = try cli.write("ops.json", Data(#"[{"op": "test", "path": "/db/port", "value": 5433}, {"op": "replace", "path": "/db/port", "value": 5434}, {"op": "add", "path": "/tags", "value": ["a"]}]"#.utf8))
        let json = try await cli.run("patch", "app/settings", "--json-patch", "-d", ops, "-f", "json").envelope()
        #expect(json.action == "patch")
        #expect(json.item?.version == 5 && json.prevItem?.version == 4)
        #expect(json.revision == 5)
        #expect(try await cli.run("get", "app/settings", "--path", "/db/port").stdout == "5434\n")
        #expect(try await cli.run("get", "app/settings", "--path", "/tags").stdout == #"["a"]"# + "\n")

        // --if-version and the other conditions of set; a failed one changes nothing.
        let stale = try await cli.run("patch", "app/settings", #"{"x":1}"#, "--if-version", "4")
        #expect(stale.status == 4 && stale.stderr.contains("condition failed"), "\(stale.stderr)")
        #expect(try await cli.run("patch", "app/settings", #"{"x":1}"#, "--if-version", "5").status == 0)
        #expect(try await cli.run("patch", "app/settings", #"{"x":2}"#, "--if-mod-revision", "6").status == 0)
        let absent = try await cli.run("patch", "app/settings", #"{"x":3}"#, "--if-absent")
        #expect(absent.status == 2 && absent.stderr.contains("--if-absent"), "\(absent.stderr)")
        #expect(try await cli.run("get", "app/settings", "--path", "/x").stdout == "2\n")
    }

    @Test("a patch that does not apply (failed test, missing path, value not JSON) exits 4 and changes nothing; an absent key exits 3")
    func failedPatches() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        let failing = #"[{"op": "replace", "path": "/db/port", "value": 1}, {"op": "test", "path": "/db/host", "value": "db9"}]"#
        let test = try await cli.run("patch", "app/settings", "--json-patch", failing)
        #expect(test.status == 4)
        #expect(test.stderr.hasPrefix("discfg: the patch does not apply to /app/settings:"), "\(test.stderr)")
        #expect(test.stderr.contains("nothing was changed"))
        let path = try await cli.run("patch", "app/settings", "--json-patch", #"[{"op": "remove", "path": "/db/user"}]"#)
        #expect(path.status == 4 && path.stderr.contains("/db/user"), "\(path.stderr)")
        let current = try await cli.run("get", "app/settings", "-f", "json").envelope().item
        #expect(current?.value == Self.settings && current?.version == 1, "the failed patches left the value as it was")

        try await cli.run("set", "plain", "hello")
        let notJSON = try await cli.run("patch", "plain", #"{"a":1}"#)
        #expect(notJSON.status == 4 && notJSON.stderr.contains("not JSON"), "\(notJSON.stderr)")
        #expect(try await cli.run("get", "plain").stdout == "hello\n")
        #expect(try await cli.run("patch", "absent", #"{"a":1}"#).status == 3)

        let badPatch = try await cli.run("patch", "app/settings", #"{"a":"#)
        #expect(badPatch.status == 2 && badPatch.stderr.contains("the patch (the argument) is not valid JSON: line 1, column 6"), "\(badPatch.stderr)")
        let notOps = try await cli.run("patch", "app/settings", "--json-patch", #"{"op": "remove"}"#)
        #expect(notOps.status == 2 && notOps.stderr.contains("the JSON patch is not valid"), "\(notOps.stderr)")
        #expect(try await cli.run("patch", "app/settings").status == 2, "no patch given")
        #expect(try await cli.run("info", "-f", "json").envelope().revision == 2, "only the set of /plain changed the config")
    }

    @Test("documents: get --document, edit, set --document writes only the keys that changed at one revision; --replace deletes")
    func documentRoundTrip() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        try await cli.run("set", "app/db/host", "db1")
        try await cli.run("set", "app/db/port", "5432", "--content-type", "application/json")
        try await cli.run("set", "app/blob", "-d", try cli.write("blob.bin", Data([0xFF, 0x00, 0x01])))
        try await cli.run("set", "other", "outside")

        let read = try await cli.run("get", "/app/", "--document")
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout == """
        {
          "blob": {
            "$base64": "/wAB"
          },
          "db": {
            "host": "db1",
            "port": 5432
          },
          "settings": {
            "db": {
              "host": "db1",
              "port": 5432
            },
            "debug": false,
            "name": "shop"
          }
        }

        """)
        let compact = try await cli.run("get", "/app", "--document", "--raw").stdout
        #expect(compact == #"{"blob":{"$base64":"/wAB"},"db":{"host":"db1","port":5432},"settings":{"db":{"host":"db1","port":5432},"debug":false,"name":"shop"}}"#)
        #expect(try await cli.run("get", "/app/", "--document", "--path", "/db/port").stdout.hasPrefix("5432"))

        // Edit: one member changed, one added; the rest as read.
        let edited = read.stdout.replacingOccurrences(of: "\"host\": \"db1\",\n    \"port\": 5432", with: "\"host\": \"db2\",\n    \"port\": 5432,\n    \"user\": \"shop\"")
        #expect(edited != read.stdout)
        let file = try cli.write("app.json", Data(edited.utf8))
        let before = try await cli.run("info", "-f", "json").envelope().revision ?? .zero
        let written = try await cli.run("set", "/app/", "--document", "-d", file)
        #expect(written.stdout == "set the document under /app/: 2 keys written, 0 deleted, 3 unchanged (revision \(before.rawValue + 1))\n", "\(written.stdout)\(written.stderr)")
        let items = try await cli.run("ls", "-r", "/app", "-f", "json").envelope().items ?? []
        let revisions = Dictionary(uniqueKeysWithValues: items.map { ($0.key, $0.modRevision.rawValue) })
        #expect(revisions["/app/db/host"] == before.rawValue + 1 && revisions["/app/db/user"] == before.rawValue + 1, "\(revisions)")
        #expect(revisions["/app/db/port"] == 3 && revisions["/app/settings"] == 1 && revisions["/app/blob"] == 4, "unchanged keys keep their revision: \(revisions)")
        #expect(try await cli.run("get", "app/db/user", "-f", "json").envelope().item?.contentType == nil, "a new string is a text value")
        #expect(try await cli.run("get", "app/blob", "--raw").stdoutData == Data([0xFF, 0x00, 0x01]))

        // The same document again changes nothing.
        let again = try await cli.run("set", "/app/", "--document", "-d", file, "-f", "json").envelope()
        #expect(again.action == "document" && (again.events ?? []).isEmpty && again.unchanged == 5 && again.revision == before.next)

        // --replace deletes what the document lacks, in the same revision as its writes.
        let smaller = try await cli.run(["set", "/app/", "--document", "--replace", "-f", "json"], stdin: Data(#"{"db": {"host": "db3"}, "settings": {"name": "shop"}}"#.utf8)).envelope()
        #expect(Set(smaller.events?.map(\.revision) ?? []) == [before.next.next])
        #expect(smaller.events?.filter { $0.type == .delete }.map(\.key) == ["/app/blob", "/app/db/port", "/app/db/user"])
        #expect(try await cli.run("get", "/app/", "--document", "--raw").stdout == #"{"db":{"host":"db3"},"settings":{"name":"shop"}}"#)
        #expect(try await cli.run("get", "other").stdout == "outside\n", "keys outside the prefix are left alone")

        // The document as it was, at a past revision.
        #expect(try await cli.run("get", "/app/", "--document", "--raw", "--revision", "\(before.rawValue)").stdout == compact)
    }

    @Test("set --document refuses what is not a JSON object, with the file's line and column, and flags that do not apply")
    func documentRefusals() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        let file = try cli.write("bad.json", Data("{\n  \"a\": [1,\n}".utf8))
        let bad = try await cli.run("set", "/app/", "--document", "-d", file)
        #expect(bad.status == 2 && bad.stderr.hasPrefix("discfg: \(file) is not valid JSON: line 3, column 1"), "\(bad.stderr)")
        #expect(try await cli.run("set", "/app/", "--document", "[1]").status == 2)
        #expect(try await cli.run("set", "/app/", "--document", "{}", "--ttl", "5m").status == 2)
        #expect(try await cli.run("set", "/app/", "{}", "--replace").status == 2, "--replace without --document")
        try await cli.run("set", "app/settings/extra", "x")
        let clash = try await cli.run("get", "/app/", "--document")
        #expect(clash.status == 2 && clash.stderr.contains("/app/settings is both a key and a directory"), "\(clash.stderr)")
        #expect(try await cli.run("info", "-f", "json").envelope().revision == 2)
    }
}
