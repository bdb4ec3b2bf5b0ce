@testable import DiscfgAPI
import DiscfgCore
import DiscfgNetwork
import DiscfgTestSupport
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Testing

/// Prefix scopes as an attacker tries them: a transaction or an import with one key
/// outside, encoded and doubled slashes, case, the event loop's own reads and writes,
/// and the admin routes that issue scoped tokens.
@Suite("API: prefix scopes hold whole")
struct ScopeRouteTests {
    static func bearer(_ token: String) -> [(String, String)] { [("Authorization", "Bearer \(token)")] }
    static let demo = try! ConfigName("demo")

    /// A server with config `demo` holding `/db/password`, an admin of all, and a writer
    /// scoped to `demo:/app/`.
    static func withScopedWriter(_ body: (LiveServer, _ admin: String, _ writer: String) async throws -> Void) async throws {
        try await withServer(try await LiveServer.start(auth: .required)) { server in
            let (admin, adminRecord) = try TokenFormat.generate(role: .admin, configs: nil, description: "ops", now: Date())
            let (writer, writerRecord) = try TokenFormat.generate(role: .write, scopes: [try AccessScope("demo:/app/")], description: "deploy", now: Date())
            try await server.store.saveToken(adminRecord)
            try await server.store.saveToken(writerRecord)
            _ = try await server.store.createConfig(demo, settings: ConfigSettings())
            _ = try await server.store.set(try Key("/db/password"), to: Data("secret".utf8), in: demo, options: SetOptions())
            try await body(server, admin, writer)
        }
    }

    @Test("a txn or an import with one key outside is refused whole and changes nothing")
    func neverHalfApplied() async throws {
        try await Self.withScopedWriter { server, _, writer in
            let txn = #"{"success": [{"op": "put", "key": "/app/a", "value": "1"}, {"op": "put", "key": "/db/password", "value": "mine"}]}"#
            let refused = try await server.request(.POST, "/v1/demo/txn", body: Data(txn.utf8), headers: Self.bearer(writer))
            #expect(refused.status == 403 && refused.text.contains("demo:/app/") && refused.text.contains("/db/password"), "\(refused.text)")
            let compare = #"{"compare": [{"key": "/db/password", "target": "value", "result": "=", "value": "secret"}], "success": [{"op": "put", "key": "/app/a", "value": "1"}]}"#
            #expect(try await server.request(.POST, "/v1/demo/txn", body: Data(compare.utf8), headers: Self.bearer(writer)).status == 403, "a compare outside reads outside")
            let range = #"{"success": [{"op": "get", "prefix": "/"}]}"#
            #expect(try await server.request(.POST, "/v1/demo/txn", body: Data(range.utf8), headers: Self.bearer(writer)).status == 403)
            let snapshot = #"{"/app/a": "1", "/db/password": "mine"}"#
            #expect(try await server.request(.POST, "/v1/demo/import", body: Data(snapshot.utf8), headers: Self.bearer(writer)).status == 403)
            #expect(try await server.request(.POST, "/v1/demo/import?replace=true", body: Data(#"{"/app/a": "1"}"#.utf8), headers: Self.bearer(writer)).status == 403,
                    "replacing deletes every other key of the config")
            #expect(try await server.store.get(try Key("/app/a"), in: Self.demo) == nil)
            #expect(try await server.store.get(try Key("/db/password"), in: Self.demo)?.value == Data("secret".utf8))
            // Inside, both work.
            let inside = #"{"success": [{"op": "put", "key": "/app/a", "value": "1"}, {"op": "get", "prefix": "/app/"}]}"#
            #expect(try await server.request(.POST, "/v1/demo/txn", body: Data(inside.utf8), headers: Self.bearer(writer)).status == 200)
            #expect(try await server.request(.POST, "/v1/demo/import", body: Data(#"{"/app/b": "2"}"#.utf8), headers: Self.bearer(writer)).status == 200)
        }
    }

    @Test("encoded slashes, dot segments, doubled slashes and case never leave the prefix")
    func escapes() async throws {
        try await Self.withScopedWriter { server, _, writer in
            for path in ["app/..%2Fdb%2Fpassword", "app%2F..%2Fdb%2Fpassword", "app/../db/password", "app/%2E%2E/db/password", "app//x", "App/x", "apple", "app%2Fx", "%2Fapp/x"] {
                for _ in 0..<2 {  // the first routed, the second maybe the event loop's
                    let reply = try await server.put("/v1/demo/keys/\(path)", "mine", headers: Self.bearer(writer))
                    #expect([200, 201, 400, 403, 404].contains(reply.status), "\(path): \(reply.status) \(reply.text)")
                }
            }
            #expect(try await server.store.get(try Key("/db/password"), in: Self.demo)?.value == Data("secret".utf8))
            let keys = try await server.store.list(in: Self.demo, ListQuery(prefix: .root, recursive: true, limit: 100)).items.map(\.key.path)
            #expect(keys.allSatisfy { $0 == "/db/password" || $0 == "/app" || $0.hasPrefix("/app/") }, "\(keys)")
            // A read outside is refused the same way, routed or not.
            for _ in 0..<3 {
                let read = try await server.get("/v1/demo/keys/db/password", headers: Self.bearer(writer))
                #expect(read.status == 403 && read.text.contains("demo:/app/"), "\(read.text)")
            }
        }
    }

    @Test("the list of configs shows the configs a scope reaches; the config's own routes need all of it")
    func configs() async throws {
        try await Self.withScopedWriter { server, admin, writer in
            _ = try await server.put("/v1/other", "", headers: Self.bearer(admin))
            let list = try await server.get("/v1/configs", headers: Self.bearer(writer)).envelope()
            #expect(list.configs?.map(\.name) == ["demo"])
            let info = try await server.get("/v1/demo", headers: Self.bearer(writer))
            #expect(info.status == 403 && info.text.contains("demo:/app/") && info.text.contains("whole config"), "\(info.text)")
            #expect(try await server.get("/admin/tokens", headers: Self.bearer(writer)).status == 403)
        }
    }

    @Test("the event loop's reads and writes ask the same scopes: inside taken, outside left to the router's 403")
    func fastPath() throws {
        let roles = try ClientCertificateRoles(parsing: "CN=deployer=write@app:/app/")
        let store = MemoryStore()
        let api = DiscfgServer.api(store: store, authenticator: Authenticator(mode: .required, store: store, certificateRoles: roles), configuration: DiscfgServer.Configuration())
        let views = ConfigViews(store: store)
        defer { views.close() }
        let reads = KeyReads(views: views, api: api, logger: Logger(label: "test"))
        let certificate = CertificateSubject([("CN", "deployer")])
        func candidate(_ method: HTTPMethod, _ path: String) throws -> KeyReads.Candidate {
            var headers: HTTPHeaders = ["Host": "127.0.0.1:8899"]
            if method == .PUT { headers.add(name: "Content-Length", value: "1") }
            return try #require(reads.candidate(HTTPRequestHead(version: .http1_1, method: method, uri: "/v1/app/keys" + path, headers: headers), now: .now()))
        }
        for path in ["/app/x", "/app"] {
            #expect(try reads.write(candidate(.PUT, path), body: ByteBuffer(string: "v"), peerIsLoopback: true, certificate: certificate) != nil, "\(path)")
            #expect(try reads.admitted(candidate(.GET, path), peerIsLoopback: true, certificate: certificate) != nil, "\(path)")
        }
        for path in ["/apple", "/db/password", "/App/x", "/.2Fapp.2Fx"] {
            #expect(try reads.write(candidate(.PUT, path), body: ByteBuffer(string: "v"), peerIsLoopback: true, certificate: certificate) == nil, "\(path)")
            #expect(try reads.admitted(candidate(.GET, path), peerIsLoopback: true, certificate: certificate) == nil, "\(path)")
        }
    }

    @Test("POST /admin/tokens issues scoped tokens, still takes configs, and refuses bad scopes issuing nothing")
    func adminTokens() async throws {
        try await Self.withScopedWriter { server, admin, _ in
            func post(_ body: String) async throws -> LiveServer.Reply {
                try await server.request(.POST, "/admin/tokens", body: Data(body.utf8), headers: Self.bearer(admin) + [("Content-Type", "application/json")])
            }
            let created = try await post(#"{"role": "write", "scopes": ["demo:/app", "demo:etcd:/registry/"]}"#)
            #expect(created.status == 201, "\(created.text)")
            let record = try #require(try created.envelope().tokens?.first)
            #expect(record.scopes == ["demo:/app/", "demo:etcd:/registry/"] && record.configs == ["demo"])
            let token = try #require(try created.envelope().token)
            #expect(try await server.put("/v1/demo/keys/app/x", "1", headers: Self.bearer(token)).status == 201)
            #expect(try await server.put("/v1/demo/keys/apple", "1", headers: Self.bearer(token)).status == 403)
            let named = try await post(#"{"role": "read", "configs": ["demo"]}"#)
            let namedScopes = try named.envelope().tokens?.first?.scopes
            #expect(named.status == 201 && namedScopes == ["demo"], "\(named.text)")
            let before = try await server.store.listTokens().count
            for (body, field) in [
                (#"{"role": "read", "scopes": ["demo:app"]}"#, "scope"), (#"{"role": "read", "scopes": ["demo:"]}"#, "scope"),
                (#"{"role": "read", "scopes": []}"#, "scopes"), (#"{"role": "read", "scopes": ["demo"], "configs": ["demo"]}"#, "scopes"),
                (#"{"role": "read", "scopes": "demo:/app/"}"#, "scopes"), (#"{"role": "read", "scopes": ["bad name:/x/"]}"#, "scope"),
            ] {
                let reply = try await post(body)
                #expect(reply.status == 400 && (try? reply.envelope().error?.field) == field, "\(body): \(reply.text)")
            }
            #expect(try await server.store.listTokens().count == before)
            let listed = try await server.get("/admin/tokens", headers: Self.bearer(admin)).envelope()
            #expect(listed.tokens?.contains { $0.scopes == ["demo:/app/"] } == true)
        }
    }
}
