import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `discfg serve` with TLS as a separate process, with a CA made by `openssl` in the
/// test: what it refuses at start, the CLI, curl and etcdctl over TLS and mutual TLS,
/// and SIGHUP.
@Suite("CLI: serve over TLS and mutual TLS")
struct ServeTLSTests {
    @Test("serve refuses bad TLS input and unsafe addresses in one line and a non-zero exit, before it listens")
    func refusals() async throws {
        let pki = try await TestCertificates.make()
        let cli = try CLIRunner()
        defer {
            pki.remove()
            cli.cleanUp()
        }
        let pair = ["--tls-cert", pki.path("server.pem"), "--tls-key", pki.path("server.key")]
        let cases: [([String], String)] = [
            (["--tls-cert", pki.path("server.pem")], "--tls-cert needs its private key"),
            (["--tls-key", pki.path("server.key")], "--tls-key needs its certificate"),
            (["--tls-cert", pki.path("none.pem"), "--tls-key", pki.path("server.key")], "none.pem does not exist"),
            (["--tls-cert", pki.path("server.key"), "--tls-key", pki.path("server.key")], "holds no PEM certificate"),
            (["--tls-cert", pki.path("server.pem"), "--tls-key", pki.path("stray.key")], "does not match the certificate"),
            (["--tls-cert", pki.path("expired.pem"), "--tls-key", pki.path("expired.key")], "expired on"),
            (["--tls-client-ca", pki.path("ca.pem")], "--tls-client-ca needs TLS"),
            (pair + ["--tls-client-roles", "CN=x=read"], "give --tls-client-ca"),
            (pair + ["--tls-client-ca", pki.path("ca.pem"), "--tls-client-roles", "CN=x=write@demo:app"], "does not start with '/'"),
            (pair + ["--tls-client-ca", pki.path("ca.pem"), "--tls-client-roles", "CN=x=write@demo:etcd:"], "names no etcd prefix"),
            (["--host", "0.0.0.0"], "without TLS"),
            (["--host", "0.0.0.0"] + pair, "without authentication"),
            // No token required yet (--auth auto, none created): the etcd API off loopback would
            // answer anyone.
            (["--etcd", "0.0.0.0:0"] + pair, "refusing to serve the etcd API (--etcd) on 0.0.0.0 without authentication"),
            (["--etcd", "0.0.0.0:0", "--auth", "token"], "refusing to serve the etcd API (--etcd) on 0.0.0.0 without TLS"),
        ]
        for (arguments, words) in cases {
            let refused = try await cli.run(["serve", "--port", "0"] + arguments)
            #expect(refused.status == 2, "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.contains(words), "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1 && !refused.stderr.contains("serving"), "\(arguments): \(refused.stderr)")
        }
    }

    @Test("a --tls-key other users may read, or another user's, is refused at start in one line, and on SIGHUP keeps the old certificate", .timeLimit(.minutes(2)))
    func keyFileAccess() async throws {
        let pki = try await TestCertificates.make()
        let cli = try CLIRunner()
        defer {
            pki.remove()
            cli.cleanUp()
        }
        let cases: [(mode: Int, owner: uid_t?, words: String)] = [
            (0o640, nil, "is open to other users (mode 640)"),
            (0o604, nil, "is open to other users (mode 604)"),
            (0o600, 65534, "belongs to"),
        ]
        for (mode, owner, words) in cases {
            try Self.copy(pki, "server", to: "open")
            #expect(chmod(pki.path("open.key"), mode_t(mode)) == 0)
            if let owner { #expect(chown(pki.path("open.key"), owner, getegid()) == 0) }
            let refused = try await cli.run(["serve", "--port", "0", "--tls-cert", pki.path("open.pem"), "--tls-key", pki.path("open.key")])
            #expect(refused.status == 2, "\(mode), \(owner.map(String.init) ?? "ours"): \(refused.stderr)")
            #expect(refused.stderr.contains(words) && refused.stderr.contains(pki.path("open.key")), "\(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1 && !refused.stderr.contains("serving"), "\(refused.stderr)")
        }

        try Self.copy(pki, "server", to: "live")
        let server = try cli.launch(
            ["serve", "--port", "0", "--log-level", "notice", "--tls-cert", pki.path("live.pem"), "--tls-key", pki.path("live.key")], stdout: .discard
        )
        do {
            let port = try await server.announcedPort()
            try Self.copy(pki, "renewed", to: "live")
            #expect(chmod(pki.path("live.key"), 0o644) == 0)
            server.signal(SIGHUP)
            _ = try await server.waitForOutput(timeout: .seconds(30)) { $0.stderr.contains("kept the previous certificate") ? true : nil }
            #expect(server.output.stderr.contains("is open to other users (mode 644)"), "\(server.output.stderr)")
            #expect(try await Self.servedSerial(port, pki) == TestCertificates.serverSerial)
            #expect(chmod(pki.path("live.key"), 0o600) == 0)
            server.signal(SIGHUP)
            _ = try await server.waitForOutput(timeout: .seconds(30)) { $0.stderr.contains("serial \(TestCertificates.renewedSerial)") ? true : nil }
            #expect(try await Self.servedSerial(port, pki) == TestCertificates.renewedSerial)
        } catch {
            await server.kill()
            throw error
        }
        await server.stop()
    }

    @Test("--insecure off loopback says what it lets happen, and serves", .timeLimit(.minutes(2)))
    func insecure() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let server = try cli.launch(["serve", "--host", "0.0.0.0", "--port", "0", "--insecure", "--log-level", "error"], stdout: .discard)
        let port = try await server.announcedPort()
        await server.stop()
        #expect(port > 0)
        let warning = server.output.stderr
        #expect(warning.contains("WARNING (--insecure)") && warning.contains("without TLS") && warning.contains("without a token"), "\(warning)")
    }

    @Test("the CLI, exec, curl and etcdctl reach serve over TLS with the CA; without it they are refused", .timeLimit(.minutes(3)))
    func overTLS() async throws {
        let pki = try await TestCertificates.make()
        var cli = try CLIRunner()
        defer {
            pki.remove()
            cli.cleanUp()
        }
        let server = try cli.launch(
            ["serve", "--port", "0", "--log-level", "error", "--etcd", "127.0.0.1:0", "--tls-cert", pki.path("server.pem"), "--tls-key", pki.path("server.key")],
            stdout: .discard
        )
        do {
            let port = try await server.announcedPort()
            let etcdPort = try await server.announcedEtcdPort()
            let url = "https://127.0.0.1:\(port)"
            #expect(try await cli.run("create", "demo", "--store", url, "--cacert", pki.path("ca.pem")).status == 0)
            cli.environment["DISCFG_STORE"] = url
            let untrusted = try await cli.run("get", "demo", "db/host")
            #expect(untrusted.status != 0 && untrusted.stderr.contains("not signed by a CA this client trusts"), "\(untrusted.stderr)")
            cli.environment["DISCFG_CACERT"] = pki.path("ca.pem")
            #expect(try await cli.run("set", "demo", "db/host", "db1").status == 0)
            let got = try await cli.run("get", "demo", "db/host")
            #expect(got.stdout == "db1\n", "\(got.stderr)")
            let exec = try await cli.run("exec", "demo", "--", "/bin/sh", "-c", "echo $DB_HOST")
            #expect(exec.stdout == "db1\n", "\(exec.stderr)")

            let curl = try await Self.curl(["--cacert", pki.path("ca.pem"), "\(url)/v1/demo/keys/db/host?raw"])
            #expect(curl.stdout == "db1", "\(curl.stderr)")

            let put = try await Self.etcdctl(etcdPort, ["--cacert", pki.path("ca.pem"), "put", "/registry/a", "alpha"], home: cli.directory)
            #expect(put.status == 0 && put.stdout == "OK\n", "\(put.stderr)")
            let get = try await Self.etcdctl(etcdPort, ["--cacert", pki.path("ca.pem"), "get", "/registry/a", "--print-value-only"], home: cli.directory)
            #expect(get.stdout == "alpha\n", "\(get.stderr)")
            let members = try await Self.etcdctl(etcdPort, ["--cacert", pki.path("ca.pem"), "member", "list"], home: cli.directory)
            #expect(members.stdout.contains("https://127.0.0.1:\(etcdPort)"), "\(members.stdout) \(members.stderr)")
            let untrustedEtcd = try await Self.etcdctl(etcdPort, ["get", "/registry/a"], home: cli.directory)
            #expect(untrustedEtcd.status != 0, "etcdctl trusted a certificate of a CA it was not given")
        } catch {
            await server.kill()
            throw error
        }
        await server.stop()
    }

    @Test("SIGHUP reads the certificate again: new connections get it, a keep-alive connection goes on; a bad pair keeps the old one and says why", .timeLimit(.minutes(2)))
    func reloadOnHangup() async throws {
        let pki = try await TestCertificates.make()
        let cli = try CLIRunner()
        defer {
            pki.remove()
            cli.cleanUp()
        }
        try Self.copy(pki, "server", to: "live")
        #expect(try await cli.run("create", "demo").status == 0)
        let server = try cli.launch(
            ["serve", "--port", "0", "--log-level", "notice", "--tls-cert", pki.path("live.pem"), "--tls-key", pki.path("live.key")], stdout: .discard
        )
        do {
            let port = try await server.announcedPort()
            let go = cli.directory.appendingPathComponent("go").path
            let peer = try ChildProcess.launch(
                "python3", [PeerScript.path("tls_keepalive.py"), "\(port)", pki.path("ca.pem"), "/healthz", go], environment: ChildProcess.environment(inheriting: ChildProcess.pythonEnvironment)
            )
            _ = try await peer.waitForOutput(timeout: .seconds(30)) { $0.stdout.contains("first") ? true : nil }

            try FileManager.default.removeItem(atPath: pki.path("live.key"))
            try FileManager.default.copyItem(atPath: pki.path("stray.key"), toPath: pki.path("live.key"))
            server.signal(SIGHUP)
            _ = try await server.waitForOutput(timeout: .seconds(30)) { $0.stderr.contains("kept the previous certificate") ? true : nil }
            #expect(try await Self.servedSerial(port, pki) == TestCertificates.serverSerial)

            try Self.copy(pki, "renewed", to: "live")
            server.signal(SIGHUP)
            _ = try await server.waitForOutput(timeout: .seconds(30)) { $0.stderr.contains("serial \(TestCertificates.renewedSerial)") ? true : nil }
            try Data().write(to: URL(fileURLWithPath: go))
            let output = try await peer.wait(timeout: .seconds(60))
            #expect(output.stdoutLines == [
                "first 200 \(TestCertificates.serverSerial)", "again 200 \(TestCertificates.serverSerial)", "new \(TestCertificates.renewedSerial)",
            ], "\(output.logs)")
            let log = server.output.stderr
            #expect(log.contains("does not match the certificate"), "\(log)")
        } catch {
            await server.kill()
            throw error
        }
        await server.stop()
    }

    @Test("with --tls-client-ca: the CLI, curl and etcdctl need a certificate of that CA; its subject's role decides", .timeLimit(.minutes(3)))
    func mutualTLS() async throws {
        let pki = try await TestCertificates.make()
        var cli = try CLIRunner()
        defer {
            pki.remove()
            cli.cleanUp()
        }
        #expect(try await cli.run("create", "demo").status == 0)
        let server = try cli.launch(
            [
                "serve", "--port", "0", "--log-level", "error", "--auth", "token", "--etcd", "127.0.0.1:0",
                "--tls-cert", pki.path("server.pem"), "--tls-key", pki.path("server.key"), "--tls-client-ca", pki.path("ca.pem"),
                "--tls-client-roles", "CN=deployer=write@demo+etcd,CN=reader=read",
            ],
            stdout: .discard
        )
        do {
            let port = try await server.announcedPort()
            let etcdPort = try await server.announcedEtcdPort()
            let url = "https://127.0.0.1:\(port)"
            cli.environment["DISCFG_STORE"] = url
            cli.environment["DISCFG_CACERT"] = pki.path("ca.pem")
            func certificate(_ name: String) -> [String] { ["--cert", pki.path("\(name).pem"), "--key", pki.path("\(name).key")] }

            #expect(try await cli.run(["set", "demo", "app/flag", "on"] + certificate("deployer")).status == 0)
            let read = try await cli.run(["get", "demo", "app/flag"] + certificate("reader"))
            #expect(read.stdout == "on\n", "\(read.stderr)")
            let write = try await cli.run(["set", "demo", "app/flag", "off"] + certificate("reader"))
            #expect(write.status != 0 && write.stderr.contains("cert:CN=reader,O=discfg tests has role read"), "\(write.stderr)")
            for refused in [[], certificate("intruder")] {
                let result = try await cli.run(["get", "demo", "app/flag"] + refused)
                #expect(result.status != 0 && result.stderr.contains("requires a client certificate"), "\(refused): \(result.stderr)")
            }
            let halfPair = try await cli.run(["get", "demo", "app/flag", "--cert", pki.path("deployer.pem")])
            #expect(halfPair.status == 2 && halfPair.stderr.contains("--key"), "\(halfPair.stderr)")
            var withEnvironment = cli
            withEnvironment.environment["DISCFG_CERT"] = pki.path("deployer.pem")
            withEnvironment.environment["DISCFG_KEY"] = pki.path("deployer.key")
            #expect(try await withEnvironment.run("set", "demo", "app/other", "x").status == 0)

            let curl = try await Self.curl(["--cacert", pki.path("ca.pem")] + certificate("reader") + ["\(url)/v1/demo/keys/app/flag?raw"])
            #expect(curl.stdout == "on", "\(curl.stderr)")
            #expect(try await Self.curl(["--cacert", pki.path("ca.pem"), "\(url)/v1/demo/keys/app/flag?raw"]).status != 0)

            let ca = ["--cacert", pki.path("ca.pem")]
            let put = try await Self.etcdctl(etcdPort, ca + certificate("deployer") + ["put", "k", "v"], home: cli.directory)
            #expect(put.stdout == "OK\n", "\(put.stderr)")
            let get = try await Self.etcdctl(etcdPort, ca + certificate("deployer") + ["get", "k", "--print-value-only"], home: cli.directory)
            #expect(get.stdout == "v\n", "\(get.stderr)")
            for refused in [[], certificate("intruder")] {
                let result = try await Self.etcdctl(etcdPort, ca + refused + ["get", "k"], home: cli.directory)
                #expect(result.status != 0 && !result.stdout.contains("v"), "etcdctl \(refused): \(result.stdout)")
            }
            // A read certificate reads, and may not write (EtcdIdentityEndToEndTests.certificates).
            let readerGet = try await Self.etcdctl(etcdPort, ca + certificate("reader") + ["get", "k", "--print-value-only"], home: cli.directory)
            #expect(readerGet.stdout == "v\n", "\(readerGet.stderr)")
        } catch {
            await server.kill()
            throw error
        }
        await server.stop()
    }

    // MARK: Helpers

    static func etcdctl(_ port: Int, _ arguments: [String], home: URL) async throws -> ChildProcess.Output {
        try await ChildProcess.run(
            "etcdctl", ["--endpoints=https://127.0.0.1:\(port)", "--dial-timeout=5s", "--command-timeout=20s"] + arguments,
            environment: ChildProcess.environment(["ETCDCTL_API": "3", "HOME": home.path]), timeout: .seconds(60)
        )
    }

    static func curl(_ arguments: [String]) async throws -> ChildProcess.Output {
        try await ChildProcess.run("curl", ["-sS", "--max-time", "20"] + arguments, environment: ChildProcess.environment(), timeout: .seconds(60))
    }

    /// The serial of the certificate a new connection to `port` gets.
    static func servedSerial(_ port: Int, _ pki: TestCertificates) async throws -> String {
        let script = "openssl s_client -connect 127.0.0.1:\(port) -CAfile '\(pki.path("ca.pem"))' </dev/null 2>/dev/null | openssl x509 -noout -serial"
        let output = try await ChildProcess.run("/bin/sh", ["-c", script], environment: ChildProcess.environment(), timeout: .seconds(60))
        return output.stdout.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "serial=", with: "")
    }

    static func copy(_ pki: TestCertificates, _ name: String, to target: String) throws {
        for suffix in ["pem", "key"] {
            try? FileManager.default.removeItem(atPath: pki.path("\(target).\(suffix)"))
            try FileManager.default.copyItem(atPath: pki.path("\(name).\(suffix)"), toPath: pki.path("\(target).\(suffix)"))
        }
    }
}
