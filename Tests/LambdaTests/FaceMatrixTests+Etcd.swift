import AsyncHTTPClient
import DiscfgAPI
import DiscfgCore
import DiscfgEtcd
import DiscfgService
import DiscfgSQLite
import DiscfgTestSupport
import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import Testing

/// `EtcdServer` running in this process over a fresh SQLite store whose tokens it
/// requires, so the pipeline's observation sees its calls; reached with etcdctl (gRPC)
/// and AsyncHTTPClient (the JSON gateway on the same port).
final class InProcessEtcd: TestServer {
    let store: SQLiteStore
    let directory: URL
    let port: Int
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    private init(store: SQLiteStore, directory: URL, port: Int, group: ServiceGroup, task: Task<Void, any Error>) {
        self.store = store
        self.directory = directory
        self.port = port
        self.group = group
        self.task = task
    }

    deinit { task.cancel() }

    /// Starts the server over `config` once `prepare` has filled its store (tokens are
    /// read as it starts, so they are known from the first call), its audit lines noted in
    /// `auditTrail` (flushed by whoever reads them); the server, and what `prepare` made.
    static func start<Prepared>(
        config: ConfigName, auditTrail: AuditTrail? = nil, prepare: (SQLiteStore) async throws -> Prepared
    ) async throws -> (InProcessEtcd, Prepared) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-face-etcd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = try SQLiteStore(path: directory.appendingPathComponent("store.db").path)
        let prepared = try await prepare(store)
        let (port, group, task) = try await listen(store, config: config, label: "face-matrix-etcd") { server in
            server.access = .tokensRequired(store)
            server.auditTrail = auditTrail
        }
        return (InProcessEtcd(store: store, directory: directory, port: port, group: group, task: task), prepared)
    }

    /// Runs the etcd API over `config` of `store` in this process on a port of its own,
    /// as `configure` sets it up (open to anyone on loopback otherwise): its port, and the
    /// group and task that run it.
    static func listen(
        _ store: any ConfigStore, config: ConfigName, label: String, _ configure: (inout EtcdServer) -> Void = { _ in }
    ) async throws -> (port: Int, group: ServiceGroup, task: Task<Void, any Error>) {
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        var server = EtcdServer(store: store, config: config, host: "127.0.0.1", port: 0) { portContinuation.yield($0) }
        configure(&server)
        var logger = Logger(label: label)
        logger.logLevel = .critical
        server.logger = logger
        let group = ServiceGroup(services: [server], logger: logger)
        let task = Task {
            defer { portContinuation.finish() }
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            var reason = "it stopped before listening"
            if case .failure(let error) = await task.result { reason = "\(error)" }
            throw DiscfgError(.unavailable, "the etcd API did not start: \(reason)")
        }
        return (port, group, task)
    }

    func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `etcdctl arguments…` (v3 API) against the server, to completion.
    func etcdctl(_ arguments: [String], stdin: String? = nil) async throws -> ChildProcess.Output {
        try await ChildProcess.run(
            "etcdctl", ["--endpoints=127.0.0.1:\(port)", "--command-timeout=20s", "--dial-timeout=20s"] + arguments,
            environment: environment, stdin: stdin.map { .bytes(Data($0.utf8)) } ?? .none, timeout: .seconds(60)
        )
    }

    /// Starts `etcdctl arguments…` and leaves it running (a watch).
    func launch(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess.launch("etcdctl", ["--endpoints=127.0.0.1:\(port)"] + arguments, environment: environment)
    }

    private var environment: [String: String] { ChildProcess.environment(["ETCDCTL_API": "3", "HOME": directory.path]) }

    /// POSTs `body` to the JSON gateway at `path`, with an etcd token when given.
    func gateway(_ path: String, _ body: [String: Any], token: String?) async throws -> (status: Int, text: String) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        if let token { request.headers.add(name: "Authorization", value: token) }
        request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body)))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), String(buffer: bytes))
    }
}

extension FaceMatrixTests {
    /// A discfg token as etcdctl presents it: its id as user name, the token as password.
    struct EtcdUser {
        let id: String
        let token: String
        var flags: [String] { ["--user", id, "--password", token] }
    }

    static func etcdUser(_ store: SQLiteStore, role: Role, scopes: [AccessScope]?) async throws -> EtcdUser {
        let (token, record) = try TokenFormat.generate(role: role, scopes: scopes, description: "face matrix \(role)", now: Date())
        try await store.saveToken(record)
        return EtcdUser(id: record.id, token: token)
    }

    static let permissionDenied = "etcdserver: permission denied"

    /// `text` on one line, for a cell's message.
    static func oneLine(_ text: some StringProtocol) -> String {
        text.split(whereSeparator: \.isNewline).joined(separator: " | ")
    }

    @Test("etcd gRPC and its JSON gateway: each call's action is judged by the gate once, allowed or refused", .timeLimit(.minutes(3)))
    func etcd() async throws {
        let config = try ConfigName("face-matrix-etcd")
        let audit = AuditLines()
        let trail = audit.trail
        let (server, (admin, scoped, reader)) = try await InProcessEtcd.start(config: config, auditTrail: trail) { store in
            (
                try await Self.etcdUser(store, role: .admin, scopes: nil),
                try await Self.etcdUser(store, role: .write, scopes: [try AccessScope("\(config):etcd:app/")]),
                try await Self.etcdUser(store, role: .read, scopes: nil)
            )
        }
        try await withServer(server) { etcd in
            let seen = Pipeline.observe(config: config)
            defer { seen.end() }
            /// The audit lines of the calls made since the last, but `Authenticate`'s.
            func auditLines() throws -> [[String: Any]] {
                trail.flush()
                return try audit.take().filter { $0["route"] as? String != "/etcdserverpb.Auth/Authenticate" }
            }
            /// One etcdctl call as `user`, checked against `outcome`; its standard output.
            @discardableResult
            func call(
                _ kind: Action.Kind, _ outcome: Outcome, _ user: EtcdUser, _ arguments: [String], stdin: String? = nil, orEndedStream: Bool = false
            ) async throws -> String {
                seen.reset()
                _ = try auditLines()
                let output = try await etcd.etcdctl(user.flags + arguments, stdin: stdin)
                let served = output.termination == .exited(0) && !output.stdout.contains("FAILURE")
                // A stream refused as it opens ends with PERMISSION_DENIED in its trailers; etcdctl's
                // keep-alive, racing its own send, may report only that the stream ended (EOF).
                let denied = output.stderr.contains(Self.permissionDenied) || (orEndedStream && output.stderr.contains("EOF"))
                let described = "etcdctl \(arguments.joined(separator: " ")) (\(outcome)): exit \(output.termination.map { "\($0)" } ?? "?"), "
                    + "out \(Self.oneLine(output.stdout)), err \(Self.oneLine(output.stderr.suffix(300)))"
                Self.expect(seen, kind, outcome, served: served, refused: !served && denied, described)
                // A unary call leaves one line; a stream's is written as it ends, which etcdctl's may not wait for.
                if [.set, .range, .delete, .txn, .compact, .leaseGrant, .leaseList, .leaseRevoke, .leaseTimeToLive].contains(kind) {
                    Self.expectAuditLine(try auditLines(), kind, outcome, described)
                }
                return output.stdout
            }

            try await call(.set, .allowed, scoped, ["put", "app/k", "v"])
            try await call(.set, .refusedByGate, scoped, ["put", "db/x", "v"])
            try await call(.range, .allowed, scoped, ["get", "app/k"])
            try await call(.range, .refusedByGate, scoped, ["get", "db/x"])
            try await call(.delete, .allowed, scoped, ["del", "app/gone"])
            try await call(.delete, .refusedByGate, scoped, ["del", "db/x"])
            try await call(.txn, .allowed, scoped, ["txn"], stdin: "\nput app/t 1\n\n\n")
            try await call(.txn, .refusedByGate, scoped, ["txn"], stdin: "\nput db/t 1\n\n\n")
            // Compaction drops history of every key: a caller of part of the config is
            // turned away at admission. At the current revision, which history still holds.
            let header = try await etcd.etcdctl(admin.flags + ["get", "app/k", "-w", "json"]).stdout
            let revision = try #require(header.firstMatch(of: /"revision":(\d+)/).map { String($0.1) }, "\(header)")
            try await call(.compact, .refusedAtAdmission, scoped, ["compaction", revision])
            try await call(.compact, .allowed, admin, ["compaction", revision])

            // Leases: a grant, keep-alive and list reach no key, so only a role too low is
            // refused, at admission; a revoke or a time-to-live with keys reaches the keys
            // attached to the lease, refused by the gate once one lies outside the scope.
            let granted = try await call(.leaseGrant, .allowed, scoped, ["lease", "grant", "300"])
            let lease = try #require(granted.split(separator: " ").dropFirst().first.map(String.init), "\(granted)")
            try await call(.leaseGrant, .refusedAtAdmission, reader, ["lease", "grant", "300"])
            try await call(.leaseKeepAlive, .allowed, scoped, ["lease", "keep-alive", "--once", lease])
            try await call(.leaseKeepAlive, .refusedAtAdmission, reader, ["lease", "keep-alive", "--once", lease], orEndedStream: true)
            try await call(.leaseList, .allowed, scoped, ["lease", "list"])
            try await call(.leaseList, .refusedAtAdmission, reader, ["lease", "list"])
            try await call(.leaseTimeToLive, .allowed, scoped, ["lease", "timetolive", lease, "--keys"])
            try await call(.set, .allowed, admin, ["put", "--lease=\(lease)", "db/leased", "v"])
            try await call(.leaseTimeToLive, .refusedByGate, scoped, ["lease", "timetolive", lease, "--keys"])
            try await call(.leaseRevoke, .refusedByGate, scoped, ["lease", "revoke", lease])
            try await call(.leaseRevoke, .allowed, admin, ["lease", "revoke", lease])

            // A watch is judged as it is created: one open inside the scope, one refused past it.
            seen.reset()
            let watch = try etcd.launch(scoped.flags + ["watch", "app/w"])
            let opened = (try? await eventually("the watch is created", timeout: .seconds(30)) { !seen.recorded.isEmpty }) != nil
            await watch.stop()
            #expect(opened, "no watch was created: \(watch.output.stderr.suffix(300))")
            Self.expect(seen, .watch, .allowed, served: opened, refused: false, "etcdctl watch app/w")
            seen.reset()
            let refusedWatch = try await etcd.etcdctl(scoped.flags + ["watch", "db/x"])
            let text = refusedWatch.stdout + refusedWatch.stderr
            Self.expect(
                seen, .watch, .refusedByGate, served: false, refused: text.contains("watch was canceled (\(Self.permissionDenied))"),
                "etcdctl watch db/x: \(Self.oneLine(text.suffix(300)))"
            )

            // The JSON gateway: the same method table, so the same gate, once.
            let login = try await etcd.gateway("/v3/auth/authenticate", ["name": scoped.id, "password": scoped.token], token: nil)
            let session = try #require(
                (try? JSONSerialization.jsonObject(with: Data(login.text.utf8)) as? [String: Any])?["token"] as? String, "authenticate: \(login)"
            )
            func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }
            let gatewayCells: [(Action.Kind, Outcome, String, [String: Any])] = [
                (.range, .allowed, "/v3/kv/range", ["key": base64("app/k")]),
                (.range, .refusedByGate, "/v3/kv/range", ["key": base64("db/x")]),
                (.set, .allowed, "/v3/kv/put", ["key": base64("app/k"), "value": base64("w")]),
                (.set, .refusedByGate, "/v3/kv/put", ["key": base64("db/x"), "value": base64("w")]),
                (.txn, .allowed, "/v3/kv/txn", ["success": [["request_put": ["key": base64("app/t"), "value": base64("2")]]]]),
                (.txn, .refusedByGate, "/v3/kv/txn", ["success": [["request_put": ["key": base64("db/t"), "value": base64("2")]]]]),
            ]
            for (kind, outcome, path, body) in gatewayCells {
                seen.reset()
                _ = try auditLines()
                let reply = try await etcd.gateway(path, body, token: session)
                let described = "gateway \(path) (\(outcome)): \(reply.status) \(reply.text.prefix(300))"
                Self.expect(seen, kind, outcome, served: reply.status == 200, refused: reply.status == 403 && reply.text.contains("permission denied"), described)
                Self.expectAuditLine(try auditLines(), kind, outcome, described)
            }
            let left = try await etcd.etcdctl(admin.flags + ["get", "db/", "--prefix", "--keys-only"])
            #expect(left.termination == .exited(0) && left.stdout.isEmpty, "nothing refused wrote under db/: \(left.stdout) \(left.stderr)")
        }
    }
}
