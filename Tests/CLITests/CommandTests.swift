import DiscfgCore
import Foundation
import Testing

@Suite("CLI: commands")
struct CommandTests {
    @Test("use writes .discfg; which names it, also from a subdirectory; --config overrides it")
    func useAndWhich() throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try cli.run("create", "alpha")
        try cli.run("create", "beta")
        #expect(try cli.run("use", "alpha").status == 0)
        let file = try String(contentsOf: cli.directory.appendingPathComponent(".discfg"), encoding: .utf8)
        #expect(file.trimmingCharacters(in: .whitespacesAndNewlines) == "alpha")
        try FileManager.default.createDirectory(at: cli.directory.appendingPathComponent("sub/dir"), withIntermediateDirectories: true)
        #expect(try cli.run("which", in: "sub/dir").stdout.hasPrefix("alpha (from "))
        #expect(try cli.run("which", "-f", "json").envelope().currentDiscfg == "alpha")
        try cli.run("set", "k", "in-beta", "--config", "beta")
        #expect(try cli.run("get", "beta", "k").stdout == "in-beta\n")
        #expect(try cli.run("get", "k").status == 3)
        #expect(try cli.run("use", "nope").status == 3)
    }

    @Test("configs, info, update and delete-config")
    func configLifecycle() throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try cli.run("create", "app", "--history", "7d", "--description", "the app")
        try cli.run("create", "other", #"{"history": "100"}"#)
        let configs = try cli.run("configs", "-f", "json").envelope().configs ?? []
        #expect(configs.map(\.name) == ["app", "other"])
        #expect(configs.last?.settings.history == .last(100))
        let table = try cli.run("configs").stdout
        #expect(table.contains("NAME") && table.contains("app") && table.contains("7d"))

        #expect(try cli.run("update", "app", "--history", "forever").status == 0)
        #expect(try cli.run("info", "app", "-f", "json").envelope().configInfo?.settings.history == .forever)
        #expect(try cli.run("info", "app").stdout.contains("the app"))
        #expect(try cli.run("update", "app").status == 2)

        #expect(try cli.run("create", "app").status == 1)
        let refused = try cli.run("delete-config", "app")
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("--yes"))
        #expect(try cli.run("info", "app").status == 0)
        #expect(try cli.run("delete-config", "app", "--yes").status == 0)
        #expect(try cli.run("info", "app").status == 3)
    }

    @Test("set reads standard input; --ttl shows in the item; conditions --if-absent, --if-value/-c, --if-mod-revision")
    func setVariants() throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try cli.run("create", "c")
        try cli.run("use", "c")
        #expect(try cli.run("set", "piped", stdin: Data("from stdin".utf8)).status == 0)
        #expect(try cli.run("get", "piped", "--raw").stdout == "from stdin")

        let ttl = try cli.run("set", "session", "abc", "--ttl", "5m", "-f", "json").envelope()
        let item = try #require(ttl.item)
        let expires = try #require(item.expiresAt)
        #expect(abs(expires.timeIntervalSince(item.modified) - 300) < 1)

        #expect(try cli.run("set", "lock", "me", "--if-absent").status == 0)
        #expect(try cli.run("set", "lock", "you", "--if-absent").status == 4)
        #expect(try cli.run("set", "lock", "you", "-c", "wrong").status == 4)
        #expect(try cli.run("set", "lock", "you", "--condition", "me").status == 0)
        let rev = try cli.run("get", "lock", "-f", "json").envelope().item!.modRevision
        #expect(try cli.run("set", "lock", "them", "--if-mod-revision", String(rev.rawValue + 100)).status == 4)
        #expect(try cli.run("set", "lock", "them", "--if-mod-revision", String(rev.rawValue)).status == 0)

        let typed = try cli.run("set", "doc", "{}", "--content-type", "application/json", "-f", "json").envelope()
        #expect(typed.item?.contentType == "application/json")
    }

    @Test("get --revision reads the past; history lists versions newest first")
    func historyAndRevisions() throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try cli.run("create", "h")
        try cli.run("use", "h")
        for value in ["one", "two", "three"] { try cli.run("set", "k", value) }
        #expect(try cli.run("get", "k", "--revision", "1").stdout == "one\n")
        #expect(try cli.run("get", "k", "--revision", "2").stdout == "two\n")
        #expect(try cli.run("get", "k", "--revision", "99").status == 2)
        let history = try cli.run("history", "k", "-f", "json").envelope().events ?? []
        #expect(history.map(\.revision) == [3, 2, 1])
        #expect(history.first?.prevItem?.value == "two")
        let table = try cli.run("history", "k").stdout
        #expect(table.hasPrefix("REVISION"))
        #expect(table.contains("three"))
    }

    @Test("ls lists directories and, recursively, every key; delete and delete --prefix")
    func listAndDelete() throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try cli.run("create", "l")
        try cli.run("use", "l")
        for key in ["/a/x", "/a/y", "/a/b/z", "/ab", "/top"] { try cli.run("set", key, "v") }
        let shallow = try cli.run("ls", "/a", "-f", "json").envelope()
        #expect(shallow.items?.map(\.key) == ["/a/x", "/a/y"])
        #expect(shallow.prefixes == ["/a/b/"])
        let deep = try cli.run("ls", "-r", "-f", "json").envelope()
        #expect(deep.items?.map(\.key) == ["/a/b/z", "/a/x", "/a/y", "/ab", "/top"])
        let table = try cli.run("ls", "/a").stdout
        #expect(table.hasPrefix("KEY"))
        #expect(table.contains("/a/b/"))

        #expect(try cli.run("delete", "top").status == 0)
        #expect(try cli.run("delete", "top").status == 3)
        #expect(try cli.run("delete", "/a/x", "--if-version", "5").status == 4)
        #expect(try cli.run("delete", "--prefix", "/a").status == 2)
        let deleted = try cli.run("delete", "--prefix", "/a", "--yes", "-f", "json").envelope()
        #expect(deleted.events?.map(\.key) == ["/a/b/z", "/a/x", "/a/y"])
        #expect(try cli.run("ls", "-r", "-f", "json").envelope().items?.map(\.key) == ["/ab"])
    }

    @Test("version and --help teach; exit codes are documented")
    func versionAndHelp() throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try cli.run("version").stdout.hasPrefix("discfg v"))
        let help = try cli.run("--help")
        #expect(help.status == 0)
        #expect(help.stdout.contains("EXIT CODES"))
        #expect(help.stdout.contains("condition failed"))
        #expect(try cli.run("set", "--help").stdout.contains("--if-version"))
    }
}
