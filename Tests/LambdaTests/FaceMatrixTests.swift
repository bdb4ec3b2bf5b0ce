import AsyncHTTPClient
import DiscfgAPI
import DiscfgCore
@testable import DiscfgLambda
import DiscfgService
import DiscfgSQLite
import DiscfgTestSupport
import Foundation
import Logging
import NIOHTTP1
import Testing

/// Every action on every face passes through the gate, once: for each face (the REST
/// router, the event loops' fast path, Lambda, the etcd gRPC API and its JSON gateway)
/// and each kind of action it serves, an allowed request is one unrefused record of
/// that kind in the pipeline (``DiscfgService/Pipeline/observe(config:)``), and a
/// request outside the caller's scopes is refused by the face in its own words and is
/// one refused record, or, where the face refuses it at admission before reading
/// what it reaches (a whole-config action for a caller of part of it, a role too low),
/// no record at all. Where the cells' requests are one call each (the router's, the etcd
/// API's unary calls, the gateway's), each leaves one audit line naming its action, or
/// none when refused at admission (``FaceMatrixTests+Audit.swift``: the same fields on
/// every face).
///
/// The observation is of this process, so every server runs in it, each over a config
/// of its own so that suites running beside it do not mix in. It lives here because
/// this target reaches every face: the Lambda function (with its gateway events), the
/// REST API and, through `discfg`, the etcd API.
@Suite("Faces: every action passes through the gate once")
struct FaceMatrixTests {
    /// What a cell expects of the gate.
    enum Outcome: CustomStringConvertible {
        /// Answered (2xx / OK): one record of the kind, not refused.
        case allowed
        /// Refused by the gate as the action reached past the caller's scopes: the
        /// face's refusal, and one record of the kind, refused.
        case refusedByGate
        /// Refused at admission, before the request's keys were read (a whole-config
        /// action for a caller scoped to part of it, a role too low): the face's
        /// refusal and no record.
        case refusedAtAdmission

        var description: String {
            switch self {
            case .allowed: "allowed"
            case .refusedByGate: "refused by the gate"
            case .refusedAtAdmission: "refused at admission"
            }
        }
    }

    /// Checks what `seen` recorded for one request of `kind` that the face answered
    /// (`served`) or refused in its words (`refused`), as `outcome` says it must.
    static func expect(
        _ seen: PipelineObservation, _ kind: Action.Kind, _ outcome: Outcome, served: Bool, refused: Bool, _ cell: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let records = seen.recorded
        let shown = records.map { "\($0.kind)\($0.refused ? " (refused)" : "")" }
        switch outcome {
        case .allowed:
            #expect(served, "\(cell): not served", sourceLocation: sourceLocation)
            #expect(records.count == 1 && records.first?.kind == kind && records.first?.refused == false,
                    "\(cell): the pipeline saw \(shown), not one \(kind)", sourceLocation: sourceLocation)
        case .refusedByGate:
            #expect(refused, "\(cell): not refused", sourceLocation: sourceLocation)
            #expect(records.count == 1 && records.first?.kind == kind && records.first?.refused == true,
                    "\(cell): the pipeline saw \(shown), not one \(kind) refused", sourceLocation: sourceLocation)
        case .refusedAtAdmission:
            #expect(refused, "\(cell): not refused", sourceLocation: sourceLocation)
            #expect(records.isEmpty, "\(cell): refused at admission, yet the pipeline saw \(shown)", sourceLocation: sourceLocation)
        }
    }

    static func bearer(_ token: String) -> [(String, String)] { [("Authorization", "Bearer \(token)")] }

    /// A config with `/app/k` (JSON) and `/db/x`, an admin of all and a writer scoped to
    /// `CONFIG:/app/`.
    static func prepare(_ store: SQLiteStore, _ config: ConfigName) async throws -> (admin: String, scoped: String) {
        let (admin, adminRecord) = try TokenFormat.generate(role: .admin, configs: nil, description: "face matrix admin", now: Date())
        let (scoped, scopedRecord) = try TokenFormat.generate(
            role: .write, scopes: [try AccessScope("\(config):/app/")], description: "face matrix writer", now: Date()
        )
        try await store.saveToken(adminRecord)
        try await store.saveToken(scopedRecord)
        _ = try await store.createConfig(config, settings: ConfigSettings())
        _ = try await store.set(try Key("/app/k"), to: Data(#"{"a": 1}"#.utf8), in: config, options: SetOptions(contentType: "application/json"))
        _ = try await store.set(try Key("/db/x"), to: Data("secret".utf8), in: config, options: SetOptions())
        return (admin, scoped)
    }

    // MARK: REST and the fast path

    /// One REST request of the matrix: who sends it, what, and what the gate must do.
    struct RESTCell {
        var kind: Action.Kind
        var outcome: Outcome
        var admin = false
        var method: HTTPMethod
        var path: String
        var body: String?
        var headers: [(String, String)] = []
    }

    /// Each kind the router serves, as a writer scoped to `/app/` (an admin for what
    /// reaches the whole config) and refused to that writer past `/app/`.
    static func restCells(_ config: ConfigName) -> [RESTCell] {
        let base = "/v1/\(config)"
        let json = [("Content-Type", "application/json")]
        let merge = [("Content-Type", "application/merge-patch+json")]
        let schema = [("Content-Type", "application/schema+json")]
        return [
            RESTCell(kind: .get, outcome: .allowed, method: .GET, path: "\(base)/keys/app/k"),
            RESTCell(kind: .get, outcome: .refusedByGate, method: .GET, path: "\(base)/keys/db/x"),
            RESTCell(kind: .list, outcome: .allowed, method: .GET, path: "\(base)/keys?prefix=/app/"),
            RESTCell(kind: .list, outcome: .refusedByGate, method: .GET, path: "\(base)/keys?prefix=/db/"),
            RESTCell(kind: .set, outcome: .allowed, method: .PUT, path: "\(base)/keys/app/new", body: "v"),
            RESTCell(kind: .set, outcome: .refusedByGate, method: .PUT, path: "\(base)/keys/db/new", body: "v"),
            RESTCell(kind: .patch, outcome: .allowed, method: .PATCH, path: "\(base)/keys/app/k", body: #"{"b": 2}"#, headers: merge),
            RESTCell(kind: .patch, outcome: .refusedByGate, method: .PATCH, path: "\(base)/keys/db/x", body: #"{"b": 2}"#, headers: merge),
            RESTCell(kind: .delete, outcome: .allowed, method: .DELETE, path: "\(base)/keys/app/new"),
            RESTCell(kind: .delete, outcome: .refusedByGate, method: .DELETE, path: "\(base)/keys/db/x"),
            RESTCell(kind: .deletePrefix, outcome: .allowed, method: .DELETE, path: "\(base)/keys?prefix=/app/gone/&recursive"),
            RESTCell(kind: .deletePrefix, outcome: .refusedByGate, method: .DELETE, path: "\(base)/keys?prefix=/db/&recursive"),
            RESTCell(kind: .documentRead, outcome: .allowed, method: .GET, path: "\(base)/keys?document&prefix=/app/"),
            RESTCell(kind: .documentRead, outcome: .refusedByGate, method: .GET, path: "\(base)/keys?document&prefix=/db/"),
            RESTCell(kind: .documentWrite, outcome: .allowed, method: .PUT, path: "\(base)/keys/app/doc/?document", body: #"{"a": "1"}"#, headers: json),
            RESTCell(kind: .documentWrite, outcome: .refusedByGate, method: .PUT, path: "\(base)/keys/db/doc/?document", body: #"{"a": "1"}"#, headers: json),
            RESTCell(kind: .history, outcome: .allowed, method: .GET, path: "\(base)/history/app/k"),
            RESTCell(kind: .history, outcome: .refusedByGate, method: .GET, path: "\(base)/history/db/x"),
            // A long poll that waits a second for a change that does not come.
            RESTCell(kind: .watch, outcome: .allowed, method: .GET, path: "\(base)/watch?prefix=/app/&timeout=1"),
            RESTCell(kind: .watch, outcome: .refusedByGate, method: .GET, path: "\(base)/watch?prefix=/db/&timeout=1"),
            // An export reaches every key: only the admin's is served.
            RESTCell(kind: .export, outcome: .allowed, admin: true, method: .GET, path: "\(base)/export"),
            RESTCell(kind: .export, outcome: .refusedByGate, method: .GET, path: "\(base)/export"),
            RESTCell(kind: .importSnapshot, outcome: .allowed, method: .POST, path: "\(base)/import", body: #"{"/app/imported": "1"}"#, headers: json),
            RESTCell(kind: .importSnapshot, outcome: .refusedByGate, method: .POST, path: "\(base)/import", body: #"{"/db/imported": "1"}"#, headers: json),
            RESTCell(kind: .txn, outcome: .allowed, method: .POST, path: "\(base)/txn", body: #"{"success": [{"op": "put", "key": "/app/t", "value": "1"}]}"#, headers: json),
            RESTCell(kind: .txn, outcome: .refusedByGate, method: .POST, path: "\(base)/txn", body: #"{"success": [{"op": "put", "key": "/db/t", "value": "1"}]}"#, headers: json),
            // The config's own routes need all of it: a writer of /app/ is turned away
            // at admission, before its handler runs.
            RESTCell(kind: .configInfo, outcome: .allowed, admin: true, method: .GET, path: base),
            RESTCell(kind: .configInfo, outcome: .refusedAtAdmission, method: .GET, path: base),
            RESTCell(kind: .schemaWrite, outcome: .allowed, admin: true, method: .PUT, path: "\(base)/schema?target=/app/settings", body: #"{"type": "object"}"#, headers: schema),
            RESTCell(kind: .schemaWrite, outcome: .refusedAtAdmission, method: .PUT, path: "\(base)/schema?target=/app/settings", body: #"{"type": "object"}"#, headers: schema),
            RESTCell(kind: .schemaRead, outcome: .allowed, admin: true, method: .GET, path: "\(base)/schema?target=/app/settings"),
            RESTCell(kind: .schemaRead, outcome: .refusedAtAdmission, method: .GET, path: "\(base)/schema?target=/app/settings"),
            RESTCell(kind: .compact, outcome: .allowed, admin: true, method: .POST, path: "\(base)/compact?revision=1"),
            RESTCell(kind: .compact, outcome: .refusedAtAdmission, method: .POST, path: "\(base)/compact?revision=1"),
        ]
    }

    @Test("REST: each route's action is judged by the gate once, allowed or refused", .timeLimit(.minutes(2)))
    func rest() async throws {
        let config = try ConfigName("face-matrix-rest")
        let audit = try AuditFile()
        defer { audit.remove() }
        try await withServer(try await LiveServer.start(auth: .required, tokenCacheLifetime: .seconds(600)) { $0.auditLog = audit.sink }) { server in
            let (admin, scoped) = try await Self.prepare(server.store, config)
            let seen = Pipeline.observe(config: config)
            defer { seen.end() }
            _ = try audit.newLines()
            for cell in Self.restCells(config) {
                seen.reset()
                // `Connection` keeps the request off the event loops' fast path: the router answers it.
                let headers = Self.bearer(cell.admin ? admin : scoped) + [("Connection", "keep-alive")] + cell.headers
                let reply = try await server.request(cell.method, cell.path, body: cell.body.map { Data($0.utf8) }, headers: headers)
                let described = "\(cell.method) \(cell.path) (\(cell.outcome)): \(reply.status) \(reply.text.prefix(300))"
                Self.expect(seen, cell.kind, cell.outcome, served: (200..<300).contains(reply.status), refused: reply.status == 403, described)
                // Its line is written before its answer is.
                Self.expectAuditLine(try audit.newLines(), cell.kind, cell.outcome, described)
            }
        }
    }

    @Test("the fast path: a key read from the views and a key write on the event loop are judged once; a refusal goes to the router, judged once there", .timeLimit(.minutes(2)))
    func fastPath() async throws {
        let config = try ConfigName("face-matrix-fast")
        try await withServer(try await LiveServer.start(auth: .required, tokenCacheLifetime: .seconds(600))) { server in
            let (_, scoped) = try await Self.prepare(server.store, config)
            let viewReads = { try await Self.counter(server, "discfg_view_reads_total") }
            let loopWrites = { try await Self.counter(server, "discfg_event_loop_writes_total") }
            // Through the router, which reads the token record the event loops then use.
            #expect(try await server.get("/v1/\(config)/keys/app/k", headers: Self.bearer(scoped) + [("Connection", "keep-alive")]).status == 200)
            let seen = Pipeline.observe(config: config)
            defer { seen.end() }

            // A read the views answer (the router answers it until they hold the config).
            try await eventually("the views answer GET /app/k", interval: .milliseconds(10)) {
                seen.reset()
                let before = try await viewReads()
                let reply = try await server.get("/v1/\(config)/keys/app/k", headers: Self.bearer(scoped))
                guard try await viewReads() > before else { return false }
                Self.expect(seen, .get, .allowed, served: reply.status == 200, refused: false, "fast path GET /app/k: \(reply.status) \(reply.text)")
                return true
            }
            // A read past the scope: the fast path hands it to the router, whose handler is refused by the gate.
            seen.reset()
            var before = try await viewReads()
            let read = try await server.get("/v1/\(config)/keys/db/x", headers: Self.bearer(scoped))
            #expect(try await viewReads() == before, "the views answered a refused read")
            Self.expect(seen, .get, .refusedByGate, served: false, refused: read.status == 403, "fast path GET /db/x: \(read.status) \(read.text)")

            // A write the event loop takes.
            seen.reset()
            before = try await loopWrites()
            let written = try await Self.putWhole(server, "/v1/\(config)/keys/app/fast", "v", headers: Self.bearer(scoped))
            #expect(try await loopWrites() == before + 1, "the event loop did not take the write: \(written.status) \(written.text)")
            Self.expect(seen, .set, .allowed, served: written.status == 201, refused: false, "fast path PUT /app/fast: \(written.status) \(written.text)")
            // A write past the scope: handed to the router, refused there.
            seen.reset()
            before = try await loopWrites()
            let refused = try await Self.putWhole(server, "/v1/\(config)/keys/db/fast", "v", headers: Self.bearer(scoped))
            #expect(try await loopWrites() == before, "the event loop took a refused write")
            Self.expect(seen, .set, .refusedByGate, served: false, refused: refused.status == 403, "fast path PUT /db/fast: \(refused.status) \(refused.text)")
            #expect(try await server.store.get(try Key("/db/fast"), in: config) == nil)
        }
    }

    /// A counter of the server's `/metrics`.
    static func counter(_ server: LiveServer, _ name: String) async throws -> Int {
        let text = try await server.get("/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return Int(line?.split(separator: " ").last ?? "") ?? -1
    }

    /// `PUT path` with `body`, the whole request in one write on a connection of its
    /// own, so the server reads it whole and the event loop may take it.
    static func putWhole(_ server: LiveServer, _ path: String, _ body: String, headers: [(String, String)]) async throws -> (status: Int, text: String) {
        let connection = try LoopbackHTTP(port: server.port)
        defer { connection.close() }
        let extra = headers.map { "\($0): \($1)\r\n" }.joined()
        let request = Data("PUT \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\(extra)Content-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
        try await BlockingCall.run { try connection.send(request) }
        var received = ""
        while true {
            if let end = received.range(of: "\r\n\r\n") {
                let head = String(received[..<end.lowerBound])
                let rest = String(received[end.upperBound...])
                let length = head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }
                if let length, rest.utf8.count >= length {
                    return (Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0, rest)
                }
            }
            let more = await connection.read(waiting: 30)
            guard !more.isEmpty else { throw DiscfgError(.unavailable, "the server did not answer PUT \(path) whole: \(received)") }
            received += more
        }
    }

    // MARK: Lambda

    @Test("Lambda: get, set and txn behind API Gateway are judged by the gate once, allowed or refused", .timeLimit(.minutes(2)))
    func lambda() async throws {
        let config = try ConfigName("face-matrix-lambda")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-face-matrix-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(path: directory.appendingPathComponent("store.db").path)
        _ = try await Self.prepare(store, config)
        let account = "arn:aws:iam::123456789012:role/"
        let access = LambdaAccess(modes: .iam, rules: [
            LambdaAccess.Rule(pattern: account + "deployer", role: .write, scopes: [try AccessScope("\(config):/app/")]),
        ])
        let function = LambdaFunction(
            setup: LambdaRuntime.Setup(store: store, ledger: MemoryDeliveryLedger(), eventBridge: nil, access: access, options: ConfigAPI.Options()),
            http: HTTPClient.shared
        )
        var logger = Logger(label: "face-matrix")
        logger.logLevel = .critical
        let seen = Pipeline.observe(config: config)
        defer { seen.end() }
        let base = "/v1/\(config)"
        let cells: [(Action.Kind, Outcome, String, String, String?)] = [
            (.get, .allowed, "GET", "\(base)/keys/app/k", nil),
            (.get, .refusedByGate, "GET", "\(base)/keys/db/x", nil),
            (.set, .allowed, "PUT", "\(base)/keys/app/new", "v"),
            (.set, .refusedByGate, "PUT", "\(base)/keys/db/new", "v"),
            (.txn, .allowed, "POST", "\(base)/txn", #"{"success": [{"op": "put", "key": "/app/t", "value": "1"}]}"#),
            (.txn, .refusedByGate, "POST", "\(base)/txn", #"{"success": [{"op": "put", "key": "/db/t", "value": "1"}]}"#),
        ]
        for (kind, outcome, method, path, body) in cells {
            seen.reset()
            let event = try GatewayEvent.httpAPI(GatewayEvent.Request(method, path, body: body.map { Data($0.utf8) }), callerARN: account + "deployer")
            let answer = try await function.handle(Invocation(requestID: UUID().uuidString, deadline: Date() + 30, event: event), logger: logger)
            let reply = try GatewayResponse(answer)
            Self.expect(
                seen, kind, outcome, served: (200..<300).contains(reply.statusCode), refused: reply.statusCode == 403,
                "Lambda \(method) \(path) (\(outcome)): \(reply.statusCode) \(reply.body.prefix(300))"
            )
        }
    }
}
