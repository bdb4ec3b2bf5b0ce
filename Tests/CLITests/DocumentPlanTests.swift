import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `set --document` with `--dry-run` and `--if-revision`: the plan import prints, nothing
/// changed by it, and exactly that change applied, on a SQLite file, DynamoDB on moto and
/// a running serve.
@Suite("CLI: set --document --dry-run and --if-revision")
struct DocumentPlanTests {
    static func revision(_ cli: CLIRunner, _ config: String) async throws -> UInt64 {
        try #require(try await cli.run("info", config, "-f", "json").envelope().revision).rawValue
    }

    static func exercise(_ cli: CLIRunner) async throws {
        for arguments in [["create", "app"], ["set", "app", "/app/a", "1"], ["set", "app", "/app/b", "2"], ["set", "app", "/app/c", "x"], ["set", "app", "/other", "o"]] {
            let result = try await cli.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        let file = try cli.write("doc.json", Data(#"{"a": "1", "b": "3", "d": "4"}"#.utf8))
        let before = try await PromoteCommandTests.keys(cli, "app")
        let base = try await revision(cli, "app")

        let plan = try await cli.run("set", "app", "/app/", "--document", "-d", file, "--replace", "--dry-run")
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("plan: set the document under /app/") && plan.stdout.contains("at revision \(base) of app"), "\(plan.stdout)")
        #expect(plan.stdout.contains("~ /app/b") && plan.stdout.contains("+ /app/d") && plan.stdout.contains("- /app/c"), "\(plan.stdout)")
        #expect(!plan.stdout.contains("/app/a") && !plan.stdout.contains("/other"), "\(plan.stdout)")
        #expect(plan.stdout.contains("2 to set, 1 to delete, 1 unchanged") && plan.stdout.contains("--replace --if-revision \(base)"), "\(plan.stdout)")
        let json = try await cli.run("set", "app", "/app/", "--document", "-d", file, "--replace", "--dry-run", "-f", "json").envelope()
        #expect(json.action == "plan" && Set(json.events?.map(\.key) ?? []) == ["/app/b", "/app/c", "/app/d"])
        #expect(try await PromoteCommandTests.keys(cli, "app") == before, "a dry run changed the config")
        #expect(try await revision(cli, "app") == base)

        let stale = try await cli.run("set", "app", "/app/", "--document", "-d", file, "--replace", "--if-revision", "1")
        #expect(stale.status == 4 && stale.stderr.contains("not 1"), "\(stale.stderr)")
        #expect(try await PromoteCommandTests.keys(cli, "app") == before)

        let applied = try await cli.run("set", "app", "/app/", "--document", "-d", file, "--replace", "--if-revision", "\(base)", "-m", "reviewed", "-f", "json")
        #expect(applied.status == 0, "\(applied.stderr)")
        #expect(Set(try applied.envelope().events?.map(\.revision) ?? []) == [Revision(base + 1)], "one revision")
        #expect(try await PromoteCommandTests.keys(cli, "app") == ["/app/a": "1", "/app/b": "3", "/app/d": "4", "/other": "o"])

        // Without --replace the plan deletes nothing.
        let merge = try cli.write("merge.json", Data(#"{"e": "5"}"#.utf8))
        let add = try await cli.run("set", "app", "/app/", "--document", "-d", merge, "--dry-run")
        #expect(add.status == 0 && add.stdout.contains("+ /app/e") && add.stdout.contains("1 to set, 0 to delete"), "\(add.stdout)\(add.stderr)")
        #expect(try await cli.run("set", "app", "/app/", "--document", "-d", merge, "--if-revision", "\(base + 1)").status == 0)
        #expect(try await PromoteCommandTests.keys(cli, "app")["/app/e"] == "5")

        let single = try await cli.run("set", "app", "/k", "v", "--dry-run")
        #expect(single.status == 2 && single.stderr.contains("--document"), "\(single.stderr)")
    }

    @Test("the plan names each key set and deleted and its revision, changes nothing; a stale --if-revision is refused; the reviewed one applies as one change, on every store", arguments: CLIStoreKind.allCases)
    func stores(_ kind: CLIStoreKind) async throws {
        try await CLIRunner.on(kind, Self.exercise)
    }
}
