import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `discfg create DST --from SRC`: a new config filled with another's keys as one change,
/// through promote's code path, on a SQLite file, DynamoDB on moto and a running serve.
@Suite("CLI: create --from")
struct CreateFromTests {
    static func configs(_ cli: CLIRunner) async throws -> Set<String> {
        Set(try await cli.run("configs", "-f", "json").envelope().configs?.map(\.name) ?? [])
    }

    /// Copies a whole config and a prefix, each one change with its message; refuses a
    /// taken name, a missing source, a self-copy and a stray --prefix, creating nothing.
    static func exercise(_ cli: CLIRunner) async throws {
        try await PromoteCommandTests.write(cli)
        let staging = try await PromoteCommandTests.keys(cli, "staging")

        let copy = try await cli.run("create", "copy", "--from", "staging", "-m", "first copy", "-f", "json")
        #expect(copy.status == 0, "\(copy.stderr)")
        #expect(try copy.envelope().action == "create")
        #expect(try await PromoteCommandTests.keys(cli, "copy") == staging)
        let log = try await cli.run("log", "copy", "-f", "json").envelope().events ?? []
        let copied = log.filter { $0.message == "first copy" }
        #expect(copied.count == 3 && Set(copied.map(\.revision)).count == 1, "one change with its message: \(log)")

        let features = try await cli.run("create", "features", "--from", "staging", "--prefix", "/features/")
        #expect(features.status == 0, "\(features.stderr)")
        #expect(features.stdout.contains("created config features") && features.stdout.contains("from staging /features/"), "\(features.stdout)")
        #expect(try await PromoteCommandTests.keys(cli, "features") == ["/features/a": "on", "/features/b": "on"])

        let prod = try await PromoteCommandTests.keys(cli, "prod")
        let taken = try await cli.run("create", "prod", "--from", "staging")
        #expect(taken.status != 0 && taken.stderr.contains("prod"), "\(taken.stderr)")
        #expect(try await PromoteCommandTests.keys(cli, "prod") == prod, "a refused create changed prod")

        let missing = try await cli.run("create", "other", "--from", "nope")
        #expect(missing.status == 3 && missing.stderr.contains("nope"), "\(missing.stderr)")
        let twice = try await cli.run("create", "same", "--from", "same")
        #expect(twice.status == 2 && twice.stderr.contains("named twice"), "\(twice.stderr)")
        let stray = try await cli.run("create", "stray", "--prefix", "/a/")
        #expect(stray.status == 2 && stray.stderr.contains("--from"), "\(stray.stderr)")
        #expect(try await configs(cli) == ["staging", "prod", "copy", "features"])
    }

    @Test("a whole config and a prefix, each one change; a taken name, a missing source and a self-copy create nothing, on every store", arguments: CLIStoreKind.allCases)
    func stores(_ kind: CLIStoreKind) async throws {
        try await CLIRunner.on(kind, Self.exercise)
    }

    @Test("secrets are sealed again for the new config, which needs a key: refused before anything is created without one")
    func secrets() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let keyFile = try #require(try await cli.run("key", "init", "-f", "json").envelope().encryptionKey)
        #expect(try await cli.run("create", "staging", "--encryption", keyFile).status == 0)
        #expect(try await cli.run(["set", "staging", "secret/password", "--secret", "-d", "-"], stdin: Data("stg-password".utf8)).status == 0)
        #expect(try await cli.run("set", "staging", "db/host", "db-stg").status == 0)

        let keyless = try await cli.run("create", "prod", "--from", "staging")
        #expect(keyless.status == 2 && keyless.stderr.contains("--encryption") && keyless.stderr.contains("nothing was created"), "\(keyless.stderr)")
        #expect(try await Self.configs(cli) == ["staging"])
        // A prefix without secrets needs no key.
        #expect(try await cli.run("create", "hosts", "--from", "staging", "--prefix", "/db/").status == 0)

        let sealed = try await cli.run("create", "prod", "--from", "staging", "--encryption", keyFile)
        #expect(sealed.status == 0, "\(sealed.stderr)")
        #expect(try await cli.run("get", "prod", "secret/password").stdout == "stg-password\n")
        #expect(try await cli.run("get", "prod", "db/host").stdout == "db-stg\n")
    }

    @Test("a copy that fails once the config is made (past its quota) deletes it again, saying so")
    func failedCopy() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await PromoteCommandTests.write(cli)
        let small = try await cli.run("create", "small", "--from", "staging", "--quota", "10")
        #expect(small.status != 0, "\(small.stdout)")
        #expect(small.stderr.contains("was created, but copying staging into it failed") && small.stderr.contains("deleted again"), "\(small.stderr)")
        #expect(try await Self.configs(cli) == ["staging", "prod"])
    }
}
