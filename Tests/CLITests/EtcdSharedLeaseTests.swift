import DiscfgTestSupport
import Foundation
import Testing

/// Two `serve --etcd` on one store (a SQLite file; a DynamoDB table on moto) share their
/// leases: a lease granted through one server is renewed and listed through the other,
/// and when the server that granted it dies, the other expires it on time and deletes its
/// keys. A DCS behind more than one server (patroni's leader key) fails over.
@Suite("etcd API: leases shared by the servers on one store")
struct EtcdSharedLeaseTests {
    @Test("a lease granted through a server that is then killed runs out through the other, and its keys go", arguments: EtcdPeer.Backing.allCases)
    func leaseOutlivesNoServer(backing: EtcdPeer.Backing) async throws {
        let first = try await EtcdPeer.start(backing)
        let second = try await first.secondServer()
        defer { first.cli.cleanUp() }
        do {
            let granted = try await first.ok("lease", "grant", "4")
            let id = try #require(granted.split(separator: " ").dropFirst().first.map(String.init), "\(granted)")
            #expect(try await first.ok("put", "--lease=\(id)", "service/leader", "node1") == "OK\n")
            #expect(try await first.ok("put", "service/config", "kept") == "OK\n")

            // The other server sees the lease: it renews it, lists it, and a put there
            // attaches a key to it.
            #expect(try await second.ok("lease", "keep-alive", "--once", id) == "lease \(id) keepalived with TTL(4)\n")
            #expect(try await second.ok("lease", "list") == "found 1 leases\n\(id)\n")
            #expect(try await second.ok("put", "--lease=\(id)", "service/member", "node1") == "OK\n")
            let ttl = try await second.ok("lease", "timetolive", id, "--keys")
            #expect(ttl.hasSuffix("attached keys([service/leader service/member])\n"), "\(ttl)")

            // The server that granted it dies; the other expires it and deletes its keys.
            _ = await first.server.kill()
            let killed = ContinuousClock.now
            try await eventually("the lease's keys go though the server that granted it is gone", timeout: .seconds(60), interval: .milliseconds(250)) {
                try await second.ok("get", "service/", "--prefix", "--keys-only") == "service/config\n\n"
            }
            print("leases: keys of a 4 s lease gone \(ContinuousClock.now - killed) after its server was killed (\(backing))")
            #expect(try await second.ok("lease", "timetolive", id) == "lease \(id) already expired\n")
            #expect(try await second.ok("lease", "list") == "found 0 leases\n")
            let late = try await second.etcdctl("lease", "keep-alive", "--once", id)
            #expect(late.termination != .exited(0) || late.stdout.contains("expired"), "a lease that ran out is renewed no more: \(late.stdout) \(late.stderr)")
        } catch {
            await first.server.stop()
            await second.server.stop()
            throw error
        }
        await first.server.stop()
        await second.server.stop()
    }

    @Test("serve --etcd over a store that keeps no leases (a discfg server) says so when it starts; over SQLite it does not")
    func saysWhenLeasesStayInTheProcess() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let (store, storePort) = try await cli.serve(["--auth", "none"])
        var remote = cli
        remote.environment["DISCFG_STORE"] = "http://127.0.0.1:\(storePort)"
        let (overRemote, _) = try await remote.serveEtcd(["--auth", "none"])
        var local = cli
        local.environment["DISCFG_STORE"] = "sqlite://\(cli.directory.path)/other.db"
        let (overSQLite, _) = try await local.serveEtcd()
        let notice = "etcd leases are kept in this process"
        let said = try? await overRemote.waitForOutput(timeout: .seconds(30)) { output in output.stderr.contains(notice) ? true : nil }
        #expect(said == true, "\(overRemote.output.stderr)")
        #expect(overRemote.output.stderr.contains("another serve --etcd on it neither renews nor expires them"))
        #expect(!overSQLite.output.stderr.contains(notice), "\(overSQLite.output.stderr)")
        await overSQLite.stop()
        await overRemote.stop()
        await store.stop()
    }
}
