import DiscfgAPI
import DiscfgCore
import DiscfgNetwork
import DiscfgTestSupport
import Foundation
import Testing

/// Web pages cannot use a server they can reach: no cross-origin changes, no DNS
/// rebinding, CORS only for origins the operator names.
@Suite("API: browsers cannot be used against the server")
struct BrowserGuardTests {
    @Test("a page on another site cannot change anything, even with a CORS-simple text/plain POST")
    func crossOriginWritesRefused() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/demo", "")
            _ = try await server.put("/v1/demo/keys/db/host", "db1")
            let evil = [("Origin", "https://evil.example")]
            let imported = try await server.request(
                .POST, "/v1/demo/import?replace=true", body: Data("EVIL=1".utf8), headers: evil + [("Content-Type", "text/plain")]
            )
            #expect(imported.status == 403, "\(imported.text)")
            #expect(try imported.envelope().error?.field == "Origin")
            for (method, path) in [("PUT", "/v1/demo/keys/db/host"), ("DELETE", "/v1/demo/keys/db/host"), ("PATCH", "/v1/demo"), ("DELETE", "/v1/demo"), ("POST", "/admin/sweep")] {
                let reply = try await server.request(.init(rawValue: method), path, body: Data("x".utf8), headers: evil)
                #expect(reply.status == 403, "\(method) \(path): \(reply.status)")
            }
            for origin in ["null", "http://127.0.0.1.evil.example", "http://localhost:1"] {
                #expect(try await server.put("/v1/demo/keys/db/host", "x", headers: [("Origin", origin)]).status == 403, "\(origin)")
            }
            let read = try await server.get("/v1/demo/keys/db/host", headers: evil)
            #expect(read.status == 200)
            #expect(read.headers["Access-Control-Allow-Origin"].isEmpty, "no CORS: the page cannot read the answer")
            #expect(try await server.get("/v1/demo/keys?recursive").envelope().items?.map(\.value) == ["db1"], "nothing changed")
            // The server's own origin is not foreign, and clients without Origin are untouched.
            #expect(try await server.put("/v1/demo/keys/a", "1", headers: [("Origin", server.baseURL)]).status == 201)
            #expect(try await server.put("/v1/demo/keys/b", "2").status == 201)
        }
    }

    @Test("on loopback, a Host that does not name this machine gets 421 (DNS rebinding)")
    func foreignHostRefused() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/demo", "")
            for host in ["evil.example", "evil.example:\(server.port)", "127.0.0.1.nip.io", "10.0.0.1"] {
                let reply = try await server.get("/v1/demo", headers: [("Host", host)])
                #expect(reply.status == 421, "Host \(host): \(reply.status) \(reply.text)")
                #expect(try reply.envelope().error?.field == "Host")
            }
            for host in ["localhost", "localhost:\(server.port)", "127.0.0.1:\(server.port)", "[::1]:\(server.port)", "LOCALHOST"] {
                #expect(try await server.get("/v1/demo", headers: [("Host", host)]).status == 200, "Host \(host)")
            }
        }
    }

    @Test("an origin allowed with --cors-origin gets preflights and CORS headers; others still do not")
    func allowedOrigin() async throws {
        let console = "https://console.example.com"
        try await withServer(try await LiveServer.start { $0.allowedOrigins = [try! BrowserGuard.validateOrigin(console)] }) { server in
            _ = try await server.put("/v1/demo", "")
            let preflight = try await server.request(.OPTIONS, "/v1/demo/keys/k", headers: [
                ("Origin", console), ("Access-Control-Request-Method", "PUT"), ("Access-Control-Request-Headers", "authorization, if-match"),
            ])
            #expect(preflight.status == 204)
            #expect(preflight.headers["Access-Control-Allow-Origin"].first == console)
            #expect(preflight.headers["Access-Control-Allow-Methods"].first?.contains("PUT") == true)
            #expect(preflight.headers["Access-Control-Allow-Headers"].first?.contains("If-Match") == true)
            let put = try await server.put("/v1/demo/keys/k", "v", headers: [("Origin", console)])
            #expect(put.status == 201)
            #expect(put.headers["Access-Control-Allow-Origin"].first == console)
            #expect(put.headers["Access-Control-Expose-Headers"].first?.contains("ETag") == true)
            #expect(try await server.put("/v1/demo/keys/k", "v", headers: [("Origin", "https://other.example.com")]).status == 403)
            let otherPreflight = try await server.request(.OPTIONS, "/v1/demo/keys/k", headers: [("Origin", "https://other.example.com"), ("Access-Control-Request-Method", "PUT")])
            #expect(otherPreflight.headers["Access-Control-Allow-Origin"].isEmpty)
        }
    }

    @Test("--cors-origin takes origins only")
    func originValidation() throws {
        #expect(try BrowserGuard.validateOrigin("HTTPS://Console.Example.com:8443") == "https://console.example.com:8443")
        for bad in ["console.example.com", "https://", "https://a.example/path", "ftp://a.example", "*", "https://a.example?x"] {
            #expect(throws: DiscfgError.self, "\(bad)") { try BrowserGuard.validateOrigin(bad) }
        }
    }
}
