import DiscfgTestSupport
import Foundation
import Testing

/// Only the commands that make a store create one: every other command, given a SQLite
/// path where nothing is, says so in one sentence naming the path and how to create a
/// store there, exits 1, and leaves neither the file nor its folder behind.
@Suite("CLI: a store that is not there")
struct StoreAbsentTests {
    /// Commands that use a store, each with what it needs to run against one.
    static let users: [[String]] = [
        ["get", "demo", "/db/host"], ["set", "demo", "/db/host", "db1"], ["ls", "demo"], ["configs"], ["info", "demo"],
        ["delete", "demo", "/db/host"], ["history", "demo", "/db/host"], ["log", "demo"], ["export", "demo"],
        ["update", "demo", "--history", "1d"], ["delete-config", "demo", "--yes"], ["watch", "demo", "/db/"],
        ["schema", "ls", "demo"], ["token", "list"], ["exec", "demo", "--", "/bin/true"],
        // Import writes into a config that exists, so a store it made would only say that
        // the config does not.
        ["import", "demo", "demo.json"],
    ]

    @Test("a command that only uses a store names the missing file and creates nothing", arguments: users)
    func refused(_ arguments: [String]) async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let folder = cli.directory.appendingPathComponent("x")
        let file = folder.appendingPathComponent("none.db").path
        _ = try cli.write("demo.json", Data(#"{"db": {"host": "db1"}}"#.utf8))
        var line = arguments
        line.insert(contentsOf: ["--store", "sqlite://\(file)"], at: arguments.firstIndex(of: "--") ?? arguments.endIndex)
        let result = try await cli.run(line)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr == "discfg: no store at \(file) (nothing was created): discfg init --store 'sqlite://\(file)' creates one\n")
        #expect(result.stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(!FileManager.default.fileExists(atPath: folder.path), "the folder was made")
    }

    @Test("the default store: the hint is plain 'discfg init', and nothing is made under XDG_DATA_HOME")
    func defaultStore() async throws {
        var cli = try CLIRunner()
        defer { cli.cleanUp() }
        cli.environment["DISCFG_STORE"] = nil
        cli.environment["XDG_DATA_HOME"] = cli.directory.appendingPathComponent("data").path
        let file = cli.directory.appendingPathComponent("data/discfg/discfg.db").path
        let result = try await cli.run("get", "demo", "/db/host")
        #expect(result.status == 1)
        #expect(result.stderr == "discfg: no store at \(file) (nothing was created): discfg init creates one\n")
        #expect(!FileManager.default.fileExists(atPath: cli.directory.appendingPathComponent("data").path))
    }

    @Test("sqlite://NAME/… is refused with both right spellings; no ./NAME is made")
    func hostForm() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let result = try await cli.run("get", "demo", "k", "--store", "sqlite://tmp/x.db")
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("sqlite:///tmp/x.db for /tmp/x.db"), "\(result.stderr)")
        #expect(result.stderr.contains("sqlite:tmp/x.db for a path relative to the current folder"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(!FileManager.default.fileExists(atPath: cli.directory.appendingPathComponent("tmp").path))
        // The relative spelling it suggests is taken, and made by create.
        #expect(try await cli.run("create", "demo", "--store", "sqlite:tmp/x.db").status == 0)
        #expect(FileManager.default.fileExists(atPath: cli.directory.appendingPathComponent("tmp/x.db").path))
    }

    @Test("init, create, token create and serve make the store, its folder included")
    func makers() async throws {
        var cli = try CLIRunner()
        defer { cli.cleanUp() }
        let made: [(String, [String])] = [("init", ["init"]), ("create", ["create", "demo"]), ("token", ["token", "create", "--role", "admin"])]
        for (name, arguments) in made {
            let file = cli.directory.appendingPathComponent("\(name)/store.db").path
            let result = try await cli.run(arguments + ["--store", "sqlite://\(file)"])
            #expect(result.status == 0, "\(name): \(result.stderr)")
            #expect(FileManager.default.fileExists(atPath: file), "\(name)")
        }
        let initialized = "sqlite://\(cli.directory.path)/init/store.db"
        #expect(try await cli.run("init", "--store", initialized).stdout == "store \(initialized) is ready; nothing to create\n")
        #expect(try await cli.run("init", "--store", "sqlite://\(cli.directory.path)/again/s.db").stdout == "created store sqlite://\(cli.directory.path)/again/s.db\n")
        // The store made by create is used by the others.
        cli.environment["DISCFG_STORE"] = "sqlite://\(cli.directory.path)/create/store.db"
        #expect(try await cli.run("set", "demo", "/db/host", "db2").status == 0)
        #expect(try await cli.run("get", "demo", "/db/host").stdout == "db2\n")

        let file = cli.directory.appendingPathComponent("serve/store.db").path
        cli.environment["DISCFG_STORE"] = "sqlite://\(file)"
        let (server, _) = try await cli.serve()
        #expect(FileManager.default.fileExists(atPath: file))
        #expect(await server.kill(SIGTERM) == .exited(0))
    }
}
