import DiscfgJSON
import DiscfgTestSupport
import Foundation
import Testing

/// `discfg diff` over the other stores the CLI opens: DynamoDB on moto and a running
/// `discfg serve`, reading past revisions the way `export --revision` does.
@Suite("CLI: diff over DynamoDB and a server")
struct DiffStoreTests {
    @Test("DynamoDB (moto): a past revision against now, against a file, and a revision in the future")
    func dynamoDB() async throws {
        var (cli, store) = try await CLIRunner.onDynamoDB()
        defer { cli.cleanUp() }
        #expect(try await cli.run("init", "--store", store, "-f", "silent").status == 0)
        cli.environment["DISCFG_STORE"] = store
        try await DiffScenario.write(cli)
        let changed = try await cli.run("diff", "app@3", "app")
        #expect(changed.status == 1, "\(changed.stderr)")
        #expect(changed.stdoutLines == DiffCommandTests.expected)
        let file = try await DiffScenario.FileKind.export.write(cli, config: "app", revision: 3)
        #expect(try await cli.run("diff", file, "app@3").status == 0)
        let future = try await cli.run("diff", "app@8", "app")
        #expect(future.status == 2 && future.stderr.contains("app@8: revision 8 is in the future"), "\(future.stderr)")
    }

    @Test("discfg serve (http store): the same lines and document as on the file it serves")
    func server() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("init", "-f", "silent").status == 0)
        let (server, port) = try await cli.serve()
        try await withServer(server) { _ in
            var remote = cli
            remote.environment["DISCFG_STORE"] = "http://127.0.0.1:\(port)"
            try await DiffScenario.write(remote)
            let changed = try await remote.run("diff", "app@3", "app")
            #expect(changed.status == 1, "\(changed.stderr)")
            #expect(changed.stdoutLines == DiffCommandTests.expected)
            let overHTTP = try await remote.run("diff", "app@3", "app", "-f", "json")
            let local = try await cli.run("diff", "app@3", "app", "-f", "json")
            #expect(overHTTP.status == 1 && overHTTP.stdout == local.stdout, "\(overHTTP.stdout)\n\(local.stdout)")
            let missing = try await remote.run("diff", "nope", "app")
            #expect(missing.status == 3 && missing.stderr.contains("nope"), "\(missing.stderr)")
            let future = try await remote.run("diff", "app", "app@99")
            #expect(future.status == 2 && future.stderr.contains("app@99: revision 99 is in the future"), "\(future.stderr)")
        }
    }
}

/// The config the diff tests compare: seven revisions of `app`, the first three making
/// what revision 3 holds.
enum DiffScenario {
    /// Writes `app` through `cli`'s store: revisions 1-3 set /db/host, /settings and
    /// /gone; 4-7 change /db/host and members of /settings, delete /gone, add /added.
    static func write(_ cli: CLIRunner) async throws {
        for arguments in [
            ["create", "app"],
            ["set", "app", "db/host", "db1"],
            ["set", "app", "settings", #"{"db":{"host":"db1","port":5432},"debug":true,"list":[1,2]}"#],
            ["set", "app", "gone", "x"],
            ["set", "app", "db/host", "db2"],
            ["set", "app", "settings", #"{"list": [1, 2, 3], "db": {"port": 5432, "host": "db2"}}"#],
            ["delete", "app", "gone"],
            ["set", "app", "added", "yes"],
        ] {
            let result = try await cli.run(arguments + ["-f", "silent"])
            try #require(result.status == 0, "\(arguments): \(result.stderr)")
        }
    }

    /// The JSON document a `diff -f json` printed.
    static func document(_ result: CLIRunner.Result) throws -> JSONValue {
        try JSONParser.parse(result.stdout)
    }

    /// The files a side can be: what export writes, and what a person writes by hand.
    enum FileKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case export, yaml, plain, env

        var testDescription: String { rawValue }

        /// Writes the config (at `revision`) as this kind of file; returns its path.
        func write(_ cli: CLIRunner, config: String, revision: Int?) async throws -> String {
            let at = revision.map { ["--revision", String($0)] } ?? []
            switch self {
            case .export, .yaml, .env:
                let name = ["export": "snapshot.json", "yaml": "snapshot.yaml", "env": "snapshot.env"][rawValue]!
                let path = cli.directory.appendingPathComponent(name).path
                let written = try await cli.run(["export", config, "-o", path, "-f", "silent"] + at)
                try #require(written.status == 0, "\(written.stderr)")
                return path
            case .plain:
                // As revision 3 holds it, by hand: members in another order, spaced.
                let text = #"{"/settings": {"list": [1, 2], "debug": true, "db": {"port": 5432, "host": "db1"}}, "/gone": "x", "/db/host": "db1"}"#
                return try cli.write("plain.json", Data(text.utf8))
            }
        }

        /// What `diff FILE app` prints beneath its two headers, for a file of revision 3.
        var expected: [String] {
            let lines = Array(DiffCommandTests.expected.dropFirst(2))
            guard self == .env else { return lines }
            return [#"+ /ADDED = "yes""#, #"~ /DB_HOST: "db1" → "db2""#, #"- /GONE = "x""#, "~ /SETTINGS"] + lines.suffix(3)
        }
    }
}
