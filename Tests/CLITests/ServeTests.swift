import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `discfg serve` as a separate process, and the CLI using it as its store.
@Suite("CLI: serve and the http store")
struct ServeTests {
    @Test("serve refuses a non-loopback address without tokens, and a bad port")
    func refusals() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let open = try await cli.run("serve", "--host", "0.0.0.0", "--port", "0")
        #expect(open.status == 2)
        #expect(open.stderr.contains("--insecure"))
        #expect(try await cli.run("serve", "--port", "70000").status == 2)
        for flag in ["--max-connections", "--max-watches", "--stream-backlog", "--write-timeout", "--idle-timeout"] {
            let refused = try await cli.run("serve", "--port", "0", flag, "0")
            #expect(refused.status == 2, "\(flag) 0")
            #expect(refused.stderr.contains(flag))
        }
    }

    @Test("every command works against a running server; SIGTERM stops it cleanly", .timeLimit(.minutes(2)))
    func commandsThroughServer() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let (server, port) = try await cli.serve()

        var remote = cli
        remote.environment["DISCFG_STORE"] = "http://127.0.0.1:\(port)"
        #expect(try await remote.run("create", "web").status == 0)
        #expect(try await remote.run("use", "web").status == 0)
        #expect(try await remote.run("set", "db/host", "db1").status == 0)
        #expect(try await remote.run("set", "db/host", "db2", "--if-version", "1").status == 0)
        #expect(try await remote.run("set", "db/host", "db3", "--if-version", "1").status == 4)
        #expect(try await remote.run("get", "db/host").stdout == "db2\n")
        #expect(try await remote.run("get", "db/host", "--revision", "1").stdout == "db1\n")
        #expect(try await remote.run("get", "nope").status == 3)
        #expect(try await remote.run("ls", "-r", "-f", "json").envelope().items?.map(\.key) == ["/db/host"])
        #expect(try await remote.run("history", "db/host", "-f", "json").envelope().events?.map(\.revision) == [2, 1])
        let exported = try await remote.run("export", "--to", "yaml")
        #expect(exported.stdout.contains("db2"))
        let past = try await remote.run("export", "--revision", "1", "-f", "json")
        #expect(past.stdout.contains("\"revision\" : 1") && past.stdout.contains("db1") && !past.stdout.contains("db2"), "\(past.stdout)\(past.stderr)")
        #expect(try await remote.run("export", "--revision", "3").status == 2, "a revision the config has not reached")
        let file = try cli.write("in.json", Data(#"{"/feature/x": "on"}"#.utf8))
        #expect(try await remote.run("import", file).status == 0)
        #expect(try await remote.run("info", "-f", "json").envelope().revision == 3)
        let txn = try cli.write("txn.json", Data(#"{"compare": [{"key": "/db/host", "target": "value", "result": "=", "value": "db2"}], "success": [{"op": "put", "key": "/db/port", "value": "5432"}]}"#.utf8))
        let ran = try await remote.run("txn", "--file", txn)
        #expect(ran.stdout == "SUCCESS\nput /db/port  version 1  revision 4\n", "\(ran.stderr)")
        #expect(try await remote.run("get", "db/port").stdout == "5432\n")
        #expect(try await remote.run("txn", "--file", txn).status == 0)
        #expect(try await remote.run(["txn", "-i"], stdin: Data("value(\"/db/host\") = \"db1\"\n\nput /db/port 1\n".utf8)).status == 4)
        #expect(try await remote.run("delete", "--prefix", "/feature", "--yes").status == 0)
        #expect(try await remote.run("configs", "-f", "json").envelope().configs?.map(\.name) == ["web"])
        // The server's file holds what the remote commands wrote.
        var local = cli
        local.environment["DISCFG_STORE"] = "sqlite://\(cli.directory.path)/store.db"
        #expect(try await local.run("get", "web", "db/host").stdout == "db2\n")

        #expect(await server.kill(SIGTERM) == .exited(0))
        let down = try await remote.run("get", "db/host")
        #expect(down.status == 1)
        #expect(down.stderr.contains("cannot connect to discfg at"), "\(down.stderr)")
    }

    /// Starts `discfg serve --port 0` with `arguments` and returns it with the port it
    /// announced.
    @Test("discfg token against a server: create, list and revoke through /admin/tokens, as an admin of every config")
    func tokensThroughServer() async throws {
        var cli = try CLIRunner()
        defer { cli.cleanUp() }
        cli.environment["DISCFG_STORE"] = "sqlite://\(cli.directory.path)/store.db"
        let admin = try #require(try await cli.run("token", "create", "--role", "admin").stdout.split(separator: "\n").first.map(String.init))
        try await cli.run("create", "web")
        let (server, port) = try await cli.serve(["--auth", "token"])
        defer { Task { await server.kill() } }
        var remote = cli
        remote.environment["DISCFG_STORE"] = "http://127.0.0.1:\(port)"
        remote.environment["DISCFG_TOKEN"] = admin

        let created = try await remote.run("token", "create", "--role", "read", "--scope", "web", "--description", "web tier")
        #expect(created.status == 0, "\(created.stderr)")
        let token = try #require(created.stdout.split(separator: "\n").first.map(String.init))
        #expect(token.hasPrefix("dcfg_") && created.stdout.contains("scopes web"))
        var reader = remote
        reader.environment["DISCFG_TOKEN"] = token
        #expect(try await reader.run("ls", "web").status == 0, "the new token works at once")
        #expect(try await reader.run("set", "web", "k", "v").status != 0, "within its role")
        #expect(try await reader.run("token", "list").status != 0, "a reader manages no tokens")

        let listed = try await remote.run("token", "list")
        #expect(listed.stdout.contains("web tier") && listed.stdout.contains("read") && !listed.stdout.contains(token))
        let id = String(token.dropFirst(5).prefix(12))
        #expect(try await remote.run("token", "revoke", id).status == 0)
        #expect(try await reader.run("ls", "web").status != 0, "refused at once once revoked")
        let again = try await remote.run("token", "revoke", id)
        #expect(again.status != 0 && again.stderr.contains("no token with id"), "\(again.stderr)")
        #expect(try await remote.run("token", "create", "--role", "read", "--description", "bad\u{7}bell").status == 2)
    }
}
