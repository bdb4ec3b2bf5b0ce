import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `discfg token create --scope` with prefix scopes, on the store and through a server,
/// `token list` showing them, bad scopes refused with one line, and a scoped token held
/// to its prefix by the commands that use it.
@Suite("CLI: tokens scoped to prefixes")
struct TokenScopeCommandTests {
    @Test("--scope takes configs and prefixes, token list shows them, bad scopes exit 2 (or 1) with one line and issue nothing")
    func createAndList() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let created = try await cli.run("token", "create", "--role", "write", "--scope", "demo:/app", "--scope", "demo:etcd:/registry/", "--scope", "prod", "-f", "json")
        #expect(created.status == 0, "\(created.stderr)")
        #expect(try created.envelope().tokens?.first?.scopes == ["demo:/app/", "demo:etcd:/registry/", "prod"])
        let human = try await cli.run("token", "create", "--role", "read", "--scope", "demo:/web/")
        #expect(human.status == 0 && human.stdout.contains("scopes demo:/web/"), "\(human.stdout)")
        let list = try await cli.run("token", "list")
        #expect(list.stdout.contains("SCOPES") && list.stdout.contains("demo:/app/,demo:etcd:/registry/,prod") && list.stdout.contains("demo:/web/"), "\(list.stdout)")
        for (scope, words) in [("demo:", "names no prefix"), ("demo:app", "does not start with '/'"), ("demo:/", "root prefix"), ("bad name", "config name"), (":/app/", "must not be empty"), ("demo:/a/../b", "\"..\" segment")] {
            let refused = try await cli.run("token", "create", "--role", "read", "--scope", scope)
            #expect(refused.status != 0 && refused.stderr.contains(words), "\(scope): \(refused.status) \(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1, "one line: \(refused.stderr)")
        }
        #expect(try await cli.run("token", "list", "-f", "json").envelope().tokens?.count == 2)
    }

    @Test("through a server: an admin issues a scoped token over /admin/tokens, which then sets, gets and lists inside its prefix and is refused past it")
    func throughAServer() async throws {
        var cli = try CLIRunner()
        defer { cli.cleanUp() }
        let admin = try #require(try await cli.run("token", "create", "--role", "admin", "-f", "json").envelope().token)
        let (server, port) = try await cli.serve(["--auth", "token"])
        defer { Task { await server.kill() } }
        cli.environment["DISCFG_STORE"] = "http://127.0.0.1:\(port)"
        cli.environment["DISCFG_TOKEN"] = admin
        #expect(try await cli.run("create", "demo").status == 0)
        #expect(try await cli.run("set", "demo", "/db/password", "secret").status == 0)
        let created = try await cli.run("token", "create", "--role", "write", "--scope", "demo:/app/", "-f", "json")
        #expect(created.status == 0, "\(created.stderr)")
        let scoped = try #require(try created.envelope().token)
        #expect(try await cli.run("token", "list", "-f", "json").envelope().tokens?.contains { $0.scopes == ["demo:/app/"] } == true)
        cli.environment["DISCFG_TOKEN"] = scoped
        #expect(try await cli.run("set", "demo", "/app/flag", "on").status == 0)
        #expect(try await cli.run("get", "demo", "/app/flag").stdout.contains("on"))
        #expect(try await cli.run("ls", "demo", "/app/").status == 0)
        for arguments in [["set", "demo", "/apple", "x"], ["get", "demo", "/db/password"], ["ls", "demo", "/"], ["export", "demo"]] {
            let refused = try await cli.run(arguments)
            #expect(refused.status != 0 && refused.stderr.contains("demo:/app/"), "\(arguments): \(refused.status) \(refused.stderr)")
        }
        await server.kill()
    }
}
