import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `discfg serve --audit-log FILE` as a separate process: what it refuses at start, the
/// lines a token's requests leave (never the token or the value), and SIGHUP for rotation.
@Suite("CLI: serve --audit-log")
struct ServeAuditLogTests {
    @Test("a file that cannot be opened for append is refused in one line naming it, with exit status 2, before anything listens")
    func refusals() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let cases: [(String, String)] = [
            (cli.directory.appendingPathComponent("missing/audit.log").path, "No such file or directory"),
            (cli.directory.path, "Is a directory"),
        ]
        for (path, words) in cases {
            let refused = try await cli.run(["serve", "--port", "0", "--audit-log", path])
            #expect(refused.status == 2, "\(path): \(refused.stderr)")
            #expect(refused.stderr.contains("--audit-log") && refused.stderr.contains(path) && refused.stderr.contains(words), "\(path): \(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1 && !refused.stderr.contains("serving"), "\(path): \(refused.stderr)")
        }
    }

    @Test("a token's set and get leave a line each in the file with its principal, a refusal too; no token, value or message is written; SIGHUP starts a new file", .timeLimit(.minutes(2)))
    func linesAndRotation() async throws {
        var cli = try CLIRunner()
        defer { cli.cleanUp() }
        let file = cli.directory.appendingPathComponent("audit.log")
        let created = try await cli.run("token", "create", "--role", "admin", "--description", "deployer")
        let token = String(created.stdout.split(separator: "\n").first ?? "")
        let id = String(token.dropFirst(5).prefix(12))
        #expect(created.status == 0 && token.hasPrefix("dcfg_"), "\(created.stderr)")
        let server = try cli.launch(["serve", "--port", "0", "--audit-log", file.path, "--etcd", "127.0.0.1:0"], stdout: .discard)
        do {
            let port = try await server.announcedPort()
            let etcdPort = try await server.announcedEtcdPort()
            cli.environment["DISCFG_STORE"] = "http://127.0.0.1:\(port)"
            cli.environment["DISCFG_TOKEN"] = token
            let value = "value-\(UUID().uuidString)"
            let message = "why-\(UUID().uuidString)"
            #expect(try await cli.run("create", "demo").status == 0)
            #expect(try await cli.run("set", "demo", "db/password", value, "-m", message).status == 0)
            #expect(try await cli.run("get", "demo", "db/password").stdout == "\(value)\n")
            cli.environment["DISCFG_TOKEN"] = "dcfg_\(id)_wrongwrongwrong"
            #expect(try await cli.run("get", "demo", "db/password").status != 0)

            // etcd: a put as the token, and a get with no credentials, refused before it runs.
            let etcdValue = "etcd-value-\(UUID().uuidString)"
            let put = try await Self.etcdctl(etcdPort, ["--user", id, "--password", token, "put", "app/flag", etcdValue], home: cli.directory)
            #expect(put.termination == .exited(0), "\(put.stderr)")
            let anonymous = try await Self.etcdctl(etcdPort, ["get", "app/flag"], home: cli.directory)
            #expect(anonymous.termination != .exited(0))

            let lines = try await Self.lines(file, atLeast: 7)
            let etcdPut = lines.first { $0["route"] as? String == "/etcdserverpb.KV/Put" }
            #expect(etcdPut?["api"] as? String == "etcd" && etcdPut?["principal"] as? String == "token:\(id)", "\(lines)")
            #expect(etcdPut?["key"] as? String == "app/flag" && etcdPut?["config"] as? String == "etcd" && etcdPut?["grpcStatus"] as? String == "OK")
            #expect((etcdPut?["revision"] as? Int ?? 0) > 0)
            let etcdRefused = lines.first { $0["route"] as? String == "/etcdserverpb.KV/Range" }
            #expect(etcdRefused?["principal"] is NSNull && (etcdRefused?["grpcStatus"] as? String).map { $0 != "OK" } == true, "\(lines)")
            let set = lines.first { $0["method"] as? String == "PUT" && $0["key"] as? String == "/db/password" }
            #expect(set?["principal"] as? String == "token:\(id)" && set?["config"] as? String == "demo")
            #expect((set?["revision"] as? Int ?? 0) > 0)
            let get = lines.first { $0["method"] as? String == "GET" && $0["status"] as? Int == 200 && $0["key"] as? String == "/db/password" }
            #expect(get?["principal"] as? String == "token:\(id)")
            let refused = lines.first { $0["status"] as? Int == 401 }
            #expect(refused?["principal"] is NSNull && refused?["error"] as? String == "unauthenticated")
            let text = try String(contentsOf: file, encoding: .utf8)
            for secret in [token, value, message, "wrongwrongwrong", etcdValue] { #expect(!text.contains(secret), "the audit log holds \(secret)") }
            #expect(!server.output.stderr.contains(#""principal""#), "audit lines went to standard error")

            // Rotation: the file moved away, SIGHUP, and the next lines start a new one.
            let rotated = cli.directory.appendingPathComponent("audit.log.1")
            try FileManager.default.moveItem(at: file, to: rotated)
            server.signal(SIGHUP)
            cli.environment["DISCFG_TOKEN"] = token
            try await eventually("a new file after SIGHUP", timeout: .seconds(5), interval: .milliseconds(100)) {
                let read = try await cli.run("get", "demo", "db/password")
                #expect(read.status == 0, "\(read.stderr)")
                return FileManager.default.fileExists(atPath: file.path)
            }
            #expect(server.isRunning)
            #expect(try await Self.lines(file, atLeast: 1).allSatisfy { $0["principal"] as? String == "token:\(id)" })
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    static func etcdctl(_ port: Int, _ arguments: [String], home: URL) async throws -> ChildProcess.Output {
        try await ChildProcess.run(
            "etcdctl", ["--endpoints=127.0.0.1:\(port)", "--dial-timeout=5s", "--command-timeout=20s"] + arguments,
            environment: ChildProcess.environment(["ETCDCTL_API": "3", "HOME": home.path]), timeout: .seconds(60)
        )
    }

    /// The lines of `file`, parsed, once there are `count` (they are written within a few
    /// hundred milliseconds of their requests).
    static func lines(_ file: URL, atLeast count: Int) async throws -> [[String: Any]] {
        try await eventually("\(count) lines in \(file.lastPathComponent)", timeout: .seconds(5), interval: .milliseconds(100)) {
            let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
            let lines = try text.split(separator: "\n").map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
            }
            return lines.count >= count ? lines : nil
        }
    }
}
