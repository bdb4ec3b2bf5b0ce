import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

@Suite("CLI: rollback, and --dry-run/--if-revision on import and rollback")
struct RollbackCommandTests {
    /// A config with six changes: /db/host db1 (1), /db/port (2), /x (3), /db/host db2
    /// (4), /x deleted (5), /new (6).
    static func prepared() async throws -> CLIRunner {
        let cli = try CLIRunner()
        try await cli.run("create", "app")
        try await cli.run("set", "app", "/db/host", "db1")
        try await cli.run("set", "app", "/db/port", "5432")
        try await cli.run("set", "app", "/x", "1")
        try await cli.run("set", "app", "/db/host", "db2")
        try await cli.run("delete", "app", "/x")
        try await cli.run("set", "app", "/new", "y")
        return cli
    }

    static func keys(_ cli: CLIRunner) async throws -> [String: String] {
        let items = try await cli.run("ls", "app", "-r", "-f", "json").envelope().items ?? []
        // discfg's own records (a schema) aside.
        return Dictionary(uniqueKeysWithValues: items.filter { !$0.key.hasPrefix("/.discfg/") }.map { ($0.key, $0.value) })
    }

    @Test("a rollback is one change that makes the config what it was, with its message; the plan first changes nothing")
    func rollbackWholeConfig() async throws {
        let cli = try await Self.prepared()
        defer { cli.cleanUp() }
        let before = try await Self.keys(cli)

        let plan = try await cli.run("rollback", "app", "--to-revision", "3", "--dry-run")
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("at revision 6 of app"), "\(plan.stdout)")
        #expect(plan.stdout.contains("~ /db/host") && plan.stdout.contains("- /new") && plan.stdout.contains("+ /x"), "\(plan.stdout)")
        #expect(plan.stdout.contains("--if-revision 6"), "\(plan.stdout)")
        #expect(try await Self.keys(cli) == before, "a dry run changed the config")

        // A plan reviewed at an older revision does not land.
        let stale = try await cli.run("rollback", "app", "--to-revision", "3", "--if-revision", "5", "-m", "late")
        #expect(stale.status != 0)
        #expect(stale.stderr.contains("revision 6, not 5"), "\(stale.stderr)")
        #expect(try await Self.keys(cli) == before)

        let done = try await cli.run("rollback", "app", "--to-revision", "3", "--if-revision", "6", "-m", "undo the move", "-f", "json")
        #expect(done.status == 0, "\(done.stderr)")
        let envelope = try done.envelope()
        #expect(envelope.revision == Revision(7))
        #expect(Set(envelope.events?.map(\.revision) ?? []) == [Revision(7)])
        #expect(try await Self.keys(cli) == ["/db/host": "db1", "/db/port": "5432", "/x": "1"])
        let log = try await cli.run("log", "app", "--revision", "7", "-f", "json").envelope()
        #expect(log.events?.count == 3)
        #expect(log.events?.allSatisfy { $0.message == "undo the move" } == true)
    }

    @Test("a rollback of a prefix leaves the rest; past the retained history and in the future it is refused in one sentence")
    func rollbackPrefixAndRefusals() async throws {
        let cli = try await Self.prepared()
        defer { cli.cleanUp() }
        #expect(try await cli.run("rollback", "app", "--to-revision", "1", "--prefix", "/db/").status == 0)
        #expect(try await Self.keys(cli) == ["/db/host": "db1", "/new": "y"])

        // Keep the last two changes: history through revision 5 is compacted.
        #expect(try await cli.run("update", "app", "--history", "2").status == 0)
        let compacted = try await cli.run("rollback", "app", "--to-revision", "2")
        #expect(compacted.status != 0)
        #expect(compacted.stderr.contains("no longer keeps revision 2"), "\(compacted.stderr)")
        let future = try await cli.run("rollback", "app", "--to-revision", "99")
        #expect(future.status == 2)
        #expect(future.stderr.split(separator: "\n").count == 1, "\(future.stderr)")
        for bad in ["-1", "18446744073709551616", "x"] {
            let refused = try await cli.run("rollback", "app", "--to-revision", bad)
            #expect(refused.status == 2, "\(bad): \(refused.stderr)")
        }
        #expect(try await Self.keys(cli) == ["/db/host": "db1", "/new": "y"])
    }

    @Test("import --dry-run prints the plan and writes nothing; --prefix bounds a replace; --replace keeps schemas")
    func importPlan() async throws {
        let cli = try await Self.prepared()
        defer { cli.cleanUp() }
        #expect(try await cli.run("schema", "set", "app", "/db/port", try cli.write("port.json", Data(#"{"type": "integer"}"#.utf8))).status == 0)
        let file = try cli.write("db.json", Data(#"{"/db/host": "db3"}"#.utf8))
        let before = try await Self.keys(cli)
        let plan = try await cli.run("import", "app", file, "--prefix", "/db/", "--replace", "--dry-run")
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("~ /db/host") && plan.stdout.contains("- /db/port") && !plan.stdout.contains("/new"), "\(plan.stdout)")
        #expect(try await Self.keys(cli) == before)

        let outside = try cli.write("out.json", Data(#"{"/elsewhere": "x"}"#.utf8))
        let refused = try await cli.run("import", "app", outside, "--prefix", "/db/", "--replace")
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("/elsewhere"), "\(refused.stderr)")

        #expect(try await cli.run("import", "app", file, "--prefix", "/db/", "--replace").status == 0)
        #expect(try await Self.keys(cli) == ["/db/host": "db3", "/new": "y"])
        let schemas = try await cli.run("schema", "ls", "app", "-f", "json")
        #expect(schemas.stdout.contains("/db/port"), "a replace removed a schema: \(schemas.stdout)")
    }
}

extension RollbackCommandTests {
    @Test("delete --prefix --dry-run plans the delete and changes nothing; --if-revision deletes the prefix as one change only at that revision")
    func deletePrefixPlan() async throws {
        let cli = try await Self.prepared()
        defer { cli.cleanUp() }
        let before = try await Self.keys(cli)
        let plan = try await cli.run("delete", "app", "/db/", "--prefix", "--dry-run")
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("- /db/host") && plan.stdout.contains("- /db/port") && plan.stdout.contains("--if-revision 6"), "\(plan.stdout)")
        #expect(try await Self.keys(cli) == before)
        #expect(try await cli.run("delete", "app", "/db/", "--prefix", "--if-revision", "5", "--yes").status == 4)
        #expect(try await cli.run("delete", "app", "/new", "--dry-run").status == 2)
        #expect(try await Self.keys(cli) == before)
        let deleted = try await cli.run("delete", "app", "/db/", "--prefix", "--if-revision", "6", "--yes", "-f", "json")
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(Set(try deleted.envelope().events?.map(\.revision) ?? []) == [Revision(7)])
        #expect(try await Self.keys(cli) == ["/new": "y"])
    }
}

@Suite("CLI: rollback over secrets")
struct RollbackSecretTests {
    @Test("a rollback opens each secret it writes as it was and seals it again for the item it becomes; an import of sealed bytes from a file is refused naming the key")
    func sealedValues() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let keyFile = try #require(try await cli.run("key", "init", "-f", "json").envelope().encryptionKey)
        #expect(try await cli.run("create", "app", "--encryption", keyFile).status == 0)
        #expect(try await cli.run(["set", "app", "db/password", "--secret", "-d", "-"], stdin: Data("old-password-1".utf8)).status == 0) // 1
        #expect(try await cli.run("set", "app", "db/host", "db1").status == 0) // 2
        #expect(try await cli.run(["set", "app", "db/password", "--secret", "-d", "-"], stdin: Data("new-password-2".utf8)).status == 0) // 3
        #expect(try await cli.run("set", "app", "db/host", "db2").status == 0) // 4
        #expect(try await cli.run(["set", "app", "api/token", "--secret", "-d", "-"], stdin: Data("token-3".utf8)).status == 0) // 5

        // A file of sealed bytes (an export) holds no way to open them: refused, nothing changed.
        let exported = cli.directory.appendingPathComponent("app.json").path
        #expect(try await cli.run("export", "app", "--revision", "2", "-o", exported).status == 0)
        let refused = try await cli.run("import", "app", exported)
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("/db/password") && refused.stderr.contains("set --secret"), "\(refused.stderr)")
        #expect(try await cli.run("get", "app", "db/password").stdout == "new-password-2\n")

        let plan = try await cli.run("rollback", "app", "--to-revision", "2", "--dry-run")
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("~ /db/password") && plan.stdout.contains("- /api/token"), "\(plan.stdout)")
        #expect(try await cli.run("get", "app", "db/password").stdout == "new-password-2\n")

        let back = try await cli.run("rollback", "app", "--to-revision", "2", "-m", "old password back")
        #expect(back.status == 0, "\(back.stderr)")
        #expect(try await cli.run("get", "app", "db/password").stdout == "old-password-1\n")
        #expect(try await cli.run("get", "app", "db/host").stdout == "db1\n")
        #expect(try await cli.run("get", "app", "api/token").status != 0)
        // And forward again: the newer value, sealed again as version 4.
        #expect(try await cli.run("rollback", "app", "--to-revision", "5").status == 0)
        #expect(try await cli.run("get", "app", "db/password").stdout == "new-password-2\n")
        #expect(try await cli.run("get", "app", "api/token").stdout == "token-3\n")
    }
}
