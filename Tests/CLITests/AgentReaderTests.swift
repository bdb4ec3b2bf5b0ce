import AsyncHTTPClient
import DiscfgCore
import DiscfgTestSupport
import Foundation
import NIOCore
import Testing

/// Who can read from `discfg agent`, and what it serves at start: readers holding a token
/// of `--reader-token-file`, or those the file permissions of `--listen unix:PATH` let in;
/// and a copy in the cache that the agent did not sign is never served.
@Suite("CLI: agent readers and cache")
struct AgentReaderTests {
    /// A runner whose store holds `demo` with `/db/password` = `hunter2`.
    static func runner() async throws -> CLIRunner {
        let cli = try CLIRunner()
        #expect(try await cli.run("create", "demo").status == 0)
        #expect(try await cli.run("set", "demo", "/db/password", "hunter2").status == 0)
        return cli
    }

    /// Writes `text` to `name` in the runner's directory with `mode`; its path.
    static func file(_ cli: CLIRunner, _ name: String, _ text: String, mode: mode_t) throws -> String {
        let path = try cli.write(name, Data(text.utf8))
        chmod(path, mode)
        return path
    }

    static let token = "dcfg_0123456789ab_" + String(repeating: "s3cr3t", count: 7)

    @Test("--reader-token-file: no token or a wrong one gets 401, a listed one reads; a file others can read is refused; no credential on TCP warns", .timeLimit(.minutes(2)))
    func readerTokens() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        let tokens = try Self.file(cli, "readers", "# readers of demo\n\(Self.token)\n", mode: 0o600)
        let (agent, port) = try await cli.agent(["--reader-token-file", tokens])
        defer { Task { await agent.kill() } }

        var reader = cli
        reader.environment["DISCFG_STORE"] = "http://127.0.0.1:\(port)"
        let anonymous = try await reader.run("get", "demo", "/db/password")
        #expect(anonymous.status != 0 && !anonymous.stdout.contains("hunter2"))
        #expect(anonymous.stderr.contains("bearer token"), "\(anonymous.stderr)")
        reader.environment["DISCFG_TOKEN"] = "dcfg_0123456789ab_" + String(repeating: "x", count: 42)
        let wrong = try await reader.run("get", "demo", "/db/password")
        #expect(wrong.status != 0 && !wrong.stdout.contains("hunter2"), "\(wrong.stderr)")
        let status = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/demo/keys/db/password"), timeout: .seconds(30)).status
        #expect(status == .unauthorized)
        reader.environment["DISCFG_TOKEN"] = Self.token
        let allowed = try await reader.run("get", "demo", "/db/password")
        #expect(allowed.stdout == "hunter2\n", "\(allowed.stderr)")
        await agent.stop()

        for (mode, phrase) in [(mode_t(0o644), "open to other users (mode 644)"), (mode_t(0o600), "is not a token")] {
            let bad = try Self.file(cli, "bad-\(mode)", mode == 0o600 ? "password\n" : "\(Self.token)\n", mode: mode)
            let refused = try await cli.run("agent", "--config", "demo", "--port", "0", "--reader-token-file", bad)
            #expect(refused.status == 2 && refused.stderr.contains(phrase), "\(refused.stderr)")
        }

        // Open on TCP, as before, but it says so at start.
        let open = try cli.launch(["agent", "--config", "demo", "--port", "0"], stdout: .discard)
        defer { Task { await open.kill() } }
        let warned = try await open.waitForOutput(timeout: .seconds(60)) { output in
            output.stderr.contains("any user of this machine can read") ? true : nil
        }
        #expect(warned)
    }

    @Test("--listen unix:PATH: a stale socket file is replaced, the socket is 0600 (0660 and the group's with --socket-group) and serves; anything else at the path is refused", .timeLimit(.minutes(2)))
    func unixSocket() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        let path = cli.directory.appendingPathComponent("agent.sock").path

        // What a killed agent leaves: a socket file nothing listens on.
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in for (index, byte) in path.utf8.enumerated() { buffer[index] = byte } }
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        close(stale)
        #expect(bound == 0 && FileManager.default.fileExists(atPath: path))

        let group = geteuid() == 0 ? ["--socket-group", "daemon"] : []
        let agent = try cli.launch(["agent", "--config", "demo", "--listen", "unix:\(path)", "--log-level", "error"] + group, stdout: .discard)
        defer { Task { await agent.kill() } }
        _ = try await agent.waitForOutput(timeout: .seconds(60)) { output in output.stderr.contains("on unix:\(path)") ? true : nil }
        var status = stat()
        #expect(lstat(path, &status) == 0)
        #expect(status.st_mode & S_IFMT == S_IFSOCK)
        if geteuid() == 0 {
            #expect(status.st_mode & 0o777 == 0o660)
            #expect(status.st_gid == getgrnam("daemon")?.pointee.gr_gid)
        } else {
            #expect(status.st_mode & 0o777 == 0o600)
        }

        let encoded = path.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? path
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http+unix://\(encoded)/v1/demo/keys/db/password?raw"), timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 16)
        #expect(response.status == .ok)
        #expect(String(buffer: body) == "hunter2")

        // A second agent on the same path is refused while the first serves.
        let second = try await cli.run("agent", "--config", "demo", "--listen", "unix:\(path)")
        #expect(second.status == 2 && second.stderr.contains("another process is serving"), "\(second.stderr)")
        await agent.stop()
        #expect(!FileManager.default.fileExists(atPath: path), "the socket file is removed at exit")

        let file = try Self.file(cli, "not-a-socket", "data", mode: 0o600)
        let refused = try await cli.run("agent", "--config", "demo", "--listen", "unix:\(file)")
        #expect(refused.status == 2 && refused.stderr.contains("not a socket"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "data")
        let both = try await cli.run("agent", "--config", "demo", "--listen", "unix:\(path)", "--port", "0")
        #expect(both.status == 2, "\(both.stderr)")
    }

    @Test("a forged copy in the cache (sha256 intact, not signed by the agent) is not served when the store is down; the agent's own copy is", .timeLimit(.minutes(2)))
    func forgedCacheAtStart() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        let cache = cli.directory.appendingPathComponent("cache").path
        let (agent, _) = try await cli.agent(["--cache-dir", cache])
        await agent.stop()
        let copy = cache + "/demo.json"
        let genuine = try Data(contentsOf: URL(fileURLWithPath: copy))

        // Someone who could write the file: the same document with their value, its sha256 recomputed.
        var snapshot = try PublishedSnapshot(decoding: genuine)
        snapshot.items[0].value = Data("attacker".utf8)
        try snapshot.encoded().write(to: URL(fileURLWithPath: copy))

        var offline = cli
        offline.environment["DISCFG_STORE"] = "http://localhost:9"
        let refused = try await offline.run("agent", "--config", "demo", "--port", "0", "--cache-dir", cache)
        #expect(refused.status != 0, "the forgery is not served: \(refused.stderr)")
        #expect(refused.stderr.contains("not signed") && refused.stderr.contains("could not load"), "\(refused.stderr)")

        try genuine.write(to: URL(fileURLWithPath: copy))
        let (again, port) = try await offline.agent(["--cache-dir", cache])
        var reader = cli
        reader.environment["DISCFG_STORE"] = "http://127.0.0.1:\(port)"
        #expect(try await reader.run("get", "demo", "/db/password").stdout == "hunter2\n")
        await again.stop()

        // A cache directory other users can write is refused before anything is read.
        chmod(cache, 0o777)
        let open = try await offline.run("agent", "--config", "demo", "--port", "0", "--cache-dir", cache)
        #expect(open.status == 2 && open.stderr.contains("can be written by other users"), "\(open.stderr)")
    }
}
