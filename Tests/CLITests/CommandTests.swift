import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

@Suite("CLI: commands")
struct CommandTests {
    @Test("use writes .discfg; which names it, also from a subdirectory; --config overrides it")
    func useAndWhich() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "alpha")
        try await cli.run("create", "beta")
        #expect(try await cli.run("use", "alpha").status == 0)
        let file = try String(contentsOf: cli.directory.appendingPathComponent(".discfg"), encoding: .utf8)
        #expect(file.trimmingCharacters(in: .whitespacesAndNewlines) == "alpha")
        try FileManager.default.createDirectory(at: cli.directory.appendingPathComponent("sub/dir"), withIntermediateDirectories: true)
        #expect(try await cli.run("which", in: "sub/dir").stdout.hasPrefix("alpha (from "))
        #expect(try await cli.run("which", "-f", "json").envelope().currentDiscfg == "alpha")
        try await cli.run("set", "k", "in-beta", "--config", "beta")
        #expect(try await cli.run("get", "beta", "k").stdout == "in-beta\n")
        #expect(try await cli.run("get", "k").status == 3)
        #expect(try await cli.run("use", "nope").status == 3)
    }

    @Test("configs, info, update and delete-config")
    func configLifecycle() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "app", "--history", "7d", "--description", "the app")
        try await cli.run("create", "other", #"{"history": "100"}"#)
        let configs = try await cli.run("configs", "-f", "json").envelope().configs ?? []
        #expect(configs.map(\.name) == ["app", "other"])
        #expect(configs.last?.settings.history == .last(100))
        let table = try await cli.run("configs").stdout
        #expect(table.contains("NAME") && table.contains("app") && table.contains("7d"))

        #expect(try await cli.run("update", "app", "--history", "forever").status == 0)
        #expect(try await cli.run("info", "app", "-f", "json").envelope().configInfo?.settings.history == .forever)
        #expect(try await cli.run("info", "app").stdout.contains("the app"))
        #expect(try await cli.run("update", "app").status == 2)

        #expect(try await cli.run("create", "app").status == 1)
        let refused = try await cli.run("delete-config", "app")
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("--yes"))
        #expect(try await cli.run("info", "app").status == 0)
        #expect(try await cli.run("delete-config", "app", "--yes").status == 0)
        #expect(try await cli.run("info", "app").status == 3)
    }

    @Test("set reads standard input; --ttl shows in the item; conditions --if-absent, --if-value/-c, --if-mod-revision")
    func setVariants() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "c")
        try await cli.run("use", "c")
        #expect(try await cli.run("set", "piped", stdin: Data("from stdin".utf8)).status == 0)
        #expect(try await cli.run("get", "piped", "--raw").stdout == "from stdin")

        let ttl = try await cli.run("set", "session", "abc", "--ttl", "5m", "-f", "json").envelope()
        let item = try #require(ttl.item)
        let expires = try #require(item.expiresAt)
        #expect(abs(expires.timeIntervalSince(item.modified) - 300) < 1)

        #expect(try await cli.run("set", "lock", "me", "--if-absent").status == 0)
        #expect(try await cli.run("set", "lock", "you", "--if-absent").status == 4)
        #expect(try await cli.run("set", "lock", "you", "-c", "wrong").status == 4)
        #expect(try await cli.run("set", "lock", "you", "--condition", "me").status == 0)
        let rev = try await cli.run("get", "lock", "-f", "json").envelope().item!.modRevision
        #expect(try await cli.run("set", "lock", "them", "--if-mod-revision", String(rev.rawValue + 100)).status == 4)
        #expect(try await cli.run("set", "lock", "them", "--if-mod-revision", String(rev.rawValue)).status == 0)

        let typed = try await cli.run("set", "doc", "{}", "--content-type", "application/json", "-f", "json").envelope()
        #expect(typed.item?.contentType == "application/json")
    }

    @Test("get --revision reads the past; history lists versions newest first")
    func historyAndRevisions() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "h")
        try await cli.run("use", "h")
        for value in ["one", "two", "three"] { try await cli.run("set", "k", value) }
        #expect(try await cli.run("get", "k", "--revision", "1").stdout == "one\n")
        #expect(try await cli.run("get", "k", "--revision", "2").stdout == "two\n")
        #expect(try await cli.run("get", "k", "--revision", "99").status == 2)
        let history = try await cli.run("history", "k", "-f", "json").envelope().events ?? []
        #expect(history.map(\.revision) == [3, 2, 1])
        #expect(history.first?.prevItem?.value == "two")
        let table = try await cli.run("history", "k").stdout
        #expect(table.hasPrefix("REVISION"))
        #expect(table.contains("three"))
    }

    @Test("ls lists directories and, recursively, every key; delete and delete --prefix")
    func listAndDelete() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "l")
        try await cli.run("use", "l")
        for key in ["/a/x", "/a/y", "/a/b/z", "/ab", "/top"] { try await cli.run("set", key, "v") }
        let shallow = try await cli.run("ls", "/a", "-f", "json").envelope()
        #expect(shallow.items?.map(\.key) == ["/a/x", "/a/y"])
        #expect(shallow.prefixes == ["/a/b/"])
        let deep = try await cli.run("ls", "-r", "-f", "json").envelope()
        #expect(deep.items?.map(\.key) == ["/a/b/z", "/a/x", "/a/y", "/ab", "/top"])
        let table = try await cli.run("ls", "/a").stdout
        #expect(table.hasPrefix("KEY"))
        #expect(table.contains("/a/b/"))

        #expect(try await cli.run("delete", "top").status == 0)
        #expect(try await cli.run("delete", "top").status == 3)
        #expect(try await cli.run("delete", "/a/x", "--if-version", "5").status == 4)
        #expect(try await cli.run("delete", "--prefix", "/a").status == 2)
        let deleted = try await cli.run("delete", "--prefix", "/a", "--yes", "-f", "json").envelope()
        #expect(deleted.events?.map(\.key) == ["/a/b/z", "/a/x", "/a/y"])
        #expect(try await cli.run("ls", "-r", "-f", "json").envelope().items?.map(\.key) == ["/ab"])
    }

    @Test("version and --help teach; exit codes are documented")
    func versionAndHelp() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("version").stdout.hasPrefix("discfg v"))
        let help = try await cli.run("--help")
        #expect(help.status == 0)
        #expect(help.stdout.contains("EXIT CODES"))
        #expect(help.stdout.contains("condition failed"))
        #expect(try await cli.run("set", "--help").stdout.contains("--if-version"))
    }
}
