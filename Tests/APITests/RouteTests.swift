import DiscfgAPI
import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

@Suite("API: every route over HTTP")
struct RouteTests {
    @Test("configs: create, list, info, update, delete")
    func configs() async throws {
        try await withServer(try await LiveServer.start()) { server in
            let created = try await server.put("/v1/app", #"{"history": "7d", "description": "the app"}"#)
            #expect(created.status == 201)
            #expect(try created.envelope().configInfo?.settings.history == .days(7))
            #expect(try await server.put("/v1/app", "").status == 409)
            #expect(try await server.put("/v1/empty", "").status == 201)
            #expect(try await server.get("/v1/configs").envelope().configs?.map(\.name) == ["app", "empty"])
            #expect(try await server.get("/v1/app").envelope().configInfo?.settings.description == "the app")
            let patched = try await server.request(.PATCH, "/v1/app", body: Data(#"{"history": "forever"}"#.utf8))
            #expect(patched.status == 200)
            #expect(try patched.envelope().configInfo?.settings.history == .forever)
            #expect(try await server.request(.DELETE, "/v1/app").status == 200)
            #expect(try await server.get("/v1/app").status == 404)
        }
    }

    @Test("keys: set (201 then 200), get with ETag, raw with content type, 304, revision, delete")
    func keys() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            let first = try await server.put("/v1/c/keys/db/host", "db1", headers: [("Content-Type", "text/plain")])
            #expect(first.status == 201)
            #expect(first.headers["ETag"].first == "\"1\"")
            let second = try await server.put("/v1/c/keys/db/host", "db2")
            #expect(second.status == 200)
            let envelope = try second.envelope()
            #expect(envelope.item?.version == 2)
            #expect(envelope.prevItem?.value == "db1")
            #expect(envelope.revision == 2)

            let got = try await server.get("/v1/c/keys/db/host")
            #expect(try got.envelope().item?.value == "db2")
            #expect(got.headers["ETag"].first == "\"2\"")
            #expect(try await server.get("/v1/c/keys/db/host", headers: [("If-None-Match", "\"2\"")]).status == 304)
            #expect(try await server.get("/v1/c/keys/db/host", headers: [("If-None-Match", "\"1\"")]).status == 200)
            // A list, weak tags and * take the router's path; the same rule answers them.
            for (header, status) in [(#""9", W/"2""#, 304), (" W/\"2\" ", 304), ("*", 304), (#""1", "3""#, 200), ("2", 304), (#""02""#, 200), ("", 200), (",,", 200)] {
                #expect(try await server.get("/v1/c/keys/db/host?revision=2", headers: [("If-None-Match", header)]).status == status, "If-None-Match: \(header)")
            }
            #expect(try await server.get("/v1/c/keys/db/host?revision=1").envelope().item?.value == "db1")

            _ = try await server.put("/v1/c/keys/doc", #"{"a": [1, 2]}"#, headers: [("Content-Type", "application/json")])
            let raw = try await server.get("/v1/c/keys/doc?raw")
            #expect(raw.text == #"{"a": [1, 2]}"#)
            #expect(raw.headers["Content-Type"].first == "application/json")
            let parsed = try JSONSerialization.jsonObject(with: try await server.get("/v1/c/keys/doc?format=json").body) as? [String: Any]
            let value = (parsed?["item"] as? [String: Any])?["value"] as? [String: Any]
            #expect((value?["a"] as? [Int]) == [1, 2])

            let binary = Data([0, 159, 146, 150, 255])
            _ = try await server.request(.PUT, "/v1/c/keys/blob", body: binary)
            let blob = try await server.get("/v1/c/keys/blob").envelope().item
            #expect(blob?.encoding == "base64")
            #expect(try await server.get("/v1/c/keys/blob?raw").body == binary)

            let deleted = try await server.request(.DELETE, "/v1/c/keys/db/host")
            #expect(try deleted.envelope().prevItem?.value == "db2")
            #expect(try await server.get("/v1/c/keys/db/host").status == 404)
            #expect(try await server.request(.DELETE, "/v1/c/keys/db/host").status == 404)
        }
    }

    @Test("ttl: the item carries expiresAt")
    func ttl() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            let item = try await server.put("/v1/c/keys/session?ttl=60", "s").envelope().item
            let expires = try #require(item?.expiresAt)
            #expect(abs(expires.timeIntervalSince(item!.modified) - 60) < 0.01)
        }
    }

    @Test("listing: prefix, recursive, directories, pagination with cursor")
    func listing() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            for key in ["a/x", "a/y", "a/b/z", "ab", "top"] { _ = try await server.put("/v1/c/keys/\(key)", "v") }
            let shallow = try await server.get("/v1/c/keys?prefix=/a").envelope()
            #expect(shallow.items?.map(\.key) == ["/a/x", "/a/y"])
            #expect(shallow.prefixes == ["/a/b/"])
            #expect(try await server.get("/v1/c/keys/a/").envelope().prefixes == ["/a/b/"])
            #expect(try await server.get("/v1/c/keys/a?recursive").envelope().items?.map(\.key) == ["/a/b/z", "/a/x", "/a/y"])
            var keys: [String] = []
            var cursor: String?
            repeat {
                let query = "/v1/c/keys?recursive=true&limit=2" + (cursor.map { "&cursor=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") } ?? "")
                let page = try await server.get(query).envelope()
                keys += page.items?.map(\.key) ?? []
                cursor = page.cursor
            } while cursor != nil
            #expect(keys == ["/a/b/z", "/a/x", "/a/y", "/ab", "/top"])
            let removed = try await server.request(.DELETE, "/v1/c/keys/a?recursive").envelope()
            #expect(removed.events?.map(\.key) == ["/a/b/z", "/a/x", "/a/y"])
        }
    }

    @Test("history: newest first, paginated")
    func history() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            for value in ["1", "2", "3"] { _ = try await server.put("/v1/c/keys/k", value) }
            let page = try await server.get("/v1/c/history/k?limit=2").envelope()
            #expect(page.events?.map(\.revision) == [3, 2])
            #expect(page.cursor == "2")
            #expect(try await server.get("/v1/c/history/k?before=2").envelope().events?.map(\.revision) == [1])
        }
    }

    @Test("export and import in every format")
    func transfer() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/src", "")
            _ = try await server.put("/v1/dst", "")
            _ = try await server.put("/v1/src/keys/db/host", "db1")
            _ = try await server.put("/v1/src/keys/greeting", "hello world")
            let env = try await server.get("/v1/src/export?format=env")
            #expect(env.text == "DB_HOST=db1\nGREETING=\"hello world\"\n")
            for format in ["json", "yaml"] {
                let exported = try await server.get("/v1/src/export?format=\(format)")
                #expect(exported.status == 200)
                let imported = try await server.request(.POST, "/v1/dst/import?format=\(format)", body: exported.body)
                #expect(imported.status == 200, "\(imported.text)")
            }
            #expect(try await server.get("/v1/dst/keys?recursive").envelope().items?.map(\.value) == ["db1", "hello world"])
            let replaced = try await server.request(.POST, "/v1/dst/import?replace=true", body: Data(#"{"/only": "this"}"#.utf8))
            #expect(try replaced.envelope().events?.count == 3)
            #expect(try await server.get("/v1/dst/keys?recursive").envelope().items?.map(\.key) == ["/only"])
        }
    }

    @Test("health, metrics and the OpenAPI document")
    func operations() async throws {
        try await withServer(try await LiveServer.start()) { server in
            #expect(try await server.get("/healthz").status == 200)
            _ = try await server.get("/v1/configs")
            let metrics = try await server.get("/metrics").text
            #expect(metrics.contains(#"discfg_http_requests_total{route="/v1/configs",method="GET",status="200"} 1"#))
            #expect(metrics.contains("discfg_store_operation_duration_seconds_bucket{operation=\"listConfigs\""))
            let spec = try await server.get("/openapi.yaml")
            #expect(spec.status == 200)
            #expect(spec.text == ConfigAPI.openAPIDocument)
        }
    }
}
