import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// Keys whose variables would change how the command loads or starts (`StartupVariables`):
/// refused by `exec` and `export --to env` unless allowed by name.
@Suite("CLI: exec and export refuse start-up variables")
struct StartupVariableTests {
    /// Config `app` with /app/db/host and the attacks' keys under /app.
    static func configured(_ keys: [(String, String)]) async throws -> CLIRunner {
        let cli = try CLIRunner()
        #expect(try await cli.run("create", "app").status == 0)
        #expect(try await cli.run("set", "app", "app/db/host", "db1.internal").status == 0)
        for (key, value) in keys {
            #expect(try await cli.run(["set", "app", key, "-d", "-"], stdin: Data(value.utf8)).status == 0)
        }
        return cli
    }

    @Test("BASH_ENV set from a key runs nothing: exec refuses it, names the key and the variable, exit 2, the command never starts")
    func bashEnv() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let proof = cli.directory.appendingPathComponent("pwned").path
        #expect(try await cli.run("create", "app").status == 0)
        #expect(try await cli.run(["set", "app", "app/bash_env", "-d", "-"], stdin: Data("$(id > \(proof))".utf8)).status == 0)
        for mode in [[], ["--strict"], ["--only", "BASH_ENV"], ["--only", "/app/bash_env", "--strict"]] {
            let refused = try await cli.run(["exec", "app", "--prefix", "/app"] + mode + ["--", "bash", "-c", "echo ran"])
            #expect(refused.status == 2, "\(mode): \(refused.logs)")
            #expect(refused.stderr.contains("/app/bash_env") && refused.stderr.contains("BASH_ENV") && refused.stderr.contains("--allow-env BASH_ENV"), "\(refused.stderr)")
            #expect(!refused.stdout.contains("ran"), "the command did not start")
            #expect(!FileManager.default.fileExists(atPath: proof), "\(mode): BASH_ENV ran $(id > …)")
        }
        // export names variables from the whole path: the same key at the root.
        #expect(try await cli.run(["set", "app", "bash_env", "-d", "-"], stdin: Data("$(id > \(proof))".utf8)).status == 0)
        let sourced = try await cli.run("export", "app", "--to", "env")
        #expect(sourced.status == 2 && sourced.stderr.contains("/bash_env") && sourced.stderr.contains("BASH_ENV"), "\(sourced.logs)")
        #expect(!sourced.stdout.contains("BASH_ENV="))
        #expect(!FileManager.default.fileExists(atPath: proof))
    }

    @Test("PATH and LD_PRELOAD from keys are refused; --allow-env lets one named variable through, and only that one")
    func pathAndPreload() async throws {
        let cli = try await Self.configured([("app/path", "/tmp/discfg-evil-bin"), ("app/Ld_Preload", "/tmp/discfg-evil.so")])
        defer { cli.cleanUp() }
        let show = ["--", "/bin/sh", "-c", #"printf '%s|%s|%s' "$PATH" "${LD_PRELOAD-unset}" "$DB_HOST""#]
        let refused = try await cli.run(["exec", "app", "--prefix", "/app"] + show)
        #expect(refused.status == 2 && refused.stdout.isEmpty, "\(refused.logs)")
        #expect(refused.stderr.contains("/app/Ld_Preload") && refused.stderr.contains("LD_PRELOAD"), "the first refused key in key order is named: \(refused.stderr)")

        let onlyPreload = try await cli.run(["exec", "app", "--prefix", "/app", "--allow-env", "LD_PRELOAD"] + show)
        #expect(onlyPreload.status == 2 && onlyPreload.stderr.contains("/app/path") && onlyPreload.stderr.contains("PATH"), "\(onlyPreload.logs)")

        let both = try await cli.run(["exec", "app", "--prefix", "/app", "--allow-env", "PATH", "--allow-env", "LD_PRELOAD"] + ["--", "/bin/sh", "-c", #"printf '%s|%s' "$PATH" "$DB_HOST""#])
        #expect(both.status == 0 && both.stdout == "/tmp/discfg-evil-bin|db1.internal", "allowed by name: \(both.logs)")

        let selected = try await cli.run(["exec", "app", "--prefix", "/app", "--only", "DB_HOST"] + show)
        #expect(selected.status == 0 && selected.stdout.hasSuffix("|unset|db1.internal") && !selected.stdout.hasPrefix("/tmp/discfg-evil-bin"), "keys --only leaves out are not refused: \(selected.logs)")
        let whole = try await cli.run(["exec", "app", "--", "/bin/sh", "-c", #"printf '%s' "$APP_PATH""#])
        #expect(whole.status == 0 && whole.stdout == "/tmp/discfg-evil-bin", "APP_PATH changes nothing: \(whole.logs)")

        let env = try await cli.run("export", "app", "--to", "env", "--allow-env", "APP_LD_PRELOAD")
        #expect(env.status == 0 && env.stdout.contains("APP_PATH=/tmp/discfg-evil-bin"), "without a prefix the names are harmless: \(env.logs)")
        #expect(try await cli.run("export", "app", "--to", "json", "--allow-env", "PATH").status == 2, "--allow-env is for env output")
    }

    @Test("export --to env refuses the names a shell would act on; --allow-env writes them", arguments: ["PATH", "LD_PRELOAD", "NODE_OPTIONS", "PYTHONSTARTUP", "GCONV_PATH"])
    func export(name: String) async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("create", "app").status == 0)
        #expect(try await cli.run("set", "app", name.lowercased(), "/tmp/x").status == 0)
        let output = cli.directory.appendingPathComponent("app.env").path
        let refused = try await cli.run("export", "app", "--to", "env", "-o", output)
        #expect(refused.status == 2 && refused.stderr.contains("/\(name.lowercased())") && refused.stderr.contains(name), "\(refused.logs)")
        #expect(!FileManager.default.fileExists(atPath: output), "nothing written")
        let allowed = try await cli.run("export", "app", "--to", "env", "--allow-env", name)
        #expect(allowed.status == 0 && allowed.stdout == "\(name)=/tmp/x\n", "\(allowed.logs)")
    }

    @Test("exec --watch: a change that adds a refused variable is not applied; the command keeps running, a warning names the key, later changes apply", .timeLimit(.minutes(2)))
    func watch() async throws {
        let cli = try await Self.configured([])
        defer { cli.cleanUp() }
        let process = try cli.launch(["exec", "app", "--prefix", "/app", "--watch", "--", "sh", "-c", #"echo "host=$DB_HOST preload=${LD_PRELOAD-unset}"; exec sleep 600"#])
        _ = try await process.waitForOutput(timeout: .seconds(60)) { (output) -> Bool? in output.stdout.contains("host=db1.internal") ? true : nil }
        #expect(try await cli.run("set", "app", "app/ld_preload", "/tmp/discfg-evil.so").status == 0)
        _ = try await process.waitForOutput(timeout: .seconds(60)) { (output) -> Bool? in output.stderr.contains("LD_PRELOAD") ? true : nil }
        #expect(process.output.stderr.contains("/app/ld_preload") && process.output.stderr.contains("keeps running"), "\(process.output.stderr)")
        #expect(try await cli.run("set", "app", "app/db/host", "db2.internal").status == 0)
        #expect(try await cli.run("delete", "app", "app/ld_preload").status == 0)
        _ = try await process.waitForOutput(timeout: .seconds(60)) { (output) -> Bool? in output.stdout.contains("host=db2.internal") ? true : nil }
        #expect(process.isRunning)
        #expect(process.output.stdoutLines == ["host=db1.internal preload=unset", "host=db2.internal preload=unset"], "never started with LD_PRELOAD: \(process.output.logs)")
        process.signal(SIGTERM)
        _ = try await process.wait(timeout: .seconds(30))
    }

    @Test("--help names the rule and --allow-env")
    func help() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        for command in ["exec", "export"] {
            let help = try await cli.run(command, "--help")
            #expect(help.stdout.contains("--allow-env") && help.stdout.contains("LD_*") && help.stdout.contains("BASH_ENV"), "\(command): \(help.stdout)")
        }
    }
}
