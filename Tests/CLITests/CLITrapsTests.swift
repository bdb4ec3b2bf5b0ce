import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// The everyday command lines that used to mislead: the optional leading CONFIG
/// argument, mistyped commands, global options before the subcommand, and flag names.
@Suite("CLI: everyday traps")
struct CLITrapsTests {
    @Test("[CONFIG] is read by one rule, and every error says what was taken as what")
    func configArgument() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "demo")
        try await cli.run("create", "other")
        try await cli.run("create", "myconfig")

        // No config selected: the key and value are named as such, not "no value given"
        // or a complaint that a key is not a config name.
        let unnamed = try await cli.run("set", "foo", "bar")
        #expect(unnamed.status == 2)
        #expect(unnamed.stderr.contains("no config selected"), "stderr: \(unnamed.stderr)")
        #expect(unnamed.stderr.contains(#"read "foo" as the key and "bar" as the value"#), "stderr: \(unnamed.stderr)")
        let slashed = try await cli.run("set", "db/host", "x")
        #expect(slashed.status == 2)
        #expect(slashed.stderr.contains("no config selected"), "stderr: \(slashed.stderr)")
        #expect(!slashed.stderr.contains("config name"), "stderr: \(slashed.stderr)")

        // The original discfg's command lines.
        #expect(try await cli.run("set", "myconfig", "key", "value").status == 0)
        #expect(try await cli.run("get", "myconfig", "key").stdout == "value\n")
        #expect(try await cli.run("set", "other", "/x", "1").status == 0)
        // With nothing selected, a piped value counts: CONFIG KEY, as the original read it.
        #expect(try await cli.run(["set", "myconfig", "piped"], stdin: Data("from a pipe".utf8)).status == 0)
        #expect(try await cli.run("get", "myconfig", "piped").stdout == "from a pipe\n")

        try await cli.run("use", "demo")
        // Three arguments are one more than set needs: the first is the config.
        let greeting = try await cli.run("set", "greeting", "hello", "world")
        #expect(greeting.status == 3)
        #expect(greeting.stderr.contains(#"read "greeting" as the config, "hello" as the key and "world" as the value"#), "stderr: \(greeting.stderr)")
        // Two are what set needs: key and value in the selected config.
        #expect(try await cli.run("set", "greeting", "hello").status == 0)
        #expect(try await cli.run("get", "demo", "greeting").stdout == "hello\n")

        // A bare name before ls is a config; a prefix has a '/'.
        let listed = try await cli.run("ls", "other", "-r")
        #expect(listed.status == 0, "stderr: \(listed.stderr)")
        #expect(listed.stdout.contains("/x"), "stdout: \(listed.stdout)")
        let bare = try await cli.run("ls", "greeting")
        #expect(bare.status == 3)
        #expect(bare.stderr.contains("a prefix is written with a '/': /greeting"), "stderr: \(bare.stderr)")
        #expect(try await cli.run("ls", "/", "-r").stdout.contains("/greeting"))

        // A command that takes only a config says so.
        let exported = try await cli.run("export", "/db/")
        #expect(exported.status == 2)
        #expect(exported.stderr.contains("discfg export takes only a config name"), "stderr: \(exported.stderr)")
        let tooMany = try await cli.run("set", "db/host", "a", "b")
        #expect(tooMany.status == 2)
        #expect(tooMany.stderr.contains(#""db/host" is not a config name (it contains "/"), so it was read as the key"#), "stderr: \(tooMany.stderr)")

        // The rule is in the help.
        let help = try await cli.run("set", "--help")
        #expect(help.stdout.contains("The first argument is the config's name when it can be"), "help: \(help.stdout)")
    }

    @Test("a mistyped command names the nearest one, exit 2")
    func typos() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let gte = try await cli.run("gte")
        #expect(gte.status == 2)
        #expect(gte.stderr.hasPrefix("discfg: unknown command 'gte'; did you mean 'get'?"), "stderr: \(gte.stderr)")
        let nested = try await cli.run("schema", "lss")
        #expect(nested.status == 2)
        #expect(nested.stderr.contains("unknown command 'schema lss'; did you mean 'schema ls'?"), "stderr: \(nested.stderr)")
        let far = try await cli.run("frobnicate")
        #expect(far.status == 2)
        #expect(far.stderr.contains("unknown command 'frobnicate'; 'discfg --help' lists the commands"), "stderr: \(far.stderr)")
        let flag = try await cli.run("get", "k", "--stor", "memory:")
        #expect(flag.status == 2)
        #expect(flag.stderr.contains("Did you mean '--store'?"), "stderr: \(flag.stderr)")
        #expect(try await cli.run("help", "get").status == 0)
    }

    @Test("global options work before the subcommand, values and --opt=value with them")
    func globalOptionsFirst() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("init")
        let other = "sqlite://\(cli.directory.path)/other.db"
        #expect(try await cli.run("--store", other, "init").status == 0)
        #expect(try await cli.run("--store=\(other)", "create", "myapp").status == 0)
        #expect(try await cli.run("--store", other, "-f", "silent", "set", "myapp", "key", "v1").status == 0)
        let got = try await cli.run("--store", other, "-f", "json", "get", "myapp", "key")
        #expect(got.status == 0, "stderr: \(got.stderr)")
        #expect(try got.envelope().item?.value == "v1")
        let nested = try await cli.run("-f", "json", "schema", "--store", other, "ls", "myapp")
        #expect(nested.status == 0, "stderr: \(nested.stderr)")
        #expect(try nested.envelope().action == "schemas")
        // The default store (DISCFG_STORE) was not touched.
        #expect(try await cli.run("get", "myapp", "key").status == 3)
        // A bad value is still the option's error, and --help and --version still work.
        let bad = try await cli.run("-f", "xml", "get", "myapp", "key")
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("'xml' is invalid for '-f <format>'"), "stderr: \(bad.stderr)")
        #expect(try await cli.run("--version").status == 0)
        let help = try await cli.run("-f", "json", "--help")
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: discfg"))
    }

    @Test("flags are kebab-case, the original's spellings still work, -s is refused beside --secret, own options come first in help")
    func flagNames() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "demo")
        try await cli.run("use", "demo")
        try await cli.run("set", "k", "v")
        let half = try await cli.run("get", "k", "--key-id", "AKIDEXAMPLE")
        #expect(half.status == 2)
        #expect(half.stderr.contains("give both --key-id and --secret-key, or neither"), "stderr: \(half.stderr)")
        for spelling in [["--key-id", "A", "--secret-key", "B", "--cred-profile", "p"], ["--keyId", "A", "--secretKey", "B", "--credProfile", "p"], ["-k", "A", "-s", "B", "-p", "p"]] {
            let got = try await cli.run(["get", "k"] + spelling)
            #expect(got.status == 0, "\(spelling): \(got.stderr)")
            #expect(got.stdout == "v\n")
        }
        let twice = try await cli.run("get", "k", "--cred-profile", "a", "--credProfile", "b")
        #expect(twice.status == 2)
        #expect(twice.stderr.contains("--cred-profile is given more than once"), "stderr: \(twice.stderr)")

        // In set, -s could be meant as --secret: refused, and nothing is stored unsealed.
        for arguments in [["set", "k", "plain", "-s"], ["set", "k", "-s", "plain"]] {
            let clash = try await cli.run(arguments)
            #expect(clash.status == 2)
            #expect(clash.stderr.contains("-s is ambiguous in discfg set: write --secret to seal the value, or --secret-key"), "stderr: \(clash.stderr)")
        }
        #expect(try await cli.run("get", "k").stdout == "v\n")

        // agent's config-name prefix is --config-prefix: --prefix names key prefixes elsewhere.
        let agentPrefix = try await cli.run("agent", "--config-prefix", "a/b")
        #expect(agentPrefix.status == 2)
        #expect(agentPrefix.stderr.contains(#"--config-prefix "a/b" is not the start of a config name"#), "stderr: \(agentPrefix.stderr)")
        let agentHelp = try await cli.run("agent", "--help").stdout
        #expect(agentHelp.contains("--config-prefix <prefix>") && !agentHelp.contains("  --prefix <"), "help: \(agentHelp)")

        let help = try await cli.run("get", "--help").stdout
        #expect(help.contains("--cred-profile") && help.contains("--key-id") && help.contains("--secret-key"))
        #expect(!help.contains("--credProfile") && !help.contains("--keyId") && !help.contains("--secretKey") && !help.contains("-s,"))
        let own = try #require(help.range(of: "--revision <r>"))
        let global = try #require(help.range(of: "GLOBAL OPTIONS:"))
        let store = try #require(help.range(of: "--store <url>"))
        #expect(own.lowerBound < global.lowerBound && global.lowerBound < store.lowerBound, "help: \(help)")
    }
}
