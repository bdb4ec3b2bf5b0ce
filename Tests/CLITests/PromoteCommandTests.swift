import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `discfg promote` and `discfg rollback` on every store the CLI opens: a SQLite file,
/// DynamoDB on moto, and a running `discfg serve`.
@Suite("CLI: promote, and promote and rollback on every store")
struct PromoteCommandTests {
    /// Writes staging (3 keys) and prod (2 keys, one staging lacks) through `cli`'s store.
    static func write(_ cli: CLIRunner) async throws {
        for arguments in [
            ["create", "staging"], ["create", "prod"],
            ["set", "staging", "/db/host", "db-stg"], ["set", "staging", "/features/a", "on"], ["set", "staging", "/features/b", "on"],
            ["set", "prod", "/db/host", "db-prod"], ["set", "prod", "/features/old", "on"],
        ] {
            let result = try await cli.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
    }

    static func keys(_ cli: CLIRunner, _ config: String) async throws -> [String: String] {
        let items = try await cli.run("ls", config, "-r", "-f", "json").envelope().items ?? []
        return Dictionary(uniqueKeysWithValues: items.filter { !$0.key.hasPrefix("/.discfg/") }.map { ($0.key, $0.value) })
    }

    /// Promotes a prefix, then the whole config, then rolls prod back: each one change.
    static func exercise(_ cli: CLIRunner) async throws {
        try await write(cli)
        let before = try await keys(cli, "prod")
        let plan = try await cli.run("promote", "staging", "prod", "--prefix", "/features/", "--dry-run")
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("+ /features/a") && plan.stdout.contains("- /features/old") && !plan.stdout.contains("/db/host"), "\(plan.stdout)")
        #expect(try await keys(cli, "prod") == before, "a dry run changed prod")

        let stale = try await cli.run("promote", "staging", "prod", "--if-revision", "1")
        #expect(stale.status == 4, "\(stale.stderr)")
        #expect(try await keys(cli, "prod") == before)

        let features = try await cli.run("promote", "staging", "prod", "--prefix", "/features/", "-m", "features", "-f", "json")
        #expect(features.status == 0, "\(features.stderr)")
        #expect(Set(try features.envelope().events?.map(\.revision) ?? []) == [Revision(3)], "one revision")
        #expect(try await keys(cli, "prod") == ["/db/host": "db-prod", "/features/a": "on", "/features/b": "on"])

        #expect(try await cli.run("promote", "staging", "prod", "-m", "all").status == 0)
        #expect(try await keys(cli, "prod") == ["/db/host": "db-stg", "/features/a": "on", "/features/b": "on"])
        let log = try await cli.run("log", "prod", "-f", "json").envelope().events ?? []
        #expect(log.filter { $0.message == "features" }.count == 3)
        #expect(Set(log.filter { $0.message == "features" }.map(\.revision)).count == 1)

        #expect(try await cli.run("rollback", "prod", "--to-revision", "2", "-m", "back").status == 0)
        #expect(try await keys(cli, "prod") == before)
        #expect(try await cli.run("promote", "staging", "staging").status == 2)
        #expect(try await cli.run("promote", "staging", "nope").status == 3)
    }

    @Test("a prefix, then the whole config, each one change; plans change nothing; a stale plan, a self-promotion and a missing config are refused, on every store", arguments: CLIStoreKind.allCases)
    func stores(_ kind: CLIStoreKind) async throws {
        try await CLIRunner.on(kind, Self.exercise)
    }

    @Test("a secret is opened from the source and sealed again for the destination")
    func secrets() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let keyFile = try #require(try await cli.run("key", "init", "-f", "json").envelope().encryptionKey)
        #expect(try await cli.run("create", "staging", "--encryption", keyFile).status == 0)
        #expect(try await cli.run("create", "prod", "--encryption", keyFile).status == 0)
        #expect(try await cli.run("create", "plain").status == 0)
        #expect(try await cli.run(["set", "staging", "db/password", "--secret", "-d", "-"], stdin: Data("stg-password".utf8)).status == 0)
        #expect(try await cli.run(["set", "prod", "db/password", "--secret", "-d", "-"], stdin: Data("prod-password".utf8)).status == 0)
        #expect(try await cli.run("promote", "staging", "prod").status == 0)
        #expect(try await cli.run("get", "prod", "db/password").stdout == "stg-password\n")
        let refused = try await cli.run("promote", "staging", "plain")
        #expect(refused.status == 2 && refused.stderr.contains("no encryption key"), "\(refused.stderr)")
        #expect(try await Self.keys(cli, "plain").isEmpty)
    }
}
