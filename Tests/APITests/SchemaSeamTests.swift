import DiscfgAPI
import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// Where schemas meet the rest of a config: keys that go by themselves (a TTL), prefix
/// documents too large to check on every write, and callers that reach only part of the
/// config.
@Suite("API: schemas against TTLs, large documents and narrow callers")
struct SchemaSeamTests {
    static let json = [("Content-Type", "application/json")]

    @Test("a TTL on a key a prefix schema requires is 422 naming the key and the prefix, and changes nothing; without the TTL, or on a key no schema requires, it is written")
    func ttlOnRequiredKey() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            _ = try await server.put("/v1/c/keys/app/port", "80")
            let schema = #"{"type": "object", "required": ["app"], "properties": {"app": {"required": ["port"]}}}"#
            #expect(try await server.put("/v1/c/schema?target=/", schema).status == 201)
            let before = try await server.get("/v1/c").envelope().configInfo?.revision

            let refused = try await server.put("/v1/c/keys/app/port?ttl=1", "81")
            #expect(refused.status == 422, "\(refused.text)")
            let error = try #require(try refused.envelope().error)
            #expect(error.code == .schemaViolation)
            #expect(error.violations?.map(\.key) == ["/app/port"] && error.violations?.map(\.keyword) == ["required"], "\(refused.text)")
            #expect(
                error.message.hasPrefix("schema violation, nothing was changed: /app/port: the schema on / requires it, and a TTL or an etcd lease would remove it: without it, /:"),
                "\(error.message)"
            )
            let kept = try #require(try await server.get("/v1/c/keys/app/port").envelope().item)
            #expect(kept.value == "80" && kept.expiresAt == nil)
            #expect(try await server.get("/v1/c").envelope().configInfo?.revision == before)

            let typed = try await server.request(.POST, "/v1/c/txn", body: Data(#"{"success": [{"op": "put", "key": "/app/port", "value": "82", "ttl": 5}]}"#.utf8))
            #expect(try typed.status == 422 && (typed.envelope().error?.violations?.first?.key) == "/app/port", "\(typed.text)")
            #expect(try await server.put("/v1/c/keys/app/port", "81").status == 200)
            let cache = try await server.put("/v1/c/keys/app/cache?ttl=60", "on")
            #expect(try cache.status == 201 && (cache.envelope().item?.expiresAt) != nil, "\(cache.text)")
        }
    }

    @Test("a change under a prefix whose schema would check more than 4 MiB of keys is 413 naming the prefix and the limit; attaching such a schema too, forced or not")
    func documentBudget() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            let config = try ConfigName("c")
            let value = Data(repeating: UInt8(ascii: "x"), count: Limits.maxValueBytes)
            // 15 values of 256 KiB and their paths: just under the limit.
            for index in 0..<15 {
                _ = try await server.store.set(try Key("/big/k\(index)"), to: value, in: config, options: SetOptions())
            }
            #expect(try await server.put("/v1/c/schema?target=/big/", #"{"type": "object"}"#).status == 201)
            let before = try await server.get("/v1/c").envelope().configInfo?.revision

            let refused = try await server.request(.PUT, "/v1/c/keys/big/k15", body: value)
            #expect(refused.status == 413, "\(refused.text)")
            let error = try #require(try refused.envelope().error)
            #expect(error.code == .tooLarge && error.field == "schema")
            #expect(error.message.contains("the schema on /big/") && error.message.contains("4 MiB (4194304 bytes)"), "\(error.message)")
            #expect(try await server.get("/v1/c/keys/big/k15").status == 404)
            #expect(try await server.get("/v1/c").envelope().configInfo?.revision == before)
            // A change that leaves the document under the limit is checked and written.
            #expect(try await server.put("/v1/c/keys/big/k0", "small").status == 200)
            #expect(try await server.request(.PUT, "/v1/c/keys/big/k15", body: value).status == 201)

            // A schema is not attached to a prefix past the limit, even with force.
            for index in 0..<17 {
                _ = try await server.store.set(try Key("/other/k\(index)"), to: value, in: config, options: SetOptions())
            }
            for force in ["", "&force=true"] {
                let attached = try await server.put("/v1/c/schema?target=/other/\(force)", #"{"type": "object"}"#)
                #expect(try attached.status == 413 && (attached.envelope().error?.message.contains("the schema on /other/")) == true, "\(attached.text)")
            }
            #expect(try await server.get("/v1/c/schemas").envelope().schemas?.map(\.target) == ["/big/"])
            #expect(try await server.put("/v1/c/keys/other/k0", "small").status == 200)
        }
    }

    @Test("a caller scoped to /app/ sees the violations of its own keys in a 422, and only a count of the others")
    func scopedCallerSeesItsOwnViolations() async throws {
        try await ScopeRouteTests.withScopedWriter { server, admin, writer in
            let schema = """
                {"type": "object", "required": ["cache"], "properties": {
                    "db": {"properties": {"password": {"minLength": 10}}},
                    "app": {"properties": {"port": {"type": "integer"}}}}}
                """
            let forced = try await server.put("/v1/demo/schema?target=/&force=true", schema, headers: ScopeRouteTests.bearer(admin))
            #expect(forced.status == 201, "\(forced.text)")
            // The first routed, the second maybe the event loop's: both answer alike.
            for _ in 0..<2 {
                let refused = try await server.put("/v1/demo/keys/app/port", "x", headers: ScopeRouteTests.bearer(writer))
                #expect(refused.status == 422, "\(refused.text)")
                let error = try #require(try refused.envelope().error)
                #expect(error.violations?.map(\.key) == ["/app/port", ""], "\(refused.text)")
                #expect(error.violations?.last?.message == "2 more violations outside your scopes" && error.violations?.last?.keyword == "scope")
                #expect(error.message.hasPrefix("schema violation, nothing was changed: /app/port:") && error.message.hasSuffix("; 2 more violations outside your scopes"), "\(error.message)")
                #expect(!refused.text.contains("/db/") && !refused.text.contains("password") && !refused.text.contains("cache"), "\(refused.text)")
            }
            let outside = try await server.put("/v1/demo/keys/app/name?ttl=3600", "svc", headers: ScopeRouteTests.bearer(writer))
            #expect(try outside.status == 422 && (outside.envelope().error?.message) == "schema violation, nothing was changed: 2 violations outside your scopes", "\(outside.text)")
            // A caller of the whole config sees every violation.
            let whole = try await server.put("/v1/demo/keys/app/port", "x", headers: ScopeRouteTests.bearer(admin))
            #expect(try whole.status == 422 && (whole.envelope().error?.violations?.map(\.key).sorted()) == ["/", "/app/port", "/db/password"], "\(whole.text)")
        }
    }
}
