import DiscfgTestSupport
import Foundation
import Testing

/// A server that is not there and a port that is taken each get one plain sentence and a
/// non-zero exit, at once: no library's words (`connection reset (error set)`,
/// `bind(descriptor:ptr:bytes:)`, `errno`), no retrying a refused connection for 10 s.
/// How fast is measured by hand (docs/cli.md); the 5 s bounds here only guard against a
/// hang, as refusals used to take 10 s.
@Suite("CLI: refused connections and taken ports")
struct ConnectFailureTests {
    static let libraryWords = ["errno", "error set", "bind(", "NIOConnectionError", "IOError", "Fatal error"]

    @Test("a server address where nothing listens: one sentence naming it, exit 1", arguments: [
        ["get", "demo", "/db/host"], ["set", "demo", "/db/host", "db1"], ["configs"], ["ls", "demo"], ["watch", "demo", "/db/"],
    ])
    func refused(_ arguments: [String]) async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let url = "http://127.0.0.1:\(try MotoServer.freeLoopbackPort())"
        let result = try await ChildProcess.run(
            CLIRunner.executable.path, arguments + ["--store", url], environment: cli.environment, directory: cli.directory.path, timeout: .seconds(5)
        )
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr == "discfg: cannot connect to discfg at \(url): connection refused\n")
        #expect(result.stdout.isEmpty)
    }

    @Test("serve on a port another server holds: one sentence naming the address and --port, exit 1")
    func restPortInUse() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let (first, port) = try await cli.serve()
        defer { Task { await first.kill() } }
        let second = try await ChildProcess.run(
            CLIRunner.executable.path, ["serve", "--port", String(port)], environment: cli.environment, directory: cli.directory.path, timeout: .seconds(30)
        )
        #expect(second.status == 1, "\(second.stderr)")
        #expect(second.stderr == "discfg: cannot serve on 127.0.0.1:\(port): the port is in use by another process; stop it, or choose another port with --port\n")
        for words in Self.libraryWords { #expect(!second.stderr.contains(words), "\(second.stderr)") }
        #expect(first.isRunning, "the first server still serves")
    }

    @Test("serve --etcd on a port another server's etcd API holds: the sentence names that address and --etcd, exit 1")
    func etcdPortInUse() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let (first, etcdPort) = try await cli.serveEtcd()
        defer { Task { await first.kill() } }
        let second = try await ChildProcess.run(
            CLIRunner.executable.path, ["serve", "--port", "0", "--etcd", "127.0.0.1:\(etcdPort)"],
            environment: cli.environment, directory: cli.directory.path, timeout: .seconds(30)
        )
        #expect(second.status == 1, "\(second.stderr)")
        // Told before the REST API starts, so nothing claims to serve first.
        #expect(second.stderr == "discfg: cannot serve on 127.0.0.1:\(etcdPort): the port is in use by another process; stop it, or choose another port with --etcd\n")
        for words in Self.libraryWords { #expect(!second.stderr.contains(words), "\(second.stderr)") }
    }
}
