import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `discfg context`: named stores chosen with --context, DISCFG_CONTEXT, .discfg or the
/// current context, each part beaten by its flag or variable.
@Suite("CLI: contexts")
struct ContextTests {
    /// A runner with no DISCFG_STORE (it would beat every context) and its contexts file
    /// under its own XDG_CONFIG_HOME.
    static func runner() throws -> (CLIRunner, String) {
        var cli = try CLIRunner()
        cli.environment["DISCFG_STORE"] = nil
        cli.environment["XDG_CONFIG_HOME"] = cli.directory.appendingPathComponent("xdg").path
        return (cli, cli.directory.appendingPathComponent("xdg/discfg/contexts.json").path)
    }

    static func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    static func contexts(_ cli: CLIRunner) async throws -> [String: Any] {
        let listed = try await cli.run("context", "ls", "-f", "json")
        #expect(listed.status == 0, "\(listed.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: listed.stdoutData) as? [String: Any])
    }

    @Test("add, use, ls, rm round trip; each context reaches its own store and config; the file is 0600 in a 0700 folder")
    func roundTrip() async throws {
        let (cli, file) = try Self.runner()
        defer { cli.cleanUp() }
        let a = "sqlite://\(cli.directory.path)/a.db", b = "sqlite://\(cli.directory.path)/b.db"
        #expect(try await cli.run("context", "add", "alpha", "--store", a, "--config", "web").status == 0)
        let added = try await cli.run("context", "add", "beta", "--store", "sqlite:b.db", "--config", "web")
        #expect(added.status == 0 && added.stdout.contains("saved context beta"), "\(added.stderr)")
        #expect(try Self.mode(file) == 0o600)
        #expect(try Self.mode((file as NSString).deletingLastPathComponent) == 0o700)
        var listing = try await Self.contexts(cli)
        #expect(listing["current"] == nil)
        let entries = try #require(listing["contexts"] as? [[String: Any]])
        #expect(entries.map { $0["name"] as? String } == ["alpha", "beta"])
        // A relative SQLite path is saved as an absolute one.
        #expect((entries[1]["context"] as? [String: Any])?["store"] as? String == b)

        #expect(try await cli.run("context", "use", "alpha").status == 0)
        listing = try await Self.contexts(cli)
        #expect(listing["current"] as? String == "alpha")
        #expect(try await cli.run("context", "ls").stdout.contains("*"))
        // The current context: store a, config web.
        #expect(try await cli.run("create", "web").status == 0)
        #expect(try await cli.run("set", "k", "from-alpha").status == 0)
        // --context, before the subcommand as well as after it.
        #expect(try await cli.run("--context", "beta", "create", "web").status == 0)
        #expect(try await cli.run("--context", "beta", "set", "k", "from-beta").status == 0)
        #expect(try await cli.run("get", "web", "k", "--store", a).stdout == "from-alpha\n")
        #expect(try await cli.run("get", "web", "k", "--store", b).stdout == "from-beta\n")
        #expect(try await cli.run("get", "k", "--context", "beta").stdout == "from-beta\n")
        // doctor and which say the context chose the store and the config.
        let doctor = try await cli.run("doctor")
        #expect(doctor.stdout.contains("(from context alpha (current context))"), "\(doctor.stdout)")
        #expect(try await cli.run("which").stdout == "web (from context alpha (current context))\n")

        #expect(try await cli.run("context", "rm", "beta").status == 0)
        #expect(try await cli.run("context", "rm", "alpha").status == 0)
        listing = try await Self.contexts(cli)
        #expect(listing["current"] == nil && (listing["contexts"] as? [Any])?.isEmpty == true)
        #expect(try Self.mode(file) == 0o600)
    }

    @Test("precedence: --store and DISCFG_STORE beat --context and DISCFG_CONTEXT, which beat .discfg's context, which beats the current one")
    func precedence() async throws {
        var (cli, _) = try Self.runner()
        defer { cli.cleanUp() }
        let a = "sqlite://\(cli.directory.path)/a.db", b = "sqlite://\(cli.directory.path)/b.db", c = "sqlite://\(cli.directory.path)/c.db"
        for (name, store) in [("alpha", a), ("beta", b), ("gamma", c)] {
            #expect(try await cli.run("context", "add", name, "--store", store).status == 0)
            #expect(try await cli.run("create", "web", "--store", store).status == 0)
            #expect(try await cli.run("set", "web", "k", name, "--store", store).status == 0)
        }
        #expect(try await cli.run("context", "use", "alpha").status == 0)
        #expect(try await cli.run("get", "web", "k").stdout == "alpha\n")
        // A .discfg naming a context (and a config, in the plain form) beats the current one.
        try FileManager.default.createDirectory(at: cli.directory.appendingPathComponent("app"), withIntermediateDirectories: true)
        _ = try cli.write("app/.discfg", Data("web\ncontext: beta\n".utf8))
        #expect(try await cli.run(["get", "k"], in: "app").stdout == "beta\n")
        let shown = try await cli.run(["context", "show"], in: "app")
        #expect(shown.stdout.contains("context  beta (from ") && shown.stdout.contains("config   web (from "), "\(shown.stdout)")
        // DISCFG_CONTEXT and --context beat it; --context beats DISCFG_CONTEXT.
        cli.environment["DISCFG_CONTEXT"] = "gamma"
        #expect(try await cli.run(["get", "k"], in: "app").stdout == "gamma\n")
        #expect(try await cli.run(["get", "k", "--context", "alpha"], in: "app").stdout == "alpha\n")
        // A flag or variable for the store beats every context.
        #expect(try await cli.run(["get", "k", "--context", "alpha", "--store", b], in: "app").stdout == "beta\n")
        cli.environment["DISCFG_STORE"] = c
        #expect(try await cli.run(["get", "k", "--context", "alpha"], in: "app").stdout == "gamma\n")
        // 'discfg use' keeps the context line.
        cli.environment["DISCFG_STORE"] = nil
        cli.environment["DISCFG_CONTEXT"] = nil
        #expect(try await cli.run(["use", "web"], in: "app").status == 0)
        #expect(try await cli.run(["get", "k"], in: "app").stdout == "beta\n")
    }

    @Test("a token file is read at use against a server with auth on; one open to others is refused")
    func tokenFile() async throws {
        let (cli, _) = try Self.runner()
        defer { cli.cleanUp() }
        var server = cli
        server.environment["DISCFG_STORE"] = "sqlite://\(cli.directory.path)/served.db"
        let admin = try #require(try await server.run("token", "create", "--role", "admin", "-f", "json").envelope().token)
        let (process, port) = try await server.serve(["--auth", "token"])
        defer { Task { await process.kill() } }
        let tokenPath = try cli.write("token", Data((admin + "\n").utf8))
        #expect(chmod(tokenPath, 0o600) == 0)
        let url = "http://127.0.0.1:\(port)"
        let added = try await cli.run("context", "add", "remote", "--store", url, "--token-file", tokenPath)
        #expect(added.status == 0, "\(added.stderr)")
        #expect(try String(contentsOfFile: cli.directory.appendingPathComponent("xdg/discfg/contexts.json").path, encoding: .utf8).contains(admin) == false)
        let created = try await cli.run("--context", "remote", "create", "demo")
        #expect(created.status == 0, "\(created.stderr)")
        // Without the context's token the server refuses.
        #expect(try await cli.run("create", "other", "--store", url).status != 0)
        let shown = try await cli.run("context", "show", "--context", "remote")
        #expect(shown.stdout.contains("token file \(tokenPath)") && !shown.stdout.contains(admin), "\(shown.stdout)")
        #expect(chmod(tokenPath, 0o640) == 0)
        let refused = try await cli.run("--context", "remote", "info", "demo")
        #expect(refused.status == 2 && refused.stderr.contains("chmod 600") && refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
    }

    @Test("bad input: one sentence, exit 2, the contexts file unchanged", arguments: [
        (["--context", "nope", "get", "web", "k"], "no context named nope (named by --context)"),
        (["context", "use", "nope"], "no context named nope"),
        (["context", "rm", "nope"], "no context named nope"),
        (["context", "add", "bad name", "--store", "memory:"], "context name"),
        (["context", "add", "x", "--store", "ftp://x"], "unknown scheme"),
        (["context", "add", "x"], "needs --store"),
        (["context", "add", "x", "--store", "memory:", "--token-file", "/nonexistent/token"], "no token file at /nonexistent/token"),
        (["context", "add", "x", "--store", "memory:", "--token", "secret"], "--token-file"),
        (["context", "add", "alpha", "--store", "memory:"], "--force"),
        (["context", "add", "x", "--store", "memory:", "--token-file", "open-token"], "chmod 600"),
    ])
    func badInput(arguments: [String], mentions: String) async throws {
        let (cli, file) = try Self.runner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("context", "add", "alpha", "--store", "sqlite://\(cli.directory.path)/a.db").status == 0)
        let token = try cli.write("open-token", Data("t\n".utf8))
        #expect(chmod(token, 0o644) == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: file))
        let result = try await cli.run(arguments)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("discfg: ") && result.stderr.contains(mentions), "\(result.stderr)")
        // --token also brings its warning that a command line is readable by others.
        #expect(result.stderr.split(separator: "\n").filter { !$0.hasPrefix("discfg: warning:") }.count == 1, "\(result.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)
    }

    @Test("a contexts file open to others is refused, as ssh refuses its own")
    func openFileRefused() async throws {
        let (cli, file) = try Self.runner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("context", "add", "alpha", "--store", "memory:").status == 0)
        #expect(chmod(file, 0o644) == 0)
        let result = try await cli.run("context", "ls")
        #expect(result.status == 2 && result.stderr.contains("open to other users"), "\(result.stderr)")
    }

    @Test("--help shows examples")
    func help() async throws {
        let (cli, _) = try Self.runner()
        defer { cli.cleanUp() }
        for arguments in [["context", "--help"], ["context", "add", "--help"], ["context", "show", "--help"]] {
            let result = try await cli.run(arguments)
            #expect(result.status == 0 && result.stdout.contains("EXAMPLE"), "\(arguments): \(result.stdout)")
        }
        #expect(try await cli.run("get", "--help").stdout.contains("--context"))
    }
}
