import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `discfg exec`: a command run with a config's keys in its environment.
@Suite("CLI: exec")
struct ExecTests {
    /// A runner with config `app`: /app/db/host, a secret /app/db/password, and /other.
    static func configured() async throws -> CLIRunner {
        let cli = try CLIRunner()
        let keyFile = try #require(try await cli.run("key", "init", "-f", "json").envelope().encryptionKey)
        #expect(try await cli.run("create", "app", "--encryption", keyFile).status == 0)
        #expect(try await cli.run("set", "app", "app/db/host", "db1.internal").status == 0)
        #expect(try await cli.run("set", "app", "app/db/password", "s3cr3t-value-91", "--secret").status == 0)
        #expect(try await cli.run("set", "app", "other", "x").status == 0)
        return cli
    }

    @Test("variables named from the path below --prefix, secrets opened, nothing secret on the command line; the exit status is the command's")
    func variablesAndStatus() async throws {
        let cli = try await Self.configured()
        defer { cli.cleanUp() }
        let shown = try await cli.run("exec", "app", "--prefix", "/app", "--", "sh", "-c", #"printf '%s|%s|%s|' "$DB_HOST" "$DB_PASSWORD" "${OTHER-unset}"; tr '\0' ' ' < /proc/$$/cmdline"#)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.hasPrefix("db1.internal|s3cr3t-value-91|unset|"), "\(shown.stdout)")
        #expect(!shown.stdout.dropFirst("db1.internal|s3cr3t-value-91|unset|".count).contains("s3cr3t"), "the secret is not on the command line")
        #expect(!shown.stderr.contains("s3cr3t"))

        // The command gets the descriptors discfg was given (here 0, 1 and 2), none of its own.
        let descriptors = try await cli.run("exec", "app", "--", "sh", "-c", "ls /proc/$$/fd")
        #expect(descriptors.stdout.split(separator: "\n") == ["0", "1", "2"], "\(descriptors.stdout)")
        #expect(try await cli.run("exec", "app", "--", "sh", "-c", "exit 7").status == 7)
        #expect(try await cli.run("exec", "app", "--", "sh", "-c", "kill -TERM $$").status == 128 + SIGTERM)
        let whole = try await cli.run("exec", "app", "--", "sh", "-c", #"printf '%s %s' "$APP_DB_HOST" "$OTHER""#)
        #expect(whole.stdout == "db1.internal x", "without --prefix, names come from the whole path")

        let only = try await cli.run("exec", "app", "--prefix", "/app", "--only", "DB_HOST", "--", "sh", "-c", #"printf '%s|%s' "$DB_HOST" "${DB_PASSWORD-unset}""#)
        #expect(only.stdout == "db1.internal|unset", "\(only.stderr)")
        let missing = try await cli.run("exec", "app", "--only", "NOPE", "--", "true")
        #expect(missing.status == 3 && missing.stderr.contains("NOPE"), "\(missing.stderr)")
        let noCommand = try await cli.run("exec", "app")
        #expect(noCommand.status == 2 && noCommand.stderr.contains("--"), "\(noCommand.stderr)")
        let notThere = try await cli.run("exec", "app", "--", "/nonexistent/program")
        #expect(notThere.status == 2 && notThere.stderr.contains("/nonexistent/program"), "\(notThere.stderr)")
    }

    @Test("two keys that make one name: a warning and the first is kept, or with --strict an error and no command run")
    func collisions() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("create", "app").status == 0)
        #expect(try await cli.run("set", "app", "db-host", "first").status == 0)
        #expect(try await cli.run("set", "app", "db_host", "second").status == 0)
        let loose = try await cli.run("exec", "app", "--", "sh", "-c", #"printf %s "$DB_HOST""#)
        #expect(loose.status == 0 && loose.stdout == "first", "\(loose.stdout)")
        #expect(loose.stderr.contains("/db-host") && loose.stderr.contains("/db_host"), "\(loose.stderr)")
        let strict = try await cli.run("exec", "app", "--strict", "--", "sh", "-c", "echo ran")
        #expect(strict.status == 2 && !strict.stdout.contains("ran"), "\(strict.stderr)")
        #expect(strict.stderr.contains("DB_HOST"))
    }

    @Test("without --watch a signal reaches the command itself; with --watch it is forwarded", .timeLimit(.minutes(2)))
    func signals() async throws {
        let cli = try await Self.configured()
        defer { cli.cleanUp() }
        let script = #"trap 'echo got-term; exit 42' TERM; echo ready; while :; do sleep 0.1; done"#
        for watch in [false, true] {
            let process = try cli.launch(["exec", "app"] + (watch ? ["--watch"] : []) + ["--", "sh", "-c", script])
            _ = try await process.waitForOutput(timeout: .seconds(60)) { (output) -> Bool? in output.stdout.contains("ready") ? true : nil }
            process.signal(SIGTERM)
            let ended = try await process.wait(timeout: .seconds(30))
            #expect(ended.status == 42, "watch \(watch): \(ended.logs)")
            #expect(ended.stdout.contains("got-term"))
        }
    }

    @Test("--watch restarts the command with the new values when a key under the prefix changes; --signal sends a signal instead", .timeLimit(.minutes(2)))
    func watch() async throws {
        let cli = try await Self.configured()
        defer { cli.cleanUp() }
        let restarted = try cli.launch(["exec", "app", "--prefix", "/app", "--watch", "--", "sh", "-c", #"echo "host=$DB_HOST"; exec sleep 600"#])
        _ = try await restarted.waitForOutput(timeout: .seconds(60)) { (output) -> Bool? in output.stdout.contains("host=db1.internal") ? true : nil }
        #expect(try await cli.run("set", "app", "other", "outside the prefix").status == 0)
        #expect(try await cli.run("set", "app", "app/db/host", "db2.internal").status == 0)
        _ = try await restarted.waitForOutput(timeout: .seconds(60)) { (output) -> Bool? in output.stdout.contains("host=db2.internal") ? true : nil }
        #expect(restarted.output.stdoutLines == ["host=db1.internal", "host=db2.internal"], "one restart, for the change under the prefix")
        restarted.signal(SIGTERM)
        #expect(try await restarted.wait(timeout: .seconds(30)).status == 128 + SIGTERM, "sleep ended by the forwarded SIGTERM")

        let reloaded = try cli.launch(["exec", "app", "--prefix", "/app", "--watch", "--signal", "HUP", "--", "sh", "-c",
                                       #"trap 'echo reload' HUP; echo "start $DB_HOST"; while :; do sleep 0.1; done"#])
        _ = try await reloaded.waitForOutput(timeout: .seconds(60)) { (output) -> Bool? in output.stdout.contains("start") ? true : nil }
        #expect(try await cli.run("set", "app", "app/db/host", "db3.internal").status == 0)
        _ = try await reloaded.waitForOutput(timeout: .seconds(60)) { (output) -> Bool? in output.stdout.contains("reload") ? true : nil }
        #expect(reloaded.output.stdoutLines == ["start db2.internal", "reload"], "signalled, not restarted")
        reloaded.signal(SIGTERM)
        #expect(try await reloaded.wait(timeout: .seconds(30)).status == 128 + SIGTERM)

        let badSignal = try await cli.run("exec", "app", "--watch", "--signal", "NOPE", "--", "true")
        #expect(badSignal.status == 2 && badSignal.stderr.contains("--signal"))
        let signalAlone = try await cli.run("exec", "app", "--signal", "HUP", "--", "true")
        #expect(signalAlone.status == 2 && signalAlone.stderr.contains("--watch"))
    }
}
