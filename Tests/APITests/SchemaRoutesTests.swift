import DiscfgAPI
import DiscfgClient
import DiscfgCore
import DiscfgJSON
import DiscfgTestSupport
import Foundation
import Testing

/// JSON Schemas over a live server: attached, read, listed, replaced and removed through
/// their routes, and enforced on every write of the keys they cover.
@Suite("API: JSON Schemas — their routes, and writes they refuse with 422")
struct SchemaRoutesTests {
    static let json = [("Content-Type", "application/json")]
    static let settingsSchema = #"{"type": "object", "required": ["port"], "properties": {"port": {"type": "integer", "maximum": 65535}}}"#

    static func canonical(_ text: String) throws -> String {
        try JSONSerializer.string(try JSONParser.parse(text), options: .init(sortKeys: true))
    }

    /// Config `c` with `/app/settings` = `{"port": 80}` (revision 1).
    static func fill(_ server: LiveServer) async throws {
        _ = try await server.put("/v1/c", "")
        _ = try await server.put("/v1/c/keys/app/settings", #"{"port": 80}"#, headers: Self.json)
    }

    @Test("PUT, GET, list and DELETE a key's schema: envelopes, ETags, 304, revisions, versions")
    func lifecycle() async throws {
        try await withServer(try await LiveServer.start()) { server in
            try await Self.fill(server)
            let set = try await server.put("/v1/c/schema?target=/app/settings", Self.settingsSchema, headers: [("Content-Type", "application/schema+json")])
            #expect(set.status == 201, "\(set.text)")
            let envelope = try set.envelope()
            #expect(envelope.action == "schema-set" && envelope.config == "c" && envelope.revision == Revision(2) && envelope.violations == nil)
            #expect(envelope.item?.key == "/.discfg/schema/%2Fapp%2Fsettings" && envelope.prevItem == nil)
            #expect(set.headers["ETag"].first == "\"2\"")

            let read = try await server.get("/v1/c/schema?target=/app/settings")
            #expect(read.status == 200 && read.text == Self.settingsSchema)
            #expect(read.headers["Content-Type"].first == "application/schema+json" && read.headers["ETag"].first == "\"2\"")
            #expect(try await server.get("/v1/c/schema?target=/app/settings", headers: [("If-None-Match", "\"2\"")]).status == 304)

            let replacement = #"{"type": "object", "properties": {"port": {"type": "integer", "minimum": 1}}}"#
            let replaced = try await server.put("/v1/c/schema?target=%2Fapp%2Fsettings", replacement)
            #expect(try replaced.status == 200 && (replaced.envelope().prevItem?.value) == Self.settingsSchema)
            #expect(try await server.get("/v1/c/schema?target=/app/settings").text == replacement)
            #expect(try await server.get("/v1/c/schema?target=/app/settings&revision=2").text == Self.settingsSchema)
            #expect(try await server.get("/v1/c/schema?target=/app/settings&revision=1").status == 404)

            _ = try await server.put("/v1/c/keys/app/name", "svc")
            #expect(try await server.put("/v1/c/schema?target=/app/", #"{"required": ["name"]}"#).status == 201)
            let listed = try await server.get("/v1/c/schemas")
            #expect(listed.status == 200, "\(listed.text)")
            let schemas = try listed.envelope().schemas ?? []
            #expect(try listed.envelope().action == "schemas")
            #expect(schemas.map(\.target) == ["/app/", "/app/settings"])
            #expect(schemas.map(\.revision) == [Revision(5), Revision(3)] && schemas.map(\.version) == [1, 2])
            #expect(try JSONSerializer.string(schemas[1].schema, options: .init(sortKeys: true)) == (try Self.canonical(replacement)))
            // The list writes each schema as JSON, not as a string.
            #expect(listed.text.contains(#""schema":{"properties":{"port":{"minimum":1,"type":"integer"}},"type":"object"}"#), "\(listed.text)")

            let deleted = try await server.request(.DELETE, "/v1/c/schema?target=/app/settings")
            #expect(try deleted.status == 200 && (deleted.envelope().action) == "schema-delete")
            #expect(try deleted.envelope().item == nil && deleted.envelope().prevItem?.value == replacement && deleted.envelope().revision == Revision(6))
            #expect(try await server.get("/v1/c/schema?target=/app/settings").status == 404)
            let again = try await server.request(.DELETE, "/v1/c/schema?target=/app/settings")
            #expect(try again.status == 404 && (again.envelope().error?.code) == .keyNotFound)
            #expect(try await server.get("/v1/c/schemas").envelope().schemas?.map(\.target) == ["/app/"])
            #expect(try await server.get("/v1/empty/schemas").status == 404)
        }
    }

    @Test("a write that breaks a key's schema is 422 with each violation, and changes nothing: PUT, PATCH, a value that is not JSON, a transaction, a document")
    func keySchemaRefusals() async throws {
        try await withServer(try await LiveServer.start()) { server in
            try await Self.fill(server)
            #expect(try await server.put("/v1/c/schema?target=/app/settings", Self.settingsSchema).status == 201)

            let put = try await server.put("/v1/c/keys/app/settings", #"{"port": 70000}"#, headers: Self.json)
            #expect(put.status == 422, "\(put.text)")
            let error = try #require(try put.envelope().error)
            #expect(try error.code == .schemaViolation && (put.envelope().action) == "set")
            #expect(error.violations == [SchemaViolation(key: "/app/settings", pointer: "/port", keyword: "maximum", message: error.violations?.first?.message ?? "", schema: "/app/settings")])
            #expect(error.violations?.first?.message.contains("65535") == true)
            #expect(put.text.contains(#""violations":[{"key":"/app/settings","keyword":"maximum","message":"#), "\(put.text)")

            let patched = try await server.request(.PATCH, "/v1/c/keys/app/settings", body: Data(#"{"port": null}"#.utf8), headers: [("Content-Type", "application/merge-patch+json")])
            #expect(try patched.status == 422 && (patched.envelope().error?.violations?.map(\.keyword)) == ["required"], "\(patched.text)")
            let text = try await server.put("/v1/c/keys/app/settings", "port=80", headers: [("Content-Type", "text/plain")])
            #expect(try text.status == 422 && (text.envelope().error?.violations?.first?.keyword) == "type", "\(text.text)")
            let transaction = try await server.request(.POST, "/v1/c/txn", body: Data(#"{"success": [{"op": "put", "key": "/app/settings", "value": "{\"port\": -1.5}"}]}"#.utf8))
            #expect(try transaction.status == 422 && (transaction.envelope().error?.violations?.first?.keyword) == "type", "\(transaction.text)")
            let document = try await server.put("/v1/c/keys/app?document", #"{"settings": {"port": "80"}}"#)
            #expect(try document.status == 422 && (document.envelope().error?.violations?.first?.pointer) == "/port", "\(document.text)")

            #expect(try await server.get("/v1/c/keys/app/settings?raw").text == #"{"port": 80}"#)
            #expect(try await server.get("/v1/c").envelope().configInfo?.revision == Revision(2))
            #expect(try await server.put("/v1/c/keys/app/settings", #"{"port": 443}"#, headers: Self.json).status == 200)
        }
    }

    @Test("a prefix's schema checks its keys as one document: deleting a key it requires is 422")
    func prefixSchema() async throws {
        try await withServer(try await LiveServer.start()) { server in
            try await Self.fill(server)
            _ = try await server.put("/v1/c/keys/app/name", "svc")
            let schema = #"{"type": "object", "required": ["name", "settings"], "properties": {"name": {"type": "string", "maxLength": 8}}}"#
            #expect(try await server.put("/v1/c/schema?target=/app/", schema).status == 201)

            let deleted = try await server.request(.DELETE, "/v1/c/keys/app/name")
            #expect(deleted.status == 422, "\(deleted.text)")
            let violation = try #require(try deleted.envelope().error?.violations?.first)
            #expect(violation.key == "/app/" && violation.keyword == "required" && violation.message.contains("name"), "\(deleted.text)")
            #expect(try await server.request(.DELETE, "/v1/c/keys/app/?recursive").status == 422)
            let long = try await server.put("/v1/c/keys/app/name", "much-too-long")
            #expect(try long.status == 422 && (long.envelope().error?.violations?.first?.key) == "/app/name", "\(long.text)")
            #expect(try await server.get("/v1/c/keys/app/name?raw").text == "svc")

            #expect(try await server.request(.DELETE, "/v1/c/schema?target=/app/").status == 200)
            #expect(try await server.request(.DELETE, "/v1/c/keys/app/name").status == 200)
        }
    }

    @Test("a schema that what it covers breaks is refused with 422, or attached with force and the violations listed")
    func force() async throws {
        try await withServer(try await LiveServer.start()) { server in
            try await Self.fill(server)
            let strict = #"{"type": "object", "properties": {"port": {"type": "integer", "minimum": 1024}}}"#
            let refused = try await server.put("/v1/c/schema?target=/app/settings", strict)
            #expect(try refused.status == 422 && (refused.envelope().action) == "schema-set")
            #expect(try refused.envelope().error?.violations?.map(\.pointer) == ["/port"])
            #expect(try await server.get("/v1/c/schema?target=/app/settings").status == 404)

            let forced = try await server.put("/v1/c/schema?target=/app/settings&force=true", strict)
            #expect(forced.status == 201, "\(forced.text)")
            let violations = try forced.envelope().violations ?? []
            #expect(violations.map(\.key) == ["/app/settings"] && violations.map(\.keyword) == ["minimum"])
            #expect(forced.text.contains(#""violations":[{"#))
            // The value stays as it is, but the next write must meet the schema.
            #expect(try await server.put("/v1/c/keys/app/settings", #"{"port": 81}"#, headers: Self.json).status == 422)
            #expect(try await server.put("/v1/c/keys/app/settings", #"{"port": 8080}"#, headers: Self.json).status == 200)
        }
    }

    @Test("schema routes refuse a missing or bad target, a body that is not a schema, and writes of /.discfg/ through the key routes")
    func refusals() async throws {
        try await withServer(try await LiveServer.start()) { server in
            try await Self.fill(server)
            for path in ["/v1/c/schema", "/v1/c/schema?target=a//b", "/v1/c/schema?target=/.discfg/x", "/v1/c/schema?target=/.discfg/"] {
                let reply = try await server.get(path)
                #expect(try reply.status == 400 && (reply.envelope().error?.field) == "target", "\(path): \(reply.text)")
                #expect(try await server.put(path, "{}").status == 400, "\(path)")
                #expect(try await server.request(.DELETE, path).status == 400, "\(path)")
            }
            #expect(try await server.get("/v1/c/schema?target=/app/settings").status == 404)
            #expect(try await server.get("/v1/c/schema?target=/app/settings&revision=x").status == 400)

            for body in ["{", #"{"type": 12}"#, #"{"pattern": "("}"#, "[]"] {
                let reply = try await server.put("/v1/c/schema?target=/app/settings", body)
                #expect(try reply.status == 400 && (reply.envelope().error?.field) == "schema", "\(body): \(reply.text)")
            }
            let big = try await server.put("/v1/c/schema?target=/app/settings", #"{"description": ""# + String(repeating: "x", count: Limits.maxValueBytes) + #""}"#)
            #expect(big.status == 413)
            #expect(try await server.put("/v1/c/schema?target=/app/settings&force=maybe", "{}").status == 400)

            // /.discfg/ holds schemas only, written through their routes.
            #expect(try await server.put("/v1/c/keys/.discfg/notes", "x").status == 400)
            #expect(try await server.put("/v1/c/keys/.discfg/schema/%252Fapp%252Fsettings", "{\"type\": 12}").status == 400)
            #expect(try await server.get("/v1/c/schemas").envelope().schemas == [])
        }
    }

    @Test("a schema is removed through its route, not by deleting the key it is kept at")
    func reservedDeletes() async throws {
        try await withServer(try await LiveServer.start()) { server in
            try await Self.fill(server)
            #expect(try await server.put("/v1/c/schema?target=/app/settings", "{}").status == 201)
            let deleted = try await server.request(.DELETE, "/v1/c/keys/.discfg/schema/%252Fapp%252Fsettings")
            #expect(deleted.status == 400, "\(deleted.text)")
            let prefixDeleted = try await server.request(.DELETE, "/v1/c/keys/.discfg/?recursive")
            #expect(prefixDeleted.status == 400, "\(prefixDeleted.text)")
            // Deleting every key of the config leaves its schemas.
            #expect(try await server.request(.DELETE, "/v1/c/keys?prefix=/&recursive=true").status == 200)
            #expect(try await server.get("/v1/c/schemas").envelope().schemas?.map(\.target) == ["/app/settings"])
        }
    }

    @Test("RemoteStore attaches, forces and removes schemas through the routes; a violation arrives with its list")
    func remote() async throws {
        try await withServer(try await LiveServer.start()) { server in
            try await Self.fill(server)
            let store = try RemoteStore(url: URL(string: server.baseURL)!, token: nil)
            let config = try ConfigName("c")
            let target = try SchemaTarget("/app/settings")
            let attached = try await store.setSchema(target, to: Data(Self.settingsSchema.utf8), in: config, force: false)
            #expect(attached.event.key == target.storageKey && attached.event.revision == Revision(2) && attached.violations.isEmpty)
            #expect(try await store.schemas(in: config).map(\.target) == [target])

            do {
                _ = try await store.set(try Key("/app/settings"), to: Data(#"{"port": 70000}"#.utf8), in: config, options: SetOptions(contentType: "application/json"))
                Issue.record("a value breaking its schema was written")
            } catch let error as DiscfgError {
                #expect(error.code == .schemaViolation)
                #expect(error.violations.map(\.keyword) == ["maximum"] && error.violations.map(\.key) == ["/app/settings"])
            }

            let forced = try await store.setSchema(target, to: Data(#"{"properties": {"port": {"minimum": 1024}}}"#.utf8), in: config, force: true)
            #expect(forced.violations.map(\.keyword) == ["minimum"])
            let removed = try await store.setSchema(target, to: nil, in: config, force: false)
            #expect(removed.event.kind == .delete && removed.event.prevItem != nil)
            do {
                _ = try await store.setSchema(target, to: nil, in: config, force: false)
                Issue.record("removing an absent schema was not refused")
            } catch let error as DiscfgError {
                #expect(error.code == .keyNotFound)
            }
        }
    }
}
