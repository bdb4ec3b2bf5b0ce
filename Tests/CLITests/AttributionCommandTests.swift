import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `-m` on the changing commands, `discfg log` and its filters, end to end; through a
/// server, who is the caller it authenticated, whatever the command's machine is.
@Suite("CLI: who and why")
struct AttributionCommandTests {
    @Test("-m is recorded on set, delete, txn (a document's message when -m is absent) and import; log lists the changes newest first, filtered by --by, --since, --revision and a prefix")
    func messagesAndLog() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let me = "local:" + Principal.localUser(environment: cli.environment).id
        #expect(try await cli.run("create", "app").status == 0)
        #expect(try await cli.run("set", "app", "/db/host", "db1", "-m", "first host").status == 0)
        #expect(try await cli.run("set", "app", "/db/port", "5432").status == 0)
        let txn = Data(#"{"success": [{"op": "put", "key": "/db/host", "value": "db2"}, {"op": "delete", "key": "/db/port"}], "message": "move to the new primary"}"#.utf8)
        #expect(try await cli.run(["txn", "app"], stdin: txn).status == 0)
        #expect(try await cli.run(["import", "app", "-", "-m", "seed flags"], stdin: Data(#"{"/features/a": "on"}"#.utf8)).status == 0)
        #expect(try await cli.run("delete", "app", "/features/a", "--message", "flag retired").status == 0)

        let log = try await cli.run("log", "app", "-f", "json")
        #expect(log.status == 0, "\(log.stderr)")
        let events = try log.envelope().events ?? []
        #expect(events.map(\.revision.rawValue) == [5, 4, 3, 3, 2, 1])
        #expect(events.map(\.message) == ["flag retired", "seed flags", "move to the new primary", "move to the new primary", nil, "first host"])
        #expect(Set(events.compactMap(\.by).map(\.qualifiedID)) == [me])

        let human = try await cli.run("log", "app")
        #expect(human.stdout.contains("/db/host, -/db/port"), "\(human.stdout)")
        #expect(human.stdout.contains("move to the new primary"))
        #expect(try await cli.run("log", "app", "/db/", "-f", "json").envelope().events?.map(\.revision.rawValue) == [3, 3, 2, 1])
        #expect(try await cli.run("log", "app", "--revision", "3", "-f", "json").envelope().events?.map(\.key) == ["/db/host", "/db/port"])
        #expect(try await cli.run("log", "app", "--by", "someone-else", "-f", "json").envelope().events?.isEmpty == true)
        #expect(try await cli.run("log", "app", "--by", me, "--since", "1h", "-n", "2", "-f", "json").envelope().events?.map(\.revision.rawValue) == [5, 4])
        #expect(try await cli.run("log", "app", "--since", "yesterday").status == 2)

        let history = try await cli.run("history", "app", "/db/host")
        #expect(history.stdout.contains("move to the new primary") && history.stdout.contains("first host"), "\(history.stdout)")

        let long = try await cli.run("set", "app", "/db/host", "db3", "-m", String(repeating: "a", count: Attribution.maxMessageBytes + 1))
        #expect(long.status != 0)
        #expect(long.stderr.contains("1024"))
        #expect(try await cli.run("get", "app", "/db/host").stdout.contains("db2"))
    }

    @Test("through a server with tokens, a change is recorded as the token that made it — not the command's user — with -m as its message")
    func throughAServer() async throws {
        var cli = try CLIRunner()
        defer { cli.cleanUp() }
        let created = try await cli.run("token", "create", "--role", "admin", "--description", "deploy job", "-f", "json")
        #expect(created.status == 0, "\(created.stderr)")
        let token = try #require(try created.envelope().token)
        let (server, port) = try await cli.serve(["--auth", "token"])
        defer { Task { await server.kill() } }
        cli.environment["DISCFG_STORE"] = "http://127.0.0.1:\(port)"
        cli.environment["DISCFG_TOKEN"] = token
        #expect(try await cli.run("create", "app").status == 0)
        #expect(try await cli.run("set", "app", "/k", "v", "-m", "rolled out by CI").status == 0)
        let events = try await cli.run("log", "app", "-f", "json").envelope().events ?? []
        #expect(events.map(\.message) == ["rolled out by CI"])
        #expect(events.first?.by?.kind == .token)
        #expect(events.first?.by?.description == "deploy job")
        await server.kill()
    }
}
