@testable import DiscfgAPI
import DiscfgCore
import DiscfgNetwork
import DiscfgService
import DiscfgTestSupport
import Foundation
import Testing

@Suite("API: the audit log has a line per request and per refusal, with who, never values or tokens")
struct AuditLogTests {
    static let value = "s3cr3t-value-\(UUID().uuidString)"
    static let message = "rotate-the-db-password-\(UUID().uuidString)"

    /// A server writing its audit log to a file of its own, and that file.
    static func start() async throws -> (LiveServer, LogSink, URL) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-audit-\(UUID().uuidString).log")
        let sink = try LogSink(appendingTo: file.path)
        let server = try await LiveServer.start(auth: .required, tokenCacheLifetime: .seconds(60)) { $0.auditLog = sink }
        return (server, sink, file)
    }

    /// The lines written so far, parsed, once `count` of them match `filter` (the event
    /// loops' lines are written within a few hundred milliseconds).
    static func lines(_ file: URL, _ sink: LogSink, atLeast count: Int, where filter: ([String: Any]) -> Bool) async throws -> [[String: Any]] {
        try await eventually("\(count) matching lines in \(file.lastPathComponent)", timeout: .seconds(5), interval: .milliseconds(100)) {
            sink.flush()
            let text = try String(contentsOf: file, encoding: .utf8)
            let matching = try text.split(separator: "\n").map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
            }.filter(filter)
            return matching.count >= count ? matching : nil
        }
    }

    @Test("a set, a get answered on the event loop, a 401 and a 403 each have a line naming who, the route, the config and key, the status and a change's revision; the file holds no value, token or message")
    func restLines() async throws {
        let (server, sink, file) = try await Self.start()
        defer { try? FileManager.default.removeItem(at: file) }
        try await withServer(server) { server in
            let (writer, writerRecord) = try TokenFormat.generate(role: .admin, configs: nil, description: "ops-admin", now: Date())
            let (reader, readerRecord) = try TokenFormat.generate(role: .read, configs: nil, description: "dashboard", now: Date())
            try await server.store.saveToken(writerRecord)
            try await server.store.saveToken(readerRecord)
            let write = ("Authorization", "Bearer \(writer)")
            let read = ("Authorization", "Bearer \(reader)")
            #expect(try await server.put("/v1/app", "", headers: [write]).status == 201)
            var revisions: [Int] = []
            for _ in 1...3 {
                let put = try await server.put("/v1/app/keys/db/password", Self.value, headers: [write, ("Discfg-Message", Self.message)])
                #expect([200, 201].contains(put.status))
                revisions.append(Int(try #require(put.envelope().revision?.rawValue)))
            }
            // The first read loads the config's view on the router; later ones are the event loop's.
            let reads = 20
            for _ in 1...reads {
                #expect(try await server.get("/v1/app/keys/db/password", headers: [read]).status == 200)
            }
            #expect(try await server.get("/v1/app/keys/db/password", headers: [("Authorization", "Bearer dcfg_000000000000_notatoken")]).status == 401)
            #expect(try await server.put("/v1/app/keys/db/password", "by-a-reader", headers: [read]).status == 403)
            let metrics = String(decoding: try await server.get("/metrics").body, as: UTF8.self)
            let viewReads = metrics.split(separator: "\n").first { $0.hasPrefix("discfg_view_reads_total") }
            #expect(viewReads.map { !$0.hasSuffix(" 0") } == true, "no read was answered on the event loop")

            let sets = try await Self.lines(file, sink, atLeast: 3) { $0["method"] as? String == "PUT" && $0["status"] as? Int != 403 && $0["key"] != nil }
            #expect(sets.count == 3)
            // The router's lines are written as answered, the event loop's within 100 ms: by revision.
            let byRevision = sets.sorted { ($0["revision"] as? Int ?? 0) < ($1["revision"] as? Int ?? 0) }
            for (line, revision) in zip(byRevision, revisions) {
                #expect(line["api"] as? String == "rest")
                #expect(line["principal"] as? String == "token:\(writerRecord.id)")
                #expect(line["route"] as? String == "/v1/{config}/keys/{key}")
                #expect(line["config"] as? String == "app" && line["key"] as? String == "/db/password")
                #expect(line["revision"] as? Int == revision)
                #expect(line["time"] as? String != nil && line["ms"] as? Double != nil)
                #expect(line["action"] as? String == "set", "the action the pipeline ran, on the router and the event loop alike")
            }
            let gets = try await Self.lines(file, sink, atLeast: reads) { $0["method"] as? String == "GET" && $0["status"] as? Int == 200 && $0["key"] != nil }
            #expect(gets.count == reads)
            #expect(gets.allSatisfy { $0["principal"] as? String == "token:\(readerRecord.id)" && $0["key"] as? String == "/db/password" && $0["revision"] == nil })
            #expect(gets.allSatisfy { $0["action"] as? String == "get" })
            let unauthenticated = try await Self.lines(file, sink, atLeast: 1) { $0["status"] as? Int == 401 }
            #expect(unauthenticated.first?["principal"] is NSNull)
            #expect(unauthenticated.first?["error"] as? String == "unauthenticated")
            #expect(unauthenticated.first?["config"] as? String == "app")
            let denied = try await Self.lines(file, sink, atLeast: 1) { $0["status"] as? Int == 403 }
            #expect(denied.first?["principal"] as? String == "token:\(readerRecord.id)")
            #expect(denied.first?["error"] as? String == "permissionDenied")
            #expect(denied.first?["method"] as? String == "PUT" && denied.first?["key"] as? String == "/db/password")
            #expect(denied.first?["revision"] == nil)
            #expect(denied.first?["action"] == nil && unauthenticated.first?["action"] == nil, "refused before they became an action")

            let text = try String(contentsOf: file, encoding: .utf8)
            for secret in [Self.value, Self.message, writer, reader, "notatoken", "by-a-reader"] {
                #expect(!text.contains(secret), "the audit log holds \(secret)")
            }
        }
    }

    @Test("a txn's line names the keys, prefixes and ranges it compared, read and changed, the first 32 of each then how many more; a refused one too")
    func transactionLines() async throws {
        let (server, sink, file) = try await Self.start()
        defer { try? FileManager.default.removeItem(at: file) }
        try await withServer(server) { server in
            let (admin, adminRecord) = try TokenFormat.generate(role: .admin, configs: nil, description: "ops", now: Date())
            let (scoped, scopedRecord) = try TokenFormat.generate(role: .write, scopes: [try AccessScope("app:/jobs/")], description: "jobs", now: Date())
            try await server.store.saveToken(adminRecord)
            try await server.store.saveToken(scopedRecord)
            let auth = ("Authorization", "Bearer \(admin)")
            #expect(try await server.put("/v1/app", "", headers: [auth]).status == 201)
            let transaction = """
                {"compare": [{"key": "/lock", "target": "version", "result": "=", "value": 0},
                             {"prefix": "/jobs/", "target": "exists", "result": "=", "value": false},
                             {"from": "/a", "to": "/c", "target": "version", "result": "=", "value": 0}],
                 "success": [{"op": "put", "key": "/lock", "value": "\(Self.value)"}, {"op": "delete", "prefix": "/tmp/"},
                             {"op": "get", "key": "/owner"}, {"op": "get", "from": "/m", "to": "/n"}],
                 "failure": [{"op": "get", "prefix": "/jobs/"}, {"op": "delete", "key": "/stale"}, {"op": "get", "key": "/owner"}],
                 "message": "\(Self.message)"}
                """
            let ran = try await server.request(.POST, "/v1/app/txn", body: Data(transaction.utf8), headers: [auth])
            #expect(ran.status == 200, "\(String(decoding: ran.body, as: UTF8.self))")
            let puts = (0..<40).map { #"{"op": "put", "key": "/bulk/\#($0)", "value": "x"}"# }.joined(separator: ",")
            #expect(try await server.request(.POST, "/v1/app/txn", body: Data(#"{"success": [\#(puts)]}"#.utf8), headers: [auth]).status == 200)
            let outside = #"{"success": [{"op": "put", "key": "/jobs/a", "value": "x"}, {"op": "put", "key": "/lock", "value": "x"}]}"#
            #expect(try await server.request(.POST, "/v1/app/txn", body: Data(outside.utf8), headers: [("Authorization", "Bearer \(scoped)")]).status == 403)

            let lines = try await Self.lines(file, sink, atLeast: 3) { $0["route"] as? String == "/v1/{config}/txn" }
            let full = try #require(lines.first { $0["status"] as? Int == 200 && $0["compared"] != nil })
            #expect(full["compared"] as? [String] == ["/lock", "/jobs/", "[/a, /c)"])
            #expect(full["read"] as? [String] == ["/owner", "[/m, /n)", "/jobs/"])
            #expect(full["changed"] as? [String] == ["/lock", "/tmp/", "/stale"])
            #expect(full["principal"] as? String == "token:\(adminRecord.id)" && full["revision"] as? Int != nil)
            let bulk = try #require(lines.first { ($0["changed"] as? [String])?.first == "/bulk/0" })
            #expect(bulk["changed"] as? [String] == (0..<32).map { "/bulk/\($0)" } + ["+8 more"])
            #expect(bulk["compared"] == nil && bulk["read"] == nil)
            let refused = try #require(lines.first { $0["status"] as? Int == 403 })
            #expect(refused["changed"] as? [String] == ["/jobs/a", "/lock"] && refused["revision"] == nil)
            #expect(refused["principal"] as? String == "token:\(scopedRecord.id)")

            let text = try String(contentsOf: file, encoding: .utf8)
            for secret in [Self.value, Self.message, admin, scoped] {
                #expect(!text.contains(secret), "the audit log holds \(secret)")
            }
        }
    }

    @Test("a line is one JSON object whatever the request's path holds")
    func escaping() {
        var record = AuditRecord(api: "rest", route: "unmatched", time: (0, 5_000_000), elapsed: .microseconds(1234))
        record.method = "GET"
        record.path = "/v1/a\"b\\c\n{\u{1}}/é"
        record.status = 404
        #expect(record.line == #"{"time":"1970-01-01T00:00:00.005Z","api":"rest","principal":null,"method":"GET","route":"unmatched","path":"/v1/a\"b\\c\n{\u0001}/é","status":404,"ms":1.23}"# + "\n")
        let parsed = try? JSONSerialization.jsonObject(with: Data(record.line.utf8)) as? [String: Any]
        #expect(parsed?["path"] as? String == record.path)
    }
}
