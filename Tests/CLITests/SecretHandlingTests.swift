import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// Where opened secrets and keys could leak on the machine that opens them: files
/// written, key files of others, command lines, core dumps.
@Suite("CLI: secret handling on the host")
struct SecretHandlingTests {
    /// A runner with config `app` sealed by a fresh key file, and a secret /db/password.
    static func configured() async throws -> (CLIRunner, keyPath: String) {
        let cli = try CLIRunner()
        let keyFile = try #require(try await cli.run("key", "init", "-f", "json").envelope().encryptionKey)
        #expect(try await cli.run("create", "app", "--encryption", keyFile).status == 0)
        #expect(try await cli.run(["set", "app", "db/password", "--secret", "-d", "-"], stdin: Data("hunter2-secret".utf8)).status == 0)
        return (cli, String(keyFile.dropFirst("file://".count)))
    }

    static func mode(_ path: String) throws -> Int {
        try #require((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue)
    }

    @Test("export --reveal -o writes a 0600 file, also over an existing 0644 one; a sealed export keeps the usual mode")
    func revealedFileMode() async throws {
        let (cli, _) = try await Self.configured()
        defer { cli.cleanUp() }
        for format in ["env", "json", "yaml"] {
            let path = cli.directory.appendingPathComponent("open.\(format)").path
            _ = FileManager.default.createFile(atPath: path, contents: Data("old".utf8), attributes: [.posixPermissions: 0o644])
            let written = try await cli.run("export", "app", "--reveal", "--to", format, "-o", path)
            #expect(written.status == 0, "\(written.logs)")
            #expect(try String(contentsOfFile: path, encoding: .utf8).contains("hunter2-secret"))
            let mode = try Self.mode(path)
            #expect(mode == 0o600, "\(format): mode \(String(mode, radix: 8))")
        }
        let sealed = cli.directory.appendingPathComponent("sealed.json").path
        #expect(try await cli.run("export", "app", "-o", sealed).status == 0)
        #expect(try Self.mode(sealed) & 0o044 == 0o044, "plain exports are created as before (0666 less the umask)")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: cli.directory.path).filter { $0.hasSuffix(".partial") }
        #expect(leftovers.isEmpty)
    }

    @Test("a key file owned by another user is refused, naming the file, its owner and what to do; root's and the caller's are accepted")
    func keyFileOwner() async throws {
        let (cli, keyPath) = try await Self.configured()
        defer { cli.cleanUp() }
        #expect(try await cli.run("get", "app", "db/password").stdout == "hunter2-secret\n")
        try #require(chown(keyPath, 65534, 65534) == 0, "the tests run as root, which may give a file away")
        defer { chown(keyPath, geteuid(), getegid()) }
        for command in [["get", "app", "db/password"], ["exec", "app", "--", "true"], ["export", "app", "--reveal"], ["set", "app", "x", "-d", keyPath, "--secret"]] {
            let refused = try await cli.run(command)
            #expect(refused.status == 2, "\(command): \(refused.logs)")
            #expect(refused.stderr.contains(keyPath) && refused.stderr.contains("65534") && refused.stderr.contains("chown"), "\(command): \(refused.stderr)")
            #expect(!refused.stdout.contains("hunter2-secret"))
        }
        try #require(chown(keyPath, 0, 0) == 0)
        #expect(try await cli.run("get", "app", "db/password").stdout == "hunter2-secret\n", "root's own key file")
        chmod(keyPath, 0o640)
        let loose = try await cli.run("get", "app", "db/password")
        #expect(loose.status == 2 && loose.stderr.contains("chmod 600"), "\(loose.stderr)")
    }

    @Test("a secret value or --token on the command line: one warning naming the safer ways; from a file or standard input, none")
    func commandLineSecrets() async throws {
        let (cli, _) = try await Self.configured()
        defer { cli.cleanUp() }
        let argument = try await cli.run("set", "app", "api/key", "on-the-line", "--secret")
        #expect(argument.status == 0)
        #expect(argument.stderr.components(separatedBy: "/proc/PID/cmdline").count == 2, "once: \(argument.stderr)")
        #expect(argument.stderr.contains("-d FILE") && argument.stderr.contains("standard input"), "\(argument.stderr)")
        #expect(!argument.stderr.contains("on-the-line"))
        let file = try cli.write("value.txt", Data("from-a-file".utf8))
        #expect(try await cli.run("set", "app", "api/key", "-d", file, "--secret").stderr.isEmpty)
        #expect(try await cli.run(["set", "app", "api/key", "--secret"], stdin: Data("piped".utf8)).stderr.isEmpty)
        #expect(try await cli.run("set", "app", "plain", "not-secret").stderr.isEmpty, "plain values are not secrets")

        let token = try await cli.run("ls", "app", "--token", "t0ken-on-the-line")
        #expect(token.stderr.contains("--token") && token.stderr.contains("DISCFG_TOKEN") && !token.stderr.contains("t0ken-on-the-line"), "\(token.stderr)")
        let help = try await cli.run("set", "--help")
        #expect(help.stdout.contains("DISCFG_TOKEN") && help.stdout.contains("/proc/PID/cmdline"), "\(help.stdout)")
    }

    @Test("--webhook-secret on the command line: one warning naming --webhook-secret-file; from the file, none")
    func webhookSecretArgument() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let argument = try await cli.run("create", "hooked", "--notify", "https://hooks.example.com/x", "--webhook-secret", "s3cret-on-the-line")
        #expect(argument.status == 0, "\(argument.stderr)")
        #expect(argument.stderr.components(separatedBy: "/proc/PID/cmdline").count == 2, "once: \(argument.stderr)")
        #expect(argument.stderr.contains("--webhook-secret-file") && !argument.stderr.contains("s3cret-on-the-line"), "\(argument.stderr)")
        let file = try cli.write("hook-secret.txt", Data("from-a-file\n".utf8))
        let fromFile = try await cli.run("create", "filed", "--notify", "https://hooks.example.com/x", "--webhook-secret-file", file)
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        #expect(!fromFile.stderr.contains("/proc/PID/cmdline"), "\(fromFile.stderr)")
    }

    @Test("processes that hold opened secrets are not dumpable and have a core limit of 0; the commands they start get the limit back", .timeLimit(.minutes(2)))
    func coreDumps() async throws {
        let (cli, _) = try await Self.configured()
        defer { cli.cleanUp() }
        #expect(try await cli.run("set", "app", "app/host", "db1").status == 0)
        // Run as nobody, so that /proc/PID shows whether the process is dumpable: the
        // kernel gives a non-dumpable process's files to root. The core limit starts at
        // 1 MiB, so that a limit of 0 is discfg's doing.
        let given = try await ChildProcess.run("chown", ["-R", "65534:65534", cli.directory.path], environment: ChildProcess.environment())
        try #require(given.status == 0, "\(given.stderr)")
        func launch(_ arguments: [String]) throws -> ChildProcess {
            let asNobody = """
                import os, resource, sys
                resource.setrlimit(resource.RLIMIT_CORE, (1048576, resource.RLIM_INFINITY))
                os.setgroups([]); os.setgid(65534); os.setuid(65534)
                os.execv(sys.argv[1], sys.argv[1:])
                """
            return try ChildProcess.launch(
                "/usr/bin/env", ["python3", "-c", asNobody, CLIRunner.executable.path] + arguments, environment: cli.environment, directory: cli.directory.path
            )
        }
        func coreLimit(_ pid: pid_t) throws -> String {
            let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
            let line = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") })
            return line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).first.map(String.init) ?? ""
        }
        func owner(_ pid: pid_t) throws -> Int {
            try #require((try FileManager.default.attributesOfItem(atPath: "/proc/\(pid)/status")[.ownerAccountID] as? NSNumber)?.intValue)
        }

        let plain = try launch(["watch", "app"])
        _ = try await plain.waitForOutput(timeout: .seconds(60)) { (output) -> Bool? in output.stderr.contains("watching") ? true : nil }
        let (plainLimit, plainOwner) = (try coreLimit(plain.pid), try owner(plain.pid))
        #expect(plainLimit == "1048576" && plainOwner == 65534, "the control: a watch that opens nothing is left as it was")
        await plain.stop()

        let revealing = try launch(["watch", "app", "--reveal"])
        _ = try await revealing.waitForOutput(timeout: .seconds(60)) { (output) -> Bool? in output.stderr.contains("watching") ? true : nil }
        #expect(try coreLimit(revealing.pid) == "0", "watch --reveal")
        #expect(try owner(revealing.pid) == 0, "watch --reveal is not dumpable")
        await revealing.stop()

        let supervisor = try launch(["exec", "app", "--prefix", "/app", "--watch", "--", "sh", "-c", #"echo "child $$"; exec sleep 600"#])
        let child = try await supervisor.waitForOutput(timeout: .seconds(60)) { (output) -> pid_t? in
            output.stdoutLines.first { $0.hasPrefix("child ") }.flatMap { pid_t($0.dropFirst(6)) }
        }
        let (supervisorLimit, supervisorOwner) = (try coreLimit(supervisor.pid), try owner(supervisor.pid))
        #expect(supervisorLimit == "0" && supervisorOwner == 0, "exec --watch holds the opened secrets")
        // The limit is given back right after the spawn, which the command's first line may beat.
        let childLimit = try await eventually("the command's core limit is given back", interval: .milliseconds(100)) {
            let limit = try coreLimit(child)
            return limit == "1048576" ? limit : nil
        }
        let childOwner = try owner(child)
        #expect(childLimit == "1048576" && childOwner == 65534, "the command gets the limit discfg was started with, and is dumpable")
        await supervisor.stop()

        let replaced = try launch(["exec", "app", "--", "sh", "-c", #"grep 'core file' /proc/$$/limits; stat -c %u /proc/$$/status"#])
        let shown = try await replaced.wait(timeout: .seconds(60))
        #expect(shown.stdout.contains("1048576") && shown.stdout.hasSuffix("65534\n"), "plain exec: the command as it would have been: \(shown.logs)")
    }
}
