import DiscfgAPI
import DiscfgCore
@testable import DiscfgLambda
import DiscfgService
import DiscfgSQLite
import DiscfgTestSupport
import Foundation
import Logging
import Synchronization
import Testing

/// One audit line writer for every face: the same action, allowed or refused by the gate,
/// leaves one line on each face (the REST router, the fast path, Lambda, the etcd API and
/// its JSON gateway) naming that action, with the same fields but for the transport's own
/// (`method`, `path` and `status` on HTTP, `grpcStatus` on gRPC).
extension FaceMatrixTests {
    /// The fields only a transport gives, which differ by face.
    static let transportFields: Set<String> = ["method", "path", "status", "grpcStatus"]
    /// The fields every face's line of a `set` has, allowed and refused by the gate.
    static let allowedSetFields: Set<String> = ["time", "api", "principal", "route", "action", "config", "key", "revision", "ms"]
    static let refusedSetFields: Set<String> = ["time", "api", "principal", "route", "action", "config", "key", "error", "ms"]

    /// Audit lines written to memory.
    final class AuditLines: Sendable {
        private final class Bytes: Sendable {
            let bytes = Mutex<[UInt8]>([])
        }

        private let written = Bytes()
        /// The trail whose lines are kept.
        let trail: AuditTrail

        init() {
            let written = written
            trail = AuditTrail { lines in written.bytes.withLock { $0 += lines } }
        }

        /// The lines written so far, parsed, and forgotten.
        func take() throws -> [[String: Any]] {
            let lines = written.bytes.withLock { bytes in
                defer { bytes.removeAll() }
                return bytes
            }
            return try FaceMatrixTests.parse(lines)
        }
    }

    /// The audit lines a server appends to a file of its own, read as they come.
    final class AuditFile: Sendable {
        let directory: URL
        let sink: LogSink
        private let file: URL
        private let read = Mutex(0)

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-face-audit-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            file = directory.appendingPathComponent("audit.log")
            sink = try LogSink(appendingTo: file.path)
        }

        /// The lines written since the last call.
        func newLines() throws -> [[String: Any]] {
            sink.flush()
            let lines = try FaceMatrixTests.parse(try Data(contentsOf: file))
            let first = read.withLock { read in
                defer { read = lines.count }
                return read
            }
            return Array(lines.dropFirst(first))
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    /// Checks that a request of `kind` that `outcome` says how the gate judged left one
    /// audit line naming its action (none when it was refused at admission, before it was one).
    static func expectAuditLine(
        _ lines: [[String: Any]], _ kind: Action.Kind, _ outcome: Outcome, _ cell: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let actions = lines.map { $0["action"] as? String ?? "none" }
        let expected = outcome == .refusedAtAdmission ? "none" : kind.rawValue
        #expect(actions == [expected], "\(cell): audit lines naming \(actions), not one naming \(expected)", sourceLocation: sourceLocation)
    }

    static func parse(_ bytes: some Sequence<UInt8>) throws -> [[String: Any]] {
        try Array(bytes).split(separator: UInt8(ascii: "\n")).map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any], "\(String(decoding: line, as: UTF8.self))")
        }
    }

    /// Checks that `lines` is one line of a `set` that the gate allowed (or refused), for
    /// `principal`, with the fields every face gives.
    static func expectSetLine(
        _ lines: [[String: Any]], refused: Bool, principal: String, _ face: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(lines.count == 1, "\(face): \(lines.count) lines, not one: \(lines)", sourceLocation: sourceLocation)
        guard let line = lines.first else { return }
        let fields = Set(line.keys).subtracting(transportFields)
        let expected = refused ? refusedSetFields : allowedSetFields
        #expect(fields == expected, "\(face): fields \(fields.sorted()), not \(expected.sorted()): \(line)", sourceLocation: sourceLocation)
        #expect(line["action"] as? String == "set", "\(face): \(line)", sourceLocation: sourceLocation)
        #expect(line["principal"] as? String == principal, "\(face): \(line)", sourceLocation: sourceLocation)
        if refused { #expect(line["error"] as? String == "permissionDenied", "\(face): \(line)", sourceLocation: sourceLocation) }
    }

    @Test("the REST router and the fast path: one audit line per set, naming its action, with every face's fields", .timeLimit(.minutes(2)))
    func auditREST() async throws {
        let config = try ConfigName("face-matrix-audit-rest")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-face-audit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("audit.log")
        let sink = try LogSink(appendingTo: file.path)
        try await withServer(try await LiveServer.start(auth: .required, tokenCacheLifetime: .seconds(600)) { $0.auditLog = sink }) { server in
            let (_, scoped) = try await Self.prepare(server.store, config)
            let principal = "token:" + (TokenFormat.id(of: scoped) ?? "?")
            /// The lines of `method path`, once `count` of them are written.
            func lines(_ method: String, _ path: String, count: Int = 1) async throws -> [[String: Any]] {
                try await eventually("\(count) audit lines of \(method) \(path)") {
                    sink.flush()
                    let all = try Self.parse(try Data(contentsOf: file))
                    let matching = all.filter { $0["method"] as? String == method && $0["path"] as? String == path }
                    return matching.count >= count ? matching : nil
                }
            }
            let base = "/v1/\(config)/keys"
            // The router (`Connection` keeps the request off the event loops).
            let keepAlive = Self.bearer(scoped) + [("Connection", "keep-alive")]
            #expect(try await server.request(.PUT, "\(base)/app/new", body: Data("v".utf8), headers: keepAlive).status == 201)
            #expect(try await server.request(.PUT, "\(base)/db/new", body: Data("v".utf8), headers: keepAlive).status == 403)
            Self.expectSetLine(try await lines("PUT", "\(base)/app/new"), refused: false, principal: principal, "router PUT /app/new")
            Self.expectSetLine(try await lines("PUT", "\(base)/db/new"), refused: true, principal: principal, "router PUT /db/new")

            // The event loop's write, its line noted there and written with its metrics.
            let before = try await Self.counter(server, "discfg_event_loop_writes_total")
            let written = try await Self.putWhole(server, "\(base)/app/fast", "v", headers: Self.bearer(scoped))
            #expect(written.status == 201, "\(written.text)")
            #expect(try await Self.counter(server, "discfg_event_loop_writes_total") == before + 1, "the event loop did not take the write")
            Self.expectSetLine(try await lines("PUT", "\(base)/app/fast"), refused: false, principal: principal, "fast path PUT /app/fast")
        }
    }

    @Test("Lambda: one audit line per set, naming its action, with every face's fields", .timeLimit(.minutes(2)))
    func auditLambda() async throws {
        let config = try ConfigName("face-matrix-audit-lambda")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-face-audit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(path: directory.appendingPathComponent("store.db").path)
        _ = try await Self.prepare(store, config)
        let deployer = "arn:aws:iam::123456789012:role/deployer"
        let access = LambdaAccess(modes: .iam, rules: [LambdaAccess.Rule(pattern: deployer, role: .write, scopes: [try AccessScope("\(config):/app/")])])
        let file = directory.appendingPathComponent("audit.log")
        let handler = LambdaHTTPHandler(store: store, access: access, options: ConfigAPI.Options(), auditLog: try LogSink(appendingTo: file.path))
        var logger = Logger(label: "face-matrix-audit")
        logger.logLevel = .critical
        var seen = 0
        for (key, refused) in [("app/new", false), ("db/new", true)] {
            let request = GatewayRequest(method: "PUT", path: "/v1/\(config)/keys/\(key)", query: "", headers: [], body: Data("v".utf8), principal: deployer)
            let status = await handler.handle(request, deadline: .now + .seconds(30), logger: logger).status
            #expect(status == (refused ? 403 : 201))
            // Written at once, as the function answers.
            let lines = try Self.parse(try Data(contentsOf: file))
            Self.expectSetLine(Array(lines.dropFirst(seen)), refused: refused, principal: "iam:\(deployer)", "Lambda PUT /\(key)")
            seen = lines.count
        }
    }

    @Test("etcd gRPC and its JSON gateway: one audit line per put, naming its action, with every face's fields", .timeLimit(.minutes(2)))
    func auditEtcd() async throws {
        let config = try ConfigName("face-matrix-audit-etcd")
        let audit = AuditLines()
        let trail = audit.trail
        let (server, scoped) = try await InProcessEtcd.start(config: config, auditTrail: trail) { store in
            try await Self.etcdUser(store, role: .write, scopes: [try AccessScope("\(config):etcd:app/")])
        }
        try await withServer(server) { etcd in
            /// The lines of `KV/Put` written since the last call.
            func puts() throws -> [[String: Any]] {
                trail.flush()
                return try audit.take().filter { $0["route"] as? String == "/etcdserverpb.KV/Put" }
            }
            let principal = "token:\(scoped.id)"
            for (key, refused) in [("app/k", false), ("db/x", true)] {
                let output = try await etcd.etcdctl(scoped.flags + ["put", key, "v"])
                #expect((output.termination == .exited(0)) != refused, "etcdctl put \(key): \(output.stdout) \(output.stderr)")
                Self.expectSetLine(try puts(), refused: refused, principal: principal, "etcd put \(key)")
            }
            let login = try await etcd.gateway("/v3/auth/authenticate", ["name": scoped.id, "password": scoped.token], token: nil)
            let session = try #require(
                (try? JSONSerialization.jsonObject(with: Data(login.text.utf8)) as? [String: Any])?["token"] as? String, "authenticate: \(login)"
            )
            for (key, refused) in [("app/k", false), ("db/x", true)] {
                let body = ["key": Data(key.utf8).base64EncodedString(), "value": Data("w".utf8).base64EncodedString()]
                let reply = try await etcd.gateway("/v3/kv/put", body, token: session)
                #expect(reply.status == (refused ? 403 : 200), "gateway put \(key): \(reply.text)")
                Self.expectSetLine(try puts(), refused: refused, principal: principal, "gateway put \(key)")
            }
            // A failure that is not the gate's names its code too, as the REST envelope's line does.
            let body = ["key": Data("app/k".utf8).base64EncodedString(), "value": Data("w".utf8).base64EncodedString(), "lease": "4242"]
            let leaseless = try await etcd.gateway("/v3/kv/put", body, token: session)
            let failed = try puts()
            #expect(leaseless.status != 200 && failed.count == 1, "gateway put with no such lease: \(leaseless.status) \(leaseless.text), lines \(failed)")
            let code = failed.first?["error"] as? String
            #expect(code != nil && code != "permissionDenied" && failed.first?["grpcStatus"] as? String != "OK", "\(leaseless.text): \(failed)")
        }
    }
}
