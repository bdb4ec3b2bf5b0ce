import DiscfgClient
import DiscfgCore
import DiscfgTestSupport
import Foundation
import NIOHTTP1
import Testing

/// `POST /v1/{config}/txn` on a live `serve`: the envelope, both branches, reads of its
/// writes right after, the remote store's rebuilt result, and 4xx (never 5xx) for every
/// malformed body.
@Suite("API: transactions (POST /v1/{config}/txn)")
struct TransactionRouteTests {
    private func txn(_ server: LiveServer, _ config: String, _ body: String) async throws -> LiveServer.Reply {
        try await server.request(.POST, "/v1/\(config)/txn", body: Data(body.utf8), headers: [("Content-Type", "application/json")])
    }

    static let lock = #"""
    {"compare": [{"key": "/lock", "target": "version", "result": "=", "value": 0}],
     "success": [{"op": "put", "key": "/lock", "value": "me", "ttl": 60}, {"op": "put", "key": "/owner", "value": "me"}, {"op": "get", "prefix": "/"}],
     "failure": [{"op": "get", "key": "/lock"}]}
    """#

    @Test("a lock: success writes both keys at one revision; the same again fails and runs the failure branch")
    func lock() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            _ = try await server.put("/v1/c/keys/owner", "nobody")

            let first = try await txn(server, "c", Self.lock)
            #expect(first.status == 200, "\(first.text)")
            let won = try first.envelope()
            #expect(won.action == "txn")
            #expect(won.config == "c")
            #expect(won.succeeded == true)
            #expect(won.revision == Revision(2))
            #expect(won.at != nil)
            let responses = try #require(won.responses)
            #expect(responses.map(\.op) == ["put", "put", "get"])
            #expect(responses[0].item?.key == "/lock")
            #expect(responses[0].item?.version == 1)
            #expect(responses[0].item?.modRevision == Revision(2))
            #expect(responses[0].item?.expiresAt != nil)
            #expect(responses[0].prevItem == nil)
            #expect(responses[1].item?.version == 2)
            #expect(responses[1].prevItem?.value == "nobody")
            #expect(responses[2].items?.map(\.key) == ["/lock", "/owner"])
            #expect(responses[2].items?.map(\.value) == ["me", "me"])
            #expect(first.text.hasSuffix("\n"))

            let second = try await txn(server, "c", Self.lock)
            #expect(second.status == 200, "\(second.text)")
            let lost = try second.envelope()
            #expect(lost.succeeded == false)
            #expect(lost.revision == Revision(2))
            #expect(lost.at == nil)
            #expect(lost.responses?.map(\.op) == ["get"])
            #expect(lost.responses?.first?.items?.first?.value == "me")

            let history = try await server.get("/v1/c/history/owner").envelope()
            #expect(history.events?.map(\.revision) == [Revision(2), Revision(1)])
        }
    }

    @Test("deletes answer with what they removed; a transaction that changes nothing leaves the revision; {} is an empty success")
    func deletes() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            for key in ["tmp/a", "tmp/b", "keep"] { _ = try await server.put("/v1/c/keys/\(key)", "v") }
            let reply = try await txn(server, "c", #"""
            {"success": [{"op": "delete", "prefix": "/tmp/"}, {"op": "delete", "key": "/absent"}, {"op": "put", "key": "/moved", "value": "v", "contentType": "text/plain"}]}
            """#)
            #expect(reply.status == 200, "\(reply.text)")
            let envelope = try reply.envelope()
            #expect(envelope.revision == Revision(4))
            #expect(envelope.responses?[0].prevItems?.map(\.key) == ["/tmp/a", "/tmp/b"])
            #expect(envelope.responses?[1].prevItems == [])
            #expect(envelope.responses?[2].item?.contentType == "text/plain")
            #expect(try await server.get("/v1/c/keys?recursive").envelope().items?.map(\.key) == ["/keep", "/moved"])

            let unchanged = try await txn(server, "c", #"{"success": [{"op": "delete", "key": "/absent"}, {"op": "get", "key": "/absent"}]}"#)
            #expect(try unchanged.envelope().revision == Revision(4))
            #expect(try unchanged.envelope().responses?.map { $0.prevItems ?? $0.items ?? [] } == [[], []])
            let empty = try await txn(server, "c", "{}")
            #expect(empty.status == 200, "\(empty.text)")
            #expect(try empty.envelope().succeeded == true)
            #expect(try empty.envelope().responses == [])
        }
    }

    @Test("read your writes: a key read right after a transaction's put sees it, from the server's views")
    func readYourWrites() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/app", "")
            _ = try await server.put("/v1/app/keys/counter", "0")
            // Loaded into the view, which answers every read below.
            for _ in 0..<3 { _ = try await server.get("/v1/app/keys/counter") }
            let viewReads = try await counter(server, "discfg_view_reads_total")
            for round in 1...100 {
                let body = #"{"compare": [{"key": "/counter", "target": "value", "result": "=", "value": "\#(round - 1)"}], "success": [{"op": "put", "key": "/counter", "value": "\#(round)"}]}"#
                #expect(try await txn(server, "app", body).envelope().succeeded == true)
                #expect(try await server.get("/v1/app/keys/counter").envelope().item?.value == "\(round)")
            }
            #expect(try await counter(server, "discfg_view_reads_total") > viewReads)
            // Every key of a transaction that writes many, including its last.
            let keys = (0..<20).map { "/many/\($0)" }
            for key in keys { _ = try await server.put("/v1/app/keys\(key)", "0") }
            for key in keys { _ = try await server.get("/v1/app/keys\(key)") }
            for round in 1...50 {
                let puts = keys.map { #"{"op": "put", "key": "\#($0)", "value": "\#(round)"}"# }.joined(separator: ", ")
                #expect(try await txn(server, "app", #"{"success": [\#(puts)]}"#).envelope().succeeded == true)
                for key in keys.reversed() {
                    let value = try await server.get("/v1/app/keys\(key)").envelope().item?.value
                    #expect(value == "\(round)", "\(key) after round \(round)")
                    if value != "\(round)" { return }
                }
            }
            _ = try await txn(server, "app", #"{"success": [{"op": "delete", "key": "/counter"}]}"#)
            #expect(try await server.get("/v1/app/keys/counter").status == 404)
        }
    }

    private func counter(_ server: LiveServer, _ name: String) async throws -> Int {
        let text = try await server.get("/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return Int(line?.split(separator: " ").last ?? "") ?? -1
    }

    @Test("the remote store's result is the server store's own: the same events, revision and reads")
    func remoteStore() async throws {
        try await withServer(try await LiveServer.start()) { server in
            let remote = try RemoteStore(url: URL(string: server.baseURL)!, token: nil)
            let config = try ConfigName("c")
            _ = try await remote.createConfig(config, settings: ConfigSettings())
            _ = try await remote.set(try Key("/src"), to: Data([0, 1, 0xFF]), in: config, options: SetOptions(contentType: "application/octet-stream"))
            _ = try await remote.set(try Key("/tmp/x"), to: Data("x".utf8), in: config, options: SetOptions())
            let move = Transaction(
                compares: [
                    Comparison(.key(try Key("/src")), .equal, .value(Data([0, 1, 0xFF]))), Comparison(.key(try Key("/dst")), .equal, .exists(false)),
                    Comparison(.prefix(try KeyPrefix("/tmp/")), .less, .modRevision(Revision(100))),
                ],
                success: [
                    .put(try Key("/dst"), Data([0, 1, 0xFF]), ttlSeconds: 300, contentType: "application/octet-stream"), .delete(try Key("/src")),
                    .deletePrefix(try KeyPrefix("/tmp/")), .get(try Key("/dst")), .getPrefix(try KeyPrefix("/")),
                ]
            )
            let result = try await remote.transact(move, in: config)
            #expect(result.succeeded)
            #expect(result.revision == Revision(3))
            let stored = try await server.store.events(in: config, scope: .prefix(try KeyPrefix("/")), from: Revision(3), limit: 100, maxBytes: Limits.maxPageBytes)
            #expect(result.events == stored.events)
            #expect(result.events.map(\.key.path) == ["/dst", "/src", "/tmp/x"])
            let dst = try #require(try await server.store.get(try Key("/dst"), in: config, atRevision: nil))
            #expect(result.responses == [
                .put(stored.events[0]), .delete([stored.events[1]]), .delete([stored.events[2]]), .get([dst]), .get([dst]),
            ])

            let failed = try await remote.transact(move, in: config)
            #expect(!failed.succeeded)
            #expect(failed.revision == Revision(3))
            #expect(failed.responses.isEmpty)
            #expect(failed.events.isEmpty)

            await #expect(throws: DiscfgError.self) { try await remote.transact(Transaction(), in: try ConfigName("missing")) }
        }
    }

    struct BadBody: Sendable, CustomTestStringConvertible {
        var body: String
        var status = 400
        var field: String?
        var testDescription: String { String(body.prefix(80)) }
    }

    static let badBodies: [BadBody] = [
        BadBody(body: "", field: "transaction"),
        BadBody(body: "{not json", field: "transaction"),
        BadBody(body: "[]", field: "transaction"),
        BadBody(body: "null", field: "transaction"),
        BadBody(body: String(repeating: "[", count: 100_000), field: "transaction"),
        BadBody(body: #"{"compare": 5}"#, field: "compare"),
        BadBody(body: #"{"success": [{"key": "/a"}]}"#, field: "success[0].op"),
        BadBody(body: #"{"success": [{"op": "copy", "key": "/a"}]}"#, field: "success[0].op"),
        BadBody(body: #"{"success": [{"op": "put", "key": "/a"}]}"#, field: "success[0].value"),
        BadBody(body: #"{"success": [{"op": "put", "prefix": "/a/", "value": "x"}]}"#, field: "success[0]"),
        BadBody(body: #"{"failure": [{"op": "get", "key": "/a", "prefix": "/a/"}]}"#, field: "failure[0]"),
        BadBody(body: #"{"failure": [{"op": "delete"}]}"#, field: "failure[0]"),
        BadBody(body: #"{"success": [{"op": "put", "key": "a//b", "value": "x"}]}"#, field: "success[0].key"),
        BadBody(body: #"{"success": [{"op": "get", "prefix": "no/../"}]}"#, field: "success[0].prefix"),
        BadBody(body: #"{"success": [{"op": "put", "key": "/a", "value": "x", "ttl": 0}]}"#, field: "success[0].ttl"),
        BadBody(body: #"{"success": [{"op": "put", "key": "/a", "value": "x", "ttl": 315360001}]}"#, field: "success[0].ttl"),
        BadBody(body: #"{"success": [{"op": "put", "key": "/a", "value": "x", "ttl": 1.5}]}"#, field: "success[0].ttl"),
        BadBody(body: #"{"success": [{"op": "put", "key": "/a", "value": "x", "ttl": "30s"}]}"#, field: "success[0].ttl"),
        BadBody(body: #"{"success": [{"op": "put", "key": "/a", "value": "x", "ttl": 99999999999999999999}]}"#, field: "success[0].ttl"),
        BadBody(body: #"{"compares": [{"key": "/a", "target": "exists", "result": "=", "value": true}], "success": []}"#, field: "compares"),
        BadBody(body: #"{"success": [{"op": "put", "key": "/a", "value": "x", "tll": 5}]}"#, field: "success[0].tll"),
        BadBody(body: #"{"success": [{"op": "get", "key": "/a", "value": "x"}]}"#, field: "success[0].value"),
        BadBody(body: #"{"success": [{"op": "delete", "prefix": "/a/", "ttl": 5}]}"#, field: "success[0].ttl"),
        BadBody(body: #"{"success": [{"op": "put", "key": "/a", "value": "x", "contentType": null}]}"#, field: "success[0].contentType"),
        BadBody(body: #"{"success": null}"#, field: "success"),
        BadBody(body: #"{"compare": [{"key": "/a", "target": "version", "result": "=", "value": 1, "encoding": "base64"}]}"#, field: "compare[0].encoding"),
        BadBody(body: #"{"compare": [{"key": "/a", "target": "version", "result": "=", "value": 1.5}]}"#, field: "compare[0].value"),
        BadBody(body: #"{"success": [{"op": "get", "to": "/b"}]}"#, field: "success[0].to"),
        BadBody(body: #"{"success": [{"op": "put", "from": "/a", "value": "x"}]}"#, field: "success[0]"),
        BadBody(body: #"{"success": [{"op": "delete", "key": "/a", "from": "/a"}]}"#, field: "success[0]"),
        BadBody(body: #"{"success": [{"op": "get", "from": "a"}]}"#, field: "success[0].from"),
        BadBody(body: #"{"success": [{"op": "put", "key": "/b", "value": "x"}, {"op": "delete", "from": "/a", "to": "/c"}]}"#, field: "success"),
        BadBody(body: #"{"success": [{"op": "put", "key": "/a", "value": "x", "contentType": "not a type"}]}"#, field: "success[0].contentType"),
        BadBody(body: #"{"success": [{"op": "put", "key": "/a", "value": "!!", "encoding": "base64"}]}"#, field: "success[0].value"),
        BadBody(body: #"{"success": [{"op": "put", "key": "/a", "value": "x", "encoding": "rot13"}]}"#, field: "success[0].encoding"),
        BadBody(body: #"{"success": [{"op": "put", "key": "/a", "value": 5}]}"#, field: "success[0].value"),
        BadBody(body: #"{"success": [{"op": "put", "key": "/a", "value": "x"}, {"op": "put", "key": "/a", "value": "y"}]}"#, field: "success"),
        BadBody(body: #"{"failure": [{"op": "put", "key": "/a/b", "value": "x"}, {"op": "delete", "prefix": "/a/"}]}"#, field: "failure"),
        BadBody(body: #"{"compare": [{"key": "/a", "target": "size", "result": "=", "value": 1}]}"#, field: "compare[0].target"),
        BadBody(body: #"{"compare": [{"key": "/a", "target": "version", "result": "~", "value": 1}]}"#, field: "compare[0].result"),
        BadBody(body: #"{"compare": [{"key": "/a", "target": "version", "result": "=", "value": "1"}]}"#, field: "compare[0].value"),
        BadBody(body: #"{"compare": [{"key": "/a", "target": "version", "result": "=", "value": -1}]}"#, field: "compare[0].value"),
        BadBody(body: #"{"compare": [{"key": "/a", "target": "modRevision", "result": "=", "value": 18446744073709551615}]}"#, field: "compare[0].value"),
        BadBody(body: #"{"compare": [{"key": "/a", "target": "value", "result": "=", "value": true}]}"#, field: "compare[0].value"),
        BadBody(body: #"{"compare": [{"key": "/a", "target": "exists", "result": "<", "value": true}]}"#, field: "compare[0]"),
        BadBody(body: #"{"compare": [{"key": "/a", "prefix": "/a/", "target": "exists", "result": "=", "value": true}]}"#, field: "compare[0]"),
        BadBody(body: #"{"compare": [{"target": "exists", "result": "=", "value": true}]}"#, field: "compare[0]"),
        BadBody(body: #"{"compare": [{"key": "/a", "target": "exists", "result": "="}]}"#, field: "compare[0].value"),
        BadBody(body: "{\"success\": [" + Array(repeating: #"{"op": "get", "key": "/a"}"#, count: 129).joined(separator: ",") + "]}", field: "success"),
        BadBody(body: #"{"success": [{"op": "put", "key": "/a", "value": "\#(String(repeating: "x", count: Limits.maxValueBytes + 1))"}]}"#, status: 413, field: "success[0].value"),
    ]

    @Test("a malformed transaction is a 400 naming the field, and changes nothing", arguments: badBodies)
    func badBody(_ bad: BadBody) async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            _ = try await server.put("/v1/c/keys/a", "kept")
            let reply = try await txn(server, "c", bad.body)
            #expect(reply.status == bad.status, "\(reply.text)")
            let envelope = try reply.envelope()
            #expect(envelope.action == "txn")
            #expect(envelope.error?.code == (bad.status == 413 ? .tooLarge : .invalidArgument))
            #expect(envelope.error?.field == bad.field, "\(envelope.error?.message ?? "")")
            #expect(try await server.get("/v1/c").envelope().revision == Revision(1))
        }
    }

    @Test("a missing config is 404, a body over the import bound 413, and a transaction over the change limit 413 with nothing written")
    func refusals() async throws {
        try await withServer(try await LiveServer.start()) { server in
            #expect(try await txn(server, "missing", "{}").status == 404)
            _ = try await server.put("/v1/c", "")
            let huge = try await server.request(.POST, "/v1/c/txn", body: Data(count: Limits.maxSnapshotBytes + 1))
            #expect(huge.status == 413)
            #expect(try huge.envelope().error?.field == "body")
            var snapshot: [String: String] = [:]
            for index in 0...Limits.maxTransactionChanges { snapshot[String(format: "/many/%06d", index)] = "v" }
            let imported = try await server.request(.POST, "/v1/c/import", body: try JSONEncoder().encode(snapshot))
            #expect(imported.status == 200, "\(imported.text)")
            let revision = try await server.get("/v1/c").envelope().revision
            let tooMany = try await txn(server, "c", #"{"success": [{"op": "delete", "prefix": "/many/"}]}"#)
            #expect(tooMany.status == 413, "\(tooMany.text)")
            #expect(try tooMany.envelope().error?.code == .tooLarge)
            #expect(try await server.get("/v1/c").envelope().revision == revision)
        }
    }
}
