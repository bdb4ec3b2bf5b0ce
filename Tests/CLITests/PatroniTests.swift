import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// patroni (Debian's, with PostgreSQL 15; installed by `scripts/setup`) running a
/// two-node PostgreSQL cluster with the etcd API as its DCS (patroni's `etcd3` DCS, which
/// speaks the HTTP/JSON gateway): a leader elected, the replica streaming, a row read back
/// on it, `patronictl list`, then the leader killed and the time until the other node
/// leads. `Tests/Peers/patroni_cluster.py` runs the scenario; this test runs it, two
/// clusters at a time, against a real etcd, `serve --etcd` on SQLite (without and with
/// tokens), and two `serve --etcd` on one DynamoDB table (moto), each node on its own
/// server and the leader's server killed with it. A machine without patroni, PostgreSQL or etcd fails
/// it, it does not skip it.
@Suite("etcd API: patroni runs a PostgreSQL cluster over it")
struct PatroniTests {
    /// What the scenario reported: whether it passed, the failover time, and every field
    /// of its JSON line (the times, and on failure the step and error) for messages.
    struct Outcome: Sendable {
        let name: String
        let passed: Bool
        /// Seconds from the leader's kill until the other node led.
        let failover: Double?
        let fields: [String: String]
        let logs: String

        var summary: String {
            let names = ["leader_elected_s", "replica_joined_s", "failover_s", "writable_s", "killed_dcs_pid", "step", "error"]
            return "\(name): " + names.compactMap { name in fields[name].map { "\(name)=\($0)" } }.joined(separator: " ")
        }
    }

    static let programs = ["/usr/bin/patroni", "/usr/bin/patronictl", "/usr/lib/postgresql/15/bin/postgres", "/usr/lib/postgresql/15/bin/pg_ctl"]

    /// Runs `patroni_cluster.py` with one DCS address per node.
    static func scenario(_ name: String, dcs: [Int], killWithLeader: [Int: pid_t] = [:], extra: [String] = []) async throws -> Outcome {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-patroni-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        var arguments = [PeerScript.path("patroni_cluster.py"), "--work", work.path, "--timeout", "150"]
        arguments += dcs.flatMap { ["--dcs", "127.0.0.1:\($0)"] } + extra
        if !killWithLeader.isEmpty {
            arguments += ["--kill-with-leader", killWithLeader.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")]
        }
        let output = try await ChildProcess.run(
            "python3", arguments, environment: ChildProcess.environment(inheriting: ChildProcess.pythonEnvironment), timeout: .seconds(200)
        )
        let line = output.stdoutLines.last ?? ""
        let json = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? ["error": "no JSON line in its output"]
        return Outcome(
            name: name, passed: json["ok"] as? Bool == true, failover: (json["failover_s"] as? NSNumber)?.doubleValue,
            fields: json.mapValues { "\($0)" }, logs: output.logs
        )
    }

    /// (a) A real etcd, both nodes on it.
    static func onEtcd() async throws -> Outcome {
        try await withServer(try await RealEtcd.start()) { etcd in
            try await scenario("etcd 3.4", dcs: [etcd.endpoint.port, etcd.endpoint.port])
        }
    }

    /// (b) `serve --etcd` on SQLite, both nodes on it.
    static func onSQLite() async throws -> Outcome {
        try await withServer(try await EtcdPeer.start(.sqlite)) { server in
            try await scenario("discfg on SQLite", dcs: [server.etcdPort, server.etcdPort])
        }
    }

    /// (b) again, with `serve --etcd --auth token`: patroni authenticates with a token's
    /// id and the token, scoped to its namespace `/service/`. It asks the member list
    /// before it authenticates, which etcd and discfg answer without a token.
    static func onSQLiteWithTokens() async throws -> Outcome {
        try await withServer(try await EtcdPeer.start(.sqlite, ["--auth", "token"])) { server in
            let created = try await server.cli.run("token", "create", "--role", "write", "--scope", "etcd:etcd:/service/", "--description", "patroni")
            let token = try #require(created.stdout.split(separator: "\n").first.map(String.init), "token create: \(created.stderr)")
            let id = try #require(token.split(separator: "_").dropFirst().first.map(String.init), "\(token)")
            return try await scenario("discfg on SQLite, tokens", dcs: [server.etcdPort, server.etcdPort], extra: ["--dcs-auth", "\(id):\(token)"])
        }
    }

    /// (c) Two `serve --etcd` on one DynamoDB table: node 0 on server A, node 1 on server
    /// B; the leader's server is killed with it, so the other server alone must let the
    /// dead leader's lease run out.
    static func onDynamoDB() async throws -> Outcome {
        let a = try await EtcdPeer.start(.dynamodb)
        let b: ChildProcess
        let bPort: Int
        do {
            (b, bPort) = try await a.cli.serveEtcd()
        } catch {
            await a.stop()
            throw error
        }
        do {
            let outcome = try await scenario(
                "discfg on DynamoDB, two servers", dcs: [a.etcdPort, bPort], killWithLeader: [0: a.server.pid, 1: b.pid]
            )
            if outcome.failover != nil {
                #expect(outcome.fields["killed_dcs_pid"] != nil && a.server.isRunning != b.isRunning, "the leader's server was killed, the other runs: \(outcome.summary)")
            }
            await b.stop()
            await a.stop()
            return outcome
        } catch {
            await b.stop()
            await a.stop()
            throw error
        }
    }

    @Test(
        "a leader elected, the replica streaming a row written on the leader, patronictl list, and a failover after the leader is killed: on etcd, on serve --etcd over SQLite (without and with tokens), and on two serve --etcd over one DynamoDB table with the leader's server killed too",
        .timeLimit(.minutes(5))
    )
    func cluster() async throws {
        for program in Self.programs {
            #expect(FileManager.default.isExecutableFile(atPath: program), "\(program) is missing: install patroni and postgresql (scripts/setup does)")
        }
        #expect(RealEtcd.executable("etcd") != nil, "etcd is missing: install etcd-server (scripts/setup does)")
        try #require(Self.programs.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) })

        // Two clusters at a time, etcd's beside discfg's: four PostgreSQL clusters starting
        // at once load two cores heavily while the rest of the suite runs beside them.
        async let etcd = Self.onEtcd()
        async let sqlite = Self.onSQLite()
        let first = try await [etcd, sqlite]
        async let tokens = Self.onSQLiteWithTokens()
        async let dynamodb = Self.onDynamoDB()
        let outcomes = try await first + [tokens, dynamodb]
        for outcome in outcomes {
            print("patroni failover: \(outcome.summary)")
        }
        for outcome in outcomes {
            #expect(outcome.passed, "\(outcome.summary)\n\(outcome.logs.suffix(6_000))")
            #expect((outcome.failover ?? .infinity) < 60, "\(outcome.summary)")
        }
    }
}
