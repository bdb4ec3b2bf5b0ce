import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// Who an etcd call runs as, end to end against `discfg serve --etcd`: a client
/// certificate's role and subject (mutual TLS, `--tls-client-roles`), and one token's
/// sessions that never end another's.
@Suite("etcd API: client certificates as callers, sessions per token")
struct EtcdIdentityEndToEndTests {
    @Test("with --tls-client-roles, etcdctl with a write@etcd certificate puts, recorded as the certificate's subject, and is refused compaction; a read certificate reads and may not put", .timeLimit(.minutes(3)))
    func certificates() async throws {
        let pki = try await TestCertificates.make()
        var cli = try CLIRunner()
        defer {
            pki.remove()
            cli.cleanUp()
        }
        let server = try cli.launch(
            [
                "serve", "--port", "0", "--log-level", "error", "--auth", "token", "--etcd", "127.0.0.1:0",
                "--tls-cert", pki.path("server.pem"), "--tls-key", pki.path("server.key"), "--tls-client-ca", pki.path("ca.pem"),
                "--tls-client-roles", "CN=deployer=write@etcd,CN=reader=read@etcd",
            ],
            stdout: .discard
        )
        do {
            let port = try await server.announcedPort()
            let etcdPort = try await server.announcedEtcdPort()
            func etcdctl(_ name: String, _ arguments: [String]) async throws -> ChildProcess.Output {
                try await ServeTLSTests.etcdctl(
                    etcdPort, ["--cacert", pki.path("ca.pem"), "--cert", pki.path("\(name).pem"), "--key", pki.path("\(name).key")] + arguments, home: cli.directory
                )
            }
            let put = try await etcdctl("deployer", ["put", "/registry/a", "alpha"])
            #expect(put.stdout == "OK\n", "\(put.stderr.suffix(600))")
            let compaction = try await etcdctl("deployer", ["compaction", "1"])
            #expect(compaction.status != 0 && compaction.stderr.contains("etcdserver: permission denied"), "\(compaction.stdout) \(compaction.stderr.suffix(600))")
            let read = try await etcdctl("reader", ["get", "/registry/a", "--print-value-only"])
            #expect(read.stdout == "alpha\n", "\(read.stderr.suffix(600))")
            let readerPut = try await etcdctl("reader", ["put", "/registry/a", "beta"])
            #expect(readerPut.status != 0 && readerPut.stderr.contains("etcdserver: permission denied"), "\(readerPut.stderr.suffix(600))")

            // The change is the certificate's in the config's history, not the anonymous
            // etcd client's.
            cli.environment["DISCFG_STORE"] = "https://127.0.0.1:\(port)"
            cli.environment["DISCFG_CACERT"] = pki.path("ca.pem")
            let log = try await cli.run(["log", "etcd", "-f", "json", "--cert", pki.path("deployer.pem"), "--key", pki.path("deployer.key")])
            #expect(log.status == 0, "\(log.stderr)")
            // The config's revision 1 is serve's own (EtcdBackend.revisionOneKey), where etcd starts.
            let changes = (try log.envelope().events ?? []).filter { $0.key != "/discfg/etcd-base" }
            #expect(changes.map(\.key) == ["/.2Fregistry.2Fa"], "\(log.stdout)")
            #expect(changes.allSatisfy { $0.by?.kind == .certificate && $0.by?.id.hasPrefix("CN=deployer") == true }, "\(log.stdout)")
        } catch {
            await server.kill()
            throw error
        }
        await server.stop()
    }

    @Test("a token authenticating 64 + 10 times through the gateway ends only its own oldest session; another token's earlier session still reads", .timeLimit(.minutes(3)))
    func sessionsPerToken() async throws {
        let etcd = try await EtcdPeer.start(.sqlite)
        do {
            let noisy = try await EtcdAuthTests.token(etcd, "--role", "read")
            let quiet = try await EtcdAuthTests.token(etcd, "--role", "read")
            try await EtcdAuthTests.waitUntilRequired(etcd)
            let range = #"{"key":"YQ=="}"#
            let other = try await EtcdAuthTests.gatewaySession(etcd, quiet)
            let first = try await EtcdAuthTests.gatewaySession(etcd, noisy)
            var last = first
            for _ in 0..<(64 + 10) { last = try await EtcdAuthTests.gatewaySession(etcd, noisy) }
            let otherRange = try await EtcdAuthTests.gateway(etcd, "/v3/kv/range", range, session: other)
            #expect(otherRange.status == 200, "\(otherRange.body)")
            let lastRange = try await EtcdAuthTests.gateway(etcd, "/v3/kv/range", range, session: last)
            #expect(lastRange.status == 200, "\(lastRange.body)")
            let firstRange = try await EtcdAuthTests.gateway(etcd, "/v3/kv/range", range, session: first)
            #expect(firstRange.status == 401 && firstRange.body.contains("etcdserver: invalid auth token"), "\(firstRange.status) \(firstRange.body)")
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }
}
