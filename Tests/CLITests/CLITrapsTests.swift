import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// The everyday command lines that used to mislead: mistyped commands and global
/// options before the subcommand.
@Suite("CLI: everyday traps")
struct CLITrapsTests {
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
}
