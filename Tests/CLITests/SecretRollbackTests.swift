import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// A writer without the key puts a secret's old sealed value back. Each value is bound to
/// its key's create revision and version, so no reader opens it, whichever path it takes.
@Suite("CLI: secret rollback")
struct SecretRollbackTests {
    /// A CLI with config `app` (a key file) whose /db/password was "old-password-1" and is
    /// now "new-password-2", served by a live `serve`; `body` gets the remote CLI, a function
    /// that PUTs bytes marked secret as the API lets any writer, and the first sealed value.
    private func withRolledBackSecret(_ body: (CLIRunner, (String, Data) async throws -> String, Data) async throws -> Void) async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let keyFile = try #require(try await cli.run("key", "init", "-f", "json").envelope().encryptionKey)
        #expect(try await cli.run("create", "app", "--encryption", keyFile).status == 0)
        #expect(try await cli.run(["set", "app", "db/password", "--secret", "-d", "-"], stdin: Data("old-password-1".utf8)).status == 0)
        #expect(try await cli.run(["set", "app", "db/password", "--secret", "-d", "-"], stdin: Data("new-password-2".utf8)).status == 0)
        let (server, port) = try await cli.serve()
        try await withServer(server) { _ in
            var remote = cli
            remote.environment["DISCFG_STORE"] = "http://127.0.0.1:\(port)"
            let history = try await remote.run("history", "app", "db/password", "-f", "json").envelope()
            let first = try #require(history.events?.last?.item)
            #expect(first.version == 1)
            func putSealed(_ key: String, _ bytes: Data) async throws -> String {
                try await LoopbackHTTP.exchange(port: port, "PUT /v1/app/keys/\(key)", body: bytes, headers: ["Content-Type: application/vnd.discfg.secret"])
            }
            try await body(remote, putSealed, try first.item().value)
        }
    }

    @Test("history, delete, the old sealed value put back as version 1: get, exec, export --reveal and ls --reveal refuse it naming the key; history and watch --reveal show it sealed, with a warning")
    func afterDelete() async throws {
        try await withRolledBackSecret { cli, putSealed, old in
            #expect(try await cli.run("delete", "app", "db/password").status == 0)
            let put = try await putSealed("db/password", old)
            #expect(put.hasPrefix("HTTP/1.1 201"), "\(put)")
            let listed = try await cli.run("ls", "app", "-r", "-f", "json").envelope()
            let rolledBack = try #require(listed.items?.first { $0.key == "/db/password" }).item()
            #expect(rolledBack.version == 1, "versions start again after a delete")
            let refusals: [[String]] = [
                ["get", "app", "db/password"],
                ["exec", "app", "--", "sh", "-c", #"echo "ran $DB_PASSWORD""#],
                ["export", "app", "--to", "env", "--reveal"],
                ["export", "app", "--reveal"],
                ["ls", "app", "-r", "--reveal"],
            ]
            for command in refusals {
                let refused = try await cli.run(command)
                #expect(refused.status == 2, "\(command): \(refused.logs)")
                #expect(refused.stderr.contains("/db/password") && refused.stderr.contains("rolled back"), "\(command): \(refused.stderr)")
                #expect(!refused.stdout.contains("old-password-1") && !refused.stderr.contains("old-password-1"), "\(command) opened the old value")
                #expect(!refused.stdout.contains("ran"), "\(command)")
            }
            // A history or a stream shows the value sealed, with a warning, and goes on.
            let history = try await cli.run("history", "app", "db/password", "--reveal")
            #expect(history.status == 0 && history.stdout.contains("new-password-2"), "\(history.logs)")
            #expect(history.stdout.components(separatedBy: "old-password-1").count == 2, "only the first version's own event opens: \(history.stdout)")
            #expect(history.stdout.contains("(secret)") && history.stderr.contains("/db/password") && history.stderr.contains("rolled back"), "\(history.logs)")
            let watcher = try cli.launch(["watch", "app", "/db/", "--from-revision", String(rolledBack.modRevision.rawValue), "--reveal"])
            let shown = try await watcher.waitForOutput(timeout: .seconds(60)) { (output) -> String? in
                output.stderr.contains("rolled back") && !output.stdout.isEmpty ? output.stdout : nil
            }
            await watcher.stop()
            #expect(shown.contains("(secret)") && !shown.contains("old-password-1"), "\(shown)")
        }
    }

    @Test("the old sealed value put back without a delete: export --to env --reveal refuses it as get does")
    func withoutDelete() async throws {
        try await withRolledBackSecret { cli, putSealed, old in
            let put = try await putSealed("db/password", old)
            #expect(put.hasPrefix("HTTP/1.1 200"), "\(put)")
            for command in [["get", "app", "db/password"], ["export", "app", "--to", "env", "--reveal"], ["export", "app", "--to", "yaml", "--reveal"]] {
                let refused = try await cli.run(command)
                #expect(refused.status == 2 && refused.stderr.contains("/db/password") && refused.stderr.contains("rolled back"), "\(command): \(refused.logs)")
                #expect(!refused.stdout.contains("old-password-1"), "\(command) opened the old value")
            }
            // Set again by someone with the key, it opens everywhere.
            #expect(try await cli.run(["set", "app", "db/password", "--secret", "-d", "-"], stdin: Data("third-3".utf8)).status == 0)
            #expect(try await cli.run("export", "app", "--to", "env", "--reveal").stdout == "DB_PASSWORD=third-3\n")
            #expect(try await cli.run("get", "app", "db/password").stdout == "third-3\n")
        }
    }

    @Test("a new secret is bound to the revision its key was created at, also when other writes come between; a key made again gets a new binding")
    func createRevisions() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let keyFile = try #require(try await cli.run("key", "init", "-f", "json").envelope().encryptionKey)
        #expect(try await cli.run("create", "app", "--encryption", keyFile).status == 0)
        // Writers racing the secret's first write: whichever revision it lands at, it opens.
        let writers = try cli.launchShell(#"for i in $(seq 1 40); do "$DISCFG" set app noise/$i x >/dev/null || exit 1; done"#)
        for round in 1...8 {
            #expect(try await cli.run(["set", "app", "race/\(round)", "--secret", "-d", "-"], stdin: Data("value-\(round)".utf8)).status == 0)
        }
        #expect(try await writers.wait(timeout: .seconds(120)).status == 0)
        for round in 1...8 {
            let got = try await cli.run("get", "app", "race/\(round)")
            #expect(got.status == 0 && got.stdout == "value-\(round)\n", "\(round): \(got.logs)")
        }
        #expect(try await cli.run("delete", "app", "race/1").status == 0)
        #expect(try await cli.run(["set", "app", "race/1", "--secret", "-d", "-"], stdin: Data("again".utf8)).status == 0)
        #expect(try await cli.run("get", "app", "race/1").stdout == "again\n")
        let history = try await cli.run("history", "app", "race/1", "--reveal")
        #expect(history.status == 0 && history.stdout.contains("again") && history.stdout.contains("value-1"), "both incarnations open in history: \(history.logs)")
    }
}
