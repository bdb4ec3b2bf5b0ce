import DiscfgJSON
import DiscfgTestSupport
import Foundation
import Testing

/// `discfg diff A B` end to end on a SQLite file: configs, past revisions and files, what
/// it prints, and the exit codes that tell the same (0), different (1) and trouble apart.
@Suite("CLI: diff")
struct DiffCommandTests {
    /// What `diff app@3 app` prints after ``DiffScenario/write(_:_:)``.
    static let expected = [
        "--- app@3 (revision 3)",
        "+++ app (revision 7)",
        #"+ /added = "yes""#,
        #"~ /db/host: "db1" → "db2""#,
        #"- /gone = "x""#,
        "~ /settings",
        #"    /db/host: "db1" → "db2""#,
        "    /debug: removed true",
        "    /list/2: added 3",
    ]

    @Test("a config against itself, now or at its own revision, prints nothing and exits 0")
    func equal() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await DiffScenario.write(cli)
        for (a, b) in [("app", "app"), ("app@7", "app"), ("app@3", "app@3")] {
            let same = try await cli.run("diff", a, b)
            #expect(same.status == 0, "\(a) \(b): \(same.stderr)")
            #expect(same.stdoutLines.isEmpty && same.stderr.isEmpty, "\(a) \(b): \(same.stdout)")
        }
        let json = try DiffScenario.document(try await cli.run("diff", "app", "app", "-f", "json"))
        #expect(json["equal"] == .bool(true) && json["changes"] == .array([]))
    }

    @Test("a past revision against now: keys added, removed and changed, JSON members by pointer; exit 1")
    func revisions() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await DiffScenario.write(cli)
        let changed = try await cli.run("diff", "app@3", "app")
        #expect(changed.status == 1, "\(changed.stderr)")
        #expect(changed.stdoutLines == Self.expected)

        // The other way round, signs and arrows turn.
        let back = try await cli.run("diff", "app", "app@3")
        #expect(back.status == 1)
        #expect(back.stdoutLines.contains(#"- /added = "yes""#) && back.stdoutLines.contains(#"~ /db/host: "db2" → "db1""#))
        #expect(back.stdoutLines.contains("    /list/2: removed 3") && back.stdoutLines.contains(#"+ /gone = "x""#))

        // The selected config's revisions by @R alone.
        try await cli.run("use", "app")
        #expect(try await cli.run("diff", "@3", "@7").stdoutLines.dropFirst(2) == Self.expected.dropFirst(2))
    }

    @Test("--prefix limits both sides to the keys under it")
    func prefix() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await DiffScenario.write(cli)
        let db = try await cli.run("diff", "app@3", "app", "--prefix", "/db/")
        #expect(db.status == 1)
        #expect(db.stdoutLines == ["--- app@3 (revision 3)", "+++ app (revision 7)", #"~ /db/host: "db1" → "db2""#])
        let none = try await cli.run("diff", "app@3", "app", "--prefix", "/other")
        #expect(none.status == 0 && none.stdoutLines.isEmpty)
        let bad = try await cli.run("diff", "app@3", "app", "--prefix", "/a/../b")
        #expect(bad.status == 2 && bad.stdout.isEmpty, "\(bad.stderr)")
    }

    @Test("-f json: both sides described, each change with its values, JSON members with theirs")
    func json() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await DiffScenario.write(cli)
        let result = try await cli.run("diff", "app@3", "app", "--prefix", "/", "-f", "json")
        #expect(result.status == 1, "\(result.stderr)")
        let document = try DiffScenario.document(result)
        #expect(document["action"] == .string("diff") && document["equal"] == .bool(false))
        #expect(document["a"] == (try JSONParser.parse(#"{"name": "app@3", "config": "app", "revision": 3}"#)))
        #expect(document["b"] == (try JSONParser.parse(#"{"name": "app", "config": "app", "revision": 7}"#)))
        #expect(document["prefix"] == .string("/"))
        guard case .array(let changes) = document["changes"] else { Issue.record("no changes: \(result.stdout)"); return }
        #expect(changes.map { $0["key"] } == ["/added", "/db/host", "/gone", "/settings"].map(JSONValue.string))
        #expect(changes.map { $0["change"] } == ["added", "changed", "removed", "changed"].map(JSONValue.string))
        #expect(changes[1] == (try JSONParser.parse(#"{"key": "/db/host", "change": "changed", "from": "db1", "to": "db2"}"#)))
        #expect(changes[0]["from"] == nil && changes[0]["to"] == .string("yes"))
        #expect(changes[3]["members"] == (try JSONParser.parse(#"""
            [{"pointer": "/db/host", "change": "changed", "from": "db1", "to": "db2"},
             {"pointer": "/debug", "change": "removed", "from": true},
             {"pointer": "/list/2", "change": "added", "to": 3}]
            """#)))
    }

    @Test("a config against a file: an export (json, yaml), a plain mapping, an env file", arguments: DiffScenario.FileKind.allCases)
    func files(kind: DiffScenario.FileKind) async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await DiffScenario.write(cli)
        let file = try await kind.write(cli, config: "app", revision: 3)
        let same = try await cli.run("diff", "app@3", file)
        #expect(same.status == 0, "\(kind): \(same.stdout)\(same.stderr)")
        #expect(same.stdoutLines.isEmpty)

        let changed = try await cli.run("diff", file, "app")
        #expect(changed.status == 1, "\(changed.stderr)")
        #expect(changed.stdoutLines.first == "--- \(file)" && changed.stdoutLines.dropFirst().first == "+++ app (revision 7)")
        #expect(Array(changed.stdoutLines.dropFirst(2)) == kind.expected, "\(kind)")

        let limited = try await cli.run("diff", file, "app", "--prefix", "/db")
        #expect(limited.status == 1)
        #expect(limited.stdoutLines.dropFirst(2) == [kind == .env ? #"~ /DB_HOST: "db1" → "db2""# : #"~ /db/host: "db1" → "db2""#])
    }

    @Test("sealed values: 'changed (secret)', added and removed without a value; the plaintext never printed")
    func secrets() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let keyFile = try #require(try await cli.run("key", "init", "-f", "json").envelope().encryptionKey)
        #expect(try await cli.run("create", "app", "--encryption", keyFile).status == 0)
        #expect(try await cli.run("set", "app", "db/password", "first-plaintext-1", "--secret").status == 0)
        #expect(try await cli.run("set", "app", "db/password", "second-plaintext-2", "--secret").status == 0)
        #expect(try await cli.run("set", "app", "api/token", "third-plaintext-3", "--secret").status == 0)
        for format in ["human", "json"] {
            let result = try await cli.run("diff", "app@1", "app", "-f", format)
            #expect(result.status == 1, "\(result.stderr)")
            #expect(!result.stdout.contains("plaintext") && !result.stderr.contains("plaintext"), "\(result.stdout)")
            if format == "human" {
                #expect(result.stdoutLines.dropFirst(2) == ["+ /api/token (secret)", "~ /db/password: changed (secret)"])
            } else {
                #expect(result.stdout.contains(#""secret" : true"#) || result.stdout.contains(#""secret": true"#), "\(result.stdout)")
            }
        }
        #expect(try await cli.run("diff", "app@2", "app", "--prefix", "/db/").status == 0, "the same sealed bytes are equal")
    }

    @Test("bad sides: one sentence on stderr, nothing on stdout, an exit code that is neither same nor different")
    func badSides() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await DiffScenario.write(cli)
        try await cli.run("update", "app", "--history", "2")
        try await cli.run("set", "app", "k", "v1")
        try await cli.run("set", "app", "k", "v2")
        _ = try cli.write("notes.txt", Data("a file, not a config".utf8))
        for (arguments, status, words) in [
            (["missing.json", "app"], Int32(2), ["missing.json", "no such file"]),
            (["app", "notes.txt"], 2, ["notes.txt", "format"]),
            (["app", "./snapshot"], 2, ["./snapshot", "format"]),
            (["app@99", "app"], 2, ["app@99", "revision 99 is in the future"]),
            (["app@3", "app"], 2, ["app@3", "compacted through revision 7"]),
            (["nope", "app"], 3, ["nope", "does not exist"]),
            (["app@-1", "app"], 2, ["app@-1", "whole number"]),
            (["app@18446744073709551616", "app"], 2, ["app@18446744073709551616", "whole number"]),
            (["app@", "app"], 2, ["app@", "got nothing"]),
            (["bad name!", "app"], 2, ["bad name!", "config name"]),
            (["@3", "app"], 2, ["no config selected"]),
            (["app"], 2, ["<b>"]),
        ] as [([String], Int32, [String])] {
            let result = try await cli.run(["diff"] + arguments)
            #expect(result.status == status, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(arguments): \(result.stdout)")
            let first = result.stderr.split(separator: "\n").first.map(String.init) ?? ""
            #expect(words.allSatisfy { first.contains($0) }, "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("Fatal") && !result.stderr.contains("Stack"))
        }
        // Only the usage errors add where to read more; the others are the one line.
        #expect(try await cli.run("diff", "nope", "app").stderr.split(separator: "\n").count == 1)
        #expect(try await cli.run("diff", "app@-1", "app").stderr.split(separator: "\n").count == 1)

        // A store that cannot be reached is an error (5), never "different" (1).
        let unreachable = try await cli.run("diff", "app", "app", "--store", "http://127.0.0.1:1")
        #expect(unreachable.status == 5, "\(unreachable.stderr)")
        #expect(unreachable.stderr.split(separator: "\n").count == 1 && unreachable.stderr.contains("127.0.0.1:1"), "\(unreachable.stderr)")
        // Two files need no store at all.
        let file = try await DiffScenario.FileKind.export.write(cli, config: "app", revision: nil)
        #expect(try await cli.run("diff", file, file, "--store", "http://127.0.0.1:1").status == 0)
    }
}
