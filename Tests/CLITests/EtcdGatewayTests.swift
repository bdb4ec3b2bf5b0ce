import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// etcd's HTTP/JSON gateway on `serve --etcd`'s port: the same requests to a real etcd
/// and to discfg (on SQLite, and on DynamoDB served by moto), their answers compared
/// field by field by `Tests/Peers/etcd_gateway.py` (HTTP status, content type, every
/// JSON field; revisions in discfg's numbering, the header's identity checked present
/// and not compared); bad input to discfg as an attacker sends it; and OpenStack's
/// `etcd3gw` client (installed by `scripts/setup`) putting, getting, leasing and
/// watching through it.
@Suite("etcd API: the HTTP/JSON gateway against etcd's", .serialized)
struct EtcdGatewayTests {
    /// Runs `etcd_gateway.py arguments…` to completion; fails the test when it fails.
    static func peer(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let output = try await ChildProcess.run(
            "python3", [PeerScript.path("etcd_gateway.py")] + arguments,
            environment: ChildProcess.environment(inheriting: ChildProcess.pythonEnvironment), timeout: .seconds(240)
        )
        #expect(output.termination == .exited(0), "etcd_gateway.py \(arguments.joined(separator: " ")):\n\(output.stdout)\n\(output.stderr)", sourceLocation: sourceLocation)
    }

    @Test(
        "KV, txn, compaction, leases, auth, member list, status and version answer as etcd's gateway does, and bad input is refused with etcd's status and code",
        arguments: EtcdPeer.Backing.allCases
    )
    func sameAnswers(backing: EtcdPeer.Backing) async throws {
        try await EtcdCompatibilityTests.withPair(backing) { pair in
            try await Self.peer(["compare", String(pair.etcd.port), String(pair.discfg.port), String(pair.etcd.offset)])
        }
    }

    @Test("a watch streams one {\"result\":…} line per response as etcd's gateway does, and lease keep-alive answers as etcd's", arguments: EtcdPeer.Backing.allCases)
    func streams(backing: EtcdPeer.Backing) async throws {
        try await EtcdCompatibilityTests.withPair(backing) { pair in
            try await Self.peer(["watch", String(pair.etcd.port), String(pair.discfg.port), String(pair.etcd.offset)])
        }
    }

    @Test("OpenStack's etcd3gw client: put, get, create, replace, delete, a lease with its key, a lock, watches and a transaction", arguments: EtcdPeer.Backing.allCases)
    func etcd3gw(backing: EtcdPeer.Backing) async throws {
        let etcd = try await EtcdPeer.start(backing)
        do {
            let output = try await ChildProcess.run(
                "python3", [PeerScript.path("etcd3gw_check.py"), String(etcd.etcdPort)],
                environment: ChildProcess.environment(inheriting: ChildProcess.pythonEnvironment), timeout: .seconds(240)
            )
            #expect(output.termination == .exited(0), "etcd3gw_check.py:\n\(output.stdout)\n\(output.stderr)")
            #expect(output.stdout.contains("etcd3gw: all passed"), "\(output.stdout)")
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    @Test(
        "bad input at a bounded cost: huge bodies declared and chunked, a slow body, a silent connection, bytes that are not HTTP, too many requests in one body, and a watch nobody reads",
        .timeLimit(.minutes(3))
    )
    func attacks() async throws {
        let etcd = try await EtcdPeer.start(.sqlite, ["--idle-timeout", "2", "--write-timeout", "2"])
        do {
            try await Self.peer(["attack", String(etcd.etcdPort)])
            // gRPC on the same port still works after the attacks.
            #expect(try await etcd.ok("get", "gw/kept", "--print-value-only") == "3\n")
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }
}
