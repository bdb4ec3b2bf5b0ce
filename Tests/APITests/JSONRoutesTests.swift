import DiscfgAPI
import DiscfgClient
import DiscfgCore
import DiscfgJSON
import DiscfgTestSupport
import Foundation
import Testing

/// JSON in values over a live server: the part of a value a pointer names, and patches
/// applied inside the store's change.
@Suite("API: JSON values — pointer reads and patches")
struct JSONRoutesTests {
    static let json = [("Content-Type", "application/json")]
    static let merge = [("Content-Type", "application/merge-patch+json")]
    static let jsonPatch = [("Content-Type", "application/json-patch+json")]
    static let settings = #"{"db": {"host": "db1", "port": 5432}, "list": [1, 2], "a/b": {"m~n": "x"}}"#

    /// JSON text with members sorted and no spaces, to compare values whatever their order.
    static func canonical(_ text: String) throws -> String {
        try JSONSerializer.string(try JSONParser.parse(text), options: .init(sortKeys: true))
    }

    static func patch(_ server: LiveServer, _ path: String, _ body: String, _ headers: [(String, String)]) async throws -> LiveServer.Reply {
        try await server.request(.PATCH, path, body: Data(body.utf8), headers: headers)
    }

    /// The value of `key` in config `c`, as stored.
    static func stored(_ server: LiveServer, _ key: String) async throws -> String {
        try await server.get("/v1/c/keys\(key)?raw").text
    }

    /// A counter of the server's `/metrics`.
    static func metric(_ server: LiveServer, _ name: String) async throws -> Int {
        let text = try await server.get("/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return Int(line?.split(separator: " ").last ?? "") ?? -1
    }

    @Test("?path reads the part of a JSON value a pointer names: raw as JSON, or in the item's envelope; the ETag is the key's, If-None-Match gives 304, revision reads the past")
    func pointerReads() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            let set = try await server.put("/v1/c/keys/settings", Self.settings, headers: Self.json)
            let etag = try #require(set.headers["ETag"].first)

            let port = try await server.get("/v1/c/keys/settings?path=/db/port&raw")
            #expect(port.status == 200 && port.text == "5432")
            #expect(port.headers["Content-Type"].first == "application/json")
            #expect(port.headers["ETag"].first == etag)
            #expect(port.headers["X-Content-Type-Options"].first == "nosniff")
            #expect(try await server.get("/v1/c/keys/settings?path=/db/host&raw").text == #""db1""#)
            #expect(try await server.get("/v1/c/keys/settings?path=/list/1&raw").text == "2")
            #expect(try await server.get("/v1/c/keys/settings?path=/a~1b/m~0n&raw").text == #""x""#)
            #expect(try await server.get("/v1/c/keys/settings?path=%2Fa~1b%2Fm~0n&raw").text == #""x""#)
            // The empty pointer is the whole value.
            #expect(try await server.get("/v1/c/keys/settings?path=&raw").text == #"{"db":{"host":"db1","port":5432},"list":[1,2],"a/b":{"m~n":"x"}}"#)

            let part = try await server.get("/v1/c/keys/settings?path=/db")
            let item = try #require(try part.envelope().item)
            #expect(item.key == "/settings" && item.value == #"{"host":"db1","port":5432}"# && item.contentType == "application/json")
            #expect(item.modRevision == Revision(1) && item.version == 1)
            #expect(part.headers["ETag"].first == etag)
            let parsed = try JSONSerialization.jsonObject(with: try await server.get("/v1/c/keys/settings?path=/db&format=json").body) as? [String: Any]
            #expect(((parsed?["item"] as? [String: Any])?["value"] as? [String: Any])?["port"] as? Int == 5432)

            let unchanged = try await server.get("/v1/c/keys/settings?path=/db/port", headers: [("If-None-Match", etag)])
            #expect(unchanged.status == 304 && unchanged.body.isEmpty && unchanged.headers["ETag"].first == etag)

            _ = try await server.put("/v1/c/keys/settings", #"{"db": {"port": 6000}}"#, headers: Self.json)
            #expect(try await server.get("/v1/c/keys/settings?path=/db/port", headers: [("If-None-Match", etag)]).status == 200)
            #expect(try await server.get("/v1/c/keys/settings?path=/db/port&raw").text == "6000")
            #expect(try await server.get("/v1/c/keys/settings?path=/db/port&raw&revision=1").text == "5432")
            let old = try await server.get("/v1/c/keys/settings?path=/db/host&revision=1")
            #expect(try old.envelope().item?.value == #""db1""# && old.envelope().revision == Revision(1))
            #expect(old.headers["ETag"].first == etag)
            #expect(try await server.get("/v1/c/keys/settings?path=/db/host&revision=2").status == 404)
        }
    }

    @Test("?path that names nothing is 404 pathNotFound; a value that is not JSON, a bad pointer or a listing is 400; a 2,000-token pointer is answered")
    func pointerRefusals() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            _ = try await server.put("/v1/c/keys/settings", Self.settings, headers: Self.json)
            _ = try await server.put("/v1/c/keys/word", "db1", headers: [("Content-Type", "text/plain")])

            for missing in ["/db/user", "/list/2", "/list/-", "/db/port/x", "/a~1b/m~0x"] {
                let reply = try await server.get("/v1/c/keys/settings?path=\(missing)")
                #expect(reply.status == 404, "\(missing)")
                let error = try reply.envelope().error
                #expect(error?.code == .pathNotFound && error?.field == "path" && error?.message.contains(missing) == true, "\(missing): \(reply.text)")
            }
            #expect(try await server.get("/v1/c/keys/absent?path=/a").envelope().error?.code == .keyNotFound)

            let notJSON = try await server.get("/v1/c/keys/word?path=/a")
            #expect(notJSON.status == 400)
            #expect(try notJSON.envelope().error?.code == .invalidArgument && notJSON.envelope().error?.field == "path")

            for bad in ["/a~2", "/db~", "db/port", "/~x/y"] {
                let reply = try await server.get("/v1/c/keys/settings?path=\(bad)")
                #expect(reply.status == 400, "\(bad)")
                #expect(try reply.envelope().error?.field == "path", "\(bad): \(reply.text)")
            }
            #expect(try await server.get("/v1/c/keys/?path=/a").status == 400)
            #expect(try await server.get("/v1/c/keys/settings?recursive&path=/a").status == 400)

            // A value 200 levels deep read to its bottom, and a pointer of 2,000 tokens.
            let depth = 200
            let nested = String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
            #expect(try await server.put("/v1/c/keys/nested", nested, headers: Self.json).status == 201)
            #expect(try await server.get("/v1/c/keys/nested?path=\(String(repeating: "/a", count: depth))&raw").text == "1")
            let long = try await server.get("/v1/c/keys/nested?path=\(String(repeating: "/a", count: 2000))")
            #expect(try long.status == 404 && (long.envelope().error?.code) == .pathNotFound)
        }
    }

    @Test("the event loop's reads and writes leave ?path and ?document to the router")
    func eventLoopLeavesQueries() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            _ = try await server.put("/v1/c/keys/svc", #"{"port": 1}"#, headers: Self.json)
            // Read until the view answers plain reads of the key.
            var viewReads = try await Self.metric(server, "discfg_view_reads_total")
            for _ in 0..<50 where viewReads <= 0 {
                _ = try await server.get("/v1/c/keys/svc")
                viewReads = try await Self.metric(server, "discfg_view_reads_total")
            }
            #expect(viewReads > 0)

            #expect(try await server.get("/v1/c/keys/svc?path=/port&raw").text == "1")
            let document = try await server.get("/v1/c/keys/svc?document")
            #expect(document.status == 200 && document.text == "{}\n" && document.headers["X-Discfg-Revision"].first == "1")
            #expect(try await Self.metric(server, "discfg_view_reads_total") == viewReads)
            _ = try await server.get("/v1/c/keys/svc")
            #expect(try await Self.metric(server, "discfg_view_reads_total") == viewReads + 1)

            // A PUT with ?document is a document, never a key's value.
            let written = try await server.put("/v1/c/keys/svc2?document", #"{"port": 2}"#)
            #expect(try written.status == 200 && (written.envelope().action) == "document")
            #expect(try await Self.stored(server, "/svc2/port") == "2")
            #expect(try await server.get("/v1/c/keys/svc2").status == 404)
        }
    }

    @Test("a merge patch changes the members it names, keeps the content type, answers as a PUT with action patch")
    func mergePatch() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            let original = #"{"db": {"host": "db1", "port": 5432}, "debug": true}"#
            _ = try await server.put("/v1/c/keys/settings", original, headers: [("Content-Type", "application/vnd.app+json")])
            let reply = try await Self.patch(server, "/v1/c/keys/settings", #"{"db": {"port": 6000, "user": "app"}, "debug": null}"#, Self.merge)
            #expect(reply.status == 200)
            #expect(reply.headers["ETag"].first == "\"2\"")
            let envelope = try reply.envelope()
            #expect(envelope.action == "patch" && envelope.config == "c" && envelope.revision == Revision(2))
            let item = try #require(envelope.item)
            #expect(try Self.canonical(item.value) == (try Self.canonical(#"{"db": {"host": "db1", "port": 6000, "user": "app"}}"#)))
            #expect(item.contentType == "application/vnd.app+json" && item.version == 2 && item.createRevision == Revision(1))
            #expect(envelope.prevItem?.value == original)
            #expect(try Self.canonical(try await Self.stored(server, "/settings")) == (try Self.canonical(item.value)))

            // A patch that is not an object replaces the value; charset parameters are fine.
            let replaced = try await Self.patch(server, "/v1/c/keys/settings", "[1, 2]", [("Content-Type", "Application/Merge-Patch+JSON; charset=utf-8")])
            #expect(try replaced.status == 200 && (replaced.envelope().item?.value) == "[1,2]")
        }
    }

    @Test("a JSON patch applies every operation in order; a failing test, a missing path or a value that is not JSON is 409 and changes nothing")
    func jsonPatch() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            _ = try await server.put("/v1/c/keys/doc", #"{"a": 1, "b": {"c": [1, 2, 3]}, "d": "x"}"#, headers: Self.json)
            let operations = """
                [{"op": "test", "path": "/a", "value": 1},
                 {"op": "add", "path": "/b/c/-", "value": 4},
                 {"op": "remove", "path": "/d"},
                 {"op": "replace", "path": "/a", "value": 10},
                 {"op": "move", "from": "/b/c/0", "path": "/first"},
                 {"op": "copy", "from": "/b", "path": "/copy"},
                 {"op": "test", "path": "/copy/c", "value": [2, 3, 4]}]
                """
            let reply = try await Self.patch(server, "/v1/c/keys/doc", operations, Self.jsonPatch)
            #expect(reply.status == 200, "\(reply.text)")
            let expected = try Self.canonical(#"{"a": 10, "b": {"c": [2, 3, 4]}, "first": 1, "copy": {"c": [2, 3, 4]}}"#)
            #expect(try Self.canonical(try reply.envelope().item?.value ?? "") == expected)
            #expect(try Self.canonical(try await Self.stored(server, "/doc")) == expected)

            let failures = [
                #"[{"op": "replace", "path": "/a", "value": 0}, {"op": "test", "path": "/a", "value": 11}]"#,
                #"[{"op": "remove", "path": "/nothing"}]"#,
                #"[{"op": "add", "path": "/no/such/parent", "value": 1}]"#,
                #"[{"op": "move", "from": "/missing", "path": "/x"}]"#,
                #"[{"op": "copy", "from": "/b/c/9", "path": "/x"}]"#,
                #"[{"op": "replace", "path": "/zz", "value": 1}]"#,
            ]
            for failure in failures {
                let refused = try await Self.patch(server, "/v1/c/keys/doc", failure, Self.jsonPatch)
                #expect(refused.status == 409, "\(failure)")
                #expect(try refused.envelope().error?.code == .patchFailed, "\(failure): \(refused.text)")
                #expect(try refused.envelope().item?.modRevision == Revision(2))
            }
            #expect(try Self.canonical(try await Self.stored(server, "/doc")) == expected)
            #expect(try await server.get("/v1/c").envelope().configInfo?.revision == Revision(2))

            // Values that are not JSON: by content type, or by their text.
            _ = try await server.put("/v1/c/keys/text", "hello", headers: [("Content-Type", "text/plain")])
            _ = try await server.put("/v1/c/keys/untyped", "not json")
            for key in ["text", "untyped"] {
                let refused = try await Self.patch(server, "/v1/c/keys/\(key)", #"{"a": 1}"#, Self.merge)
                #expect(try refused.status == 409 && (refused.envelope().error?.code) == .patchFailed, "\(key): \(refused.text)")
            }
            #expect(try await Self.stored(server, "/text") == "hello")
        }
    }

    @Test("PATCH takes PUT's conditions (412 with the current item), refuses other media types (415), absent keys (404) and bodies that are not patches (400)")
    func patchRefusals() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            _ = try await server.put("/v1/c/keys/k", #"{"n": 1}"#, headers: Self.json)
            let merge = #"{"n": 2}"#

            let stale = try await Self.patch(server, "/v1/c/keys/k", merge, Self.merge + [("If-Match", "\"7\"")])
            #expect(stale.status == 412 && stale.headers["ETag"].first == "\"1\"")
            #expect(try stale.envelope().error?.code == .conditionFailed && stale.envelope().item?.value == #"{"n": 1}"#)
            #expect(try await Self.patch(server, "/v1/c/keys/k?prevVersion=3", merge, Self.merge).status == 412)
            #expect(try await Self.patch(server, "/v1/c/keys/k", merge, Self.merge + [("If-None-Match", "*")]).status == 412)
            #expect(try await Self.patch(server, "/v1/c/keys/k?prevExist=false", merge, Self.merge).status == 412)
            #expect(try await Self.stored(server, "/k") == #"{"n": 1}"#)
            #expect(try await Self.patch(server, "/v1/c/keys/k?prevVersion=1", merge, Self.merge + [("If-Match", "\"1\"")]).status == 200)
            #expect(try await Self.stored(server, "/k") == #"{"n":2}"#)

            for type in ["application/json", "text/plain", "application/x-www-form-urlencoded", "application/json-patch"] {
                let refused = try await Self.patch(server, "/v1/c/keys/k", merge, [("Content-Type", type)])
                #expect(refused.status == 415, "\(type)")
                #expect(try refused.envelope().error?.code == .unsupportedMediaType && refused.envelope().error?.field == "Content-Type")
                #expect(try refused.envelope().action == "patch")
            }
            #expect(try await Self.patch(server, "/v1/c/keys/k", merge, []).status == 415)

            let absent = try await Self.patch(server, "/v1/c/keys/absent", merge, Self.merge)
            #expect(try absent.status == 404 && (absent.envelope().error?.code) == .keyNotFound)
            #expect(try await Self.patch(server, "/v1/nope/keys/k", merge, Self.merge).status == 404)

            for (body, headers) in [("{", Self.merge), (#"{"op": "add"}"#, Self.jsonPatch), (#"[{"op": "jump", "path": "/n"}]"#, Self.jsonPatch), (#"[{"op": "add", "path": "n", "value": 1}]"#, Self.jsonPatch)] {
                let refused = try await Self.patch(server, "/v1/c/keys/k", body, headers)
                #expect(refused.status == 400, "\(body)")
                #expect(try refused.envelope().error?.field == "patch", "\(body): \(refused.text)")
            }
            #expect(try await Self.stored(server, "/k") == #"{"n":2}"#)
        }
    }

    @Test("hostile patches: a 10 MB body and a JSON patch of 100,000 operations get 413; 10,000 operations within the body's limit get 400 (at most 1,000); 1,000 apply")
    func hostilePatches() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            _ = try await server.put("/v1/c/keys/k", #"{"n": 1}"#, headers: Self.json)
            let huge = #"{"n": ""# + String(repeating: "x", count: 10 * 1024 * 1024) + #""}"#
            let big = try await Self.patch(server, "/v1/c/keys/k", huge, Self.merge)
            #expect(try big.status == 413 && (big.envelope().error?.code) == .tooLarge)

            let test = #"{"op": "test", "path": "/n", "value": 1}"#
            let many = "[" + Array(repeating: test, count: 100_000).joined(separator: ",") + "]"
            let tooMany = try await Self.patch(server, "/v1/c/keys/k", many, Self.jsonPatch)
            #expect(try tooMany.status == 413 && (tooMany.envelope().error?.code) == .tooLarge)

            let longer = "[" + Array(repeating: test, count: 10_000).joined(separator: ",") + #", {"op": "replace", "path": "/n", "value": 2}]"#
            #expect(longer.utf8.count <= Limits.maxPatchBytes)
            let refused = try await Self.patch(server, "/v1/c/keys/k", longer, Self.jsonPatch)
            #expect(try refused.status == 400 && (refused.envelope().error?.code) == .invalidArgument, "\(refused.text.prefix(300))")

            let within = "[" + Array(repeating: test, count: Limits.maxPatchOperations - 1).joined(separator: ",") + #", {"op": "replace", "path": "/n", "value": 2}]"#
            let applied = try await Self.patch(server, "/v1/c/keys/k", within, Self.jsonPatch)
            #expect(applied.status == 200, "\(applied.text.prefix(300))")
            #expect(try await Self.stored(server, "/k") == #"{"n":2}"#)
        }
    }

    @Test("two clients patching different members of one value at once lose neither's changes")
    func concurrentPatches() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            _ = try await server.put("/v1/c/keys/shared", "{}", headers: Self.json)
            let perClient = 25
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in ["a", "b"] {
                    group.addTask {
                        for index in 0..<perClient {
                            let reply = try await Self.patch(server, "/v1/c/keys/shared", #"{"\#(client)\#(index)": \#(index)}"#, Self.merge)
                            #expect(reply.status == 200, "\(reply.text)")
                        }
                    }
                }
                try await group.waitForAll()
            }
            let final = try JSONParser.parse(try await Self.stored(server, "/shared"))
            guard case .object(let members) = final else { Issue.record("not an object: \(final)"); return }
            #expect(members.count == 2 * perClient)
            for client in ["a", "b"] {
                for index in 0..<perClient { #expect(members["\(client)\(index)"] == .number(JSONNumber(String(index))!), "\(client)\(index)") }
            }
            #expect(try await server.get("/v1/c/keys/shared").envelope().item?.version == UInt64(2 * perClient + 1))
        }
    }

    @Test("RemoteStore patches through the route: merge and JSON patches, its conditions, and the server's refusals as errors")
    func remotePatch() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            _ = try await server.put("/v1/c/keys/k", #"{"n": 1, "tags": ["a"]}"#, headers: Self.json)
            let store = try RemoteStore(url: URL(string: server.baseURL)!, token: nil)
            let config = try ConfigName("c")
            let key = try Key("/k")

            let merged = try await store.patch(key, .merge(try JSONParser.parse(#"{"n": 2}"#)), in: config, conditions: [.modRevision(Revision(1))])
            #expect(merged.kind == .put && merged.revision == Revision(2) && merged.prevItem?.modRevision == Revision(1))
            #expect(merged.item.map { String(decoding: $0.value, as: UTF8.self) } == #"{"n":2,"tags":["a"]}"#)
            #expect(merged.item?.contentType == "application/json")

            let added = try await store.patch(key, try ValuePatch(jsonPatch: try JSONParser.parse(#"[{"op": "add", "path": "/tags/-", "value": "b"}]"#)), in: config, conditions: [.version(2)])
            #expect(added.item.map { String(decoding: $0.value, as: UTF8.self) } == #"{"n":2,"tags":["a","b"]}"#)

            do {
                _ = try await store.patch(key, .merge(try JSONParser.parse(#"{"n": 9}"#)), in: config, conditions: [.modRevision(Revision(1))])
                Issue.record("a stale condition was not refused")
            } catch let error as DiscfgError {
                #expect(error.code == .conditionFailed && error.currentItem?.modRevision == Revision(3))
            }
            do {
                _ = try await store.patch(key, try ValuePatch(jsonPatch: try JSONParser.parse(#"[{"op": "test", "path": "/n", "value": 9}]"#)), in: config, conditions: [])
                Issue.record("a failing test was not refused")
            } catch let error as DiscfgError {
                #expect(error.code == .patchFailed)
            }
            do {
                _ = try await store.patch(try Key("/absent"), .merge(.object(JSONObject())), in: config, conditions: [])
                Issue.record("an absent key was not refused")
            } catch let error as DiscfgError {
                #expect(error.code == .keyNotFound)
            }
            #expect(try await store.get(key, in: config)?.modRevision == Revision(3))
        }
    }
}
