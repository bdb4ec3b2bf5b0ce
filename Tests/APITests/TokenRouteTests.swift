@testable import DiscfgAPI
import DiscfgCore
import DiscfgTestSupport
import Foundation
import NIOHTTP1
import Testing

/// `/admin/tokens` over a real server: issue, use, list and revoke, as an admin of every
/// config; everyone else refused; every malformed request a 400 that issues nothing.
@Suite("API: managing tokens (/admin/tokens)")
struct TokenRouteTests {
    static func bearer(_ token: String) -> [(String, String)] { [("Authorization", "Bearer \(token)")] }

    /// A server that trusts its cached token records for a minute, so a token that works
    /// (or stops working) at once shows the routes refresh them; and an admin of all.
    static func withAdmin(_ body: (LiveServer, String) async throws -> Void) async throws {
        try await withServer(try await LiveServer.start(auth: .required, tokenCacheLifetime: .seconds(60))) { server in
            let (admin, record) = try TokenFormat.generate(role: .admin, configs: nil, description: "ops", now: Date())
            try await server.store.saveToken(record)
            _ = try await server.put("/v1/app", "", headers: bearer(admin))
            _ = try await server.put("/v1/other", "", headers: bearer(admin))
            try await body(server, admin)
        }
    }

    static func post(_ server: LiveServer, _ body: String, as token: String) async throws -> LiveServer.Reply {
        try await server.request(.POST, "/admin/tokens", body: Data(body.utf8), headers: bearer(token) + [("Content-Type", "application/json")])
    }

    @Test("issued once, works at once within its role and configs, listed without secrets, refused at once when revoked")
    func lifecycle() async throws {
        try await Self.withAdmin { server, admin in
            let created = try await Self.post(server, #"{"role": "write", "configs": ["app"], "description": "web tier"}"#, as: admin)
            #expect(created.status == 201, "\(created.text)")
            #expect(created.headers["Cache-Control"].first == "no-store")
            let envelope = try created.envelope()
            #expect(envelope.action == "token-create")
            let token = try #require(envelope.token)
            let record = try #require(envelope.tokens?.first)
            #expect(TokenFormat.id(of: token) == record.id)
            #expect(envelope.id == record.id, "the id beside the token, as discfg token create -f json prints it")
            #expect(record.role == .write && record.configs == ["app"] && record.description == "web tier")
            #expect(try await server.store.token(id: record.id)?.hash == TokenFormat.hash(token), "only the hash is kept")

            #expect(try await server.put("/v1/app/keys/k", "v", headers: Self.bearer(token)).status == 201, "accepted at once, despite the cache")
            #expect(try await server.put("/v1/other/keys/k", "v", headers: Self.bearer(token)).status == 403, "only in its configs")
            #expect(try await server.request(.DELETE, "/v1/app", headers: Self.bearer(token)).status == 403, "only its role")
            #expect(try await server.get("/admin/tokens", headers: Self.bearer(token)).status == 403, "a write token manages no tokens")

            let listed = try await server.get("/admin/tokens", headers: Self.bearer(admin))
            #expect(listed.status == 200)
            #expect(try listed.envelope().tokens?.map(\.id).sorted() == [record.id, TokenFormat.id(of: admin)!].sorted())
            #expect(!listed.text.contains(token) && !listed.text.contains("hash"), "no token and no hash in a listing")

            let revoked = try await server.request(.DELETE, "/admin/tokens/\(record.id)", headers: Self.bearer(admin))
            #expect(revoked.status == 200, "\(revoked.text)")
            #expect(try revoked.envelope().tokens?.first == record)
            #expect(try revoked.envelope().id == record.id)
            #expect(try await server.get("/v1/app/keys/k", headers: Self.bearer(token)).status == 401, "refused at once, despite the cache")
            let again = try await server.request(.DELETE, "/admin/tokens/\(record.id)", headers: Self.bearer(admin))
            #expect(again.status == 404)
            #expect(try again.envelope().error?.field == "id")
        }
    }

    @Test("only an admin of every config: a scoped admin, a reader and nobody are refused, and nothing is issued")
    func onlyAdminsOfAll() async throws {
        try await Self.withAdmin { server, admin in
            let scoped = try #require(try await Self.post(server, #"{"role": "admin", "configs": ["app"]}"#, as: admin).envelope().token)
            let reader = try #require(try await Self.post(server, #"{"role": "read"}"#, as: admin).envelope().token)
            let readerID = try #require(TokenFormat.id(of: reader))
            for (caller, status) in [(scoped, 403), (reader, 403), ("", 401)] {
                let headers = caller.isEmpty ? [] : Self.bearer(caller)
                #expect(try await server.get("/admin/tokens", headers: headers).status == status)
                let post = try await server.request(.POST, "/admin/tokens", body: Data(#"{"role":"admin"}"#.utf8), headers: headers)
                #expect(post.status == status, "\(post.text)")
                #expect(try await server.request(.DELETE, "/admin/tokens/\(readerID)", headers: headers).status == status)
            }
            #expect(try await server.store.listTokens().count == 3, "nothing issued or revoked")
            #expect(try await server.get("/admin/tokens", headers: Self.bearer(admin)).status == 200)
        }
    }

    @Test("malformed requests: one clear 400 naming the field, and no token issued", arguments: [
        ("", "body"),
        ("[]", "body"),
        ("{", "body"),
        (#"{"configs": ["app"]}"#, "role"),
        (#"{"role": "root"}"#, "role"),
        (#"{"role": 1}"#, "role"),
        (#"{"role": null}"#, "role"),
        (#"{"role": "read", "config": ["app"]}"#, "body"),
        (#"{"role": "read", "configs": []}"#, "configs"),
        (#"{"role": "read", "configs": "app"}"#, "configs"),
        (#"{"role": "read", "configs": ["no/slash"]}"#, "config"),
        (#"{"role": "read", "configs": [""]}"#, "config"),
        (#"{"role": "read", "description": 7}"#, "description"),
        (#"{"role": "read", "description": "a\u0000b"}"#, "description"),
        (#"{"role": "read", "description": "line\nbreak"}"#, "description"),
        ("{\"role\": \"read\", \"description\": \"\(String(repeating: "x", count: 501))\"}", "description"),
        ("{\"role\": \"read\", \"description\": \"\(String(repeating: "e\u{301}", count: 251))\"}", "description"),
    ])
    func malformed(body: String, field: String) async throws {
        try await Self.withAdmin { server, admin in
            let reply = try await Self.post(server, body, as: admin)
            #expect(reply.status == 400, "\(body): \(reply.status) \(reply.text)")
            #expect(try reply.envelope().error?.field == field, "\(body): \(reply.text)")
            #expect(try await server.store.listTokens().count == 1, "\(body) issued a token")
        }
    }

    @Test("a description of exactly 500 characters is kept; bodies past 64 KiB are 413; ids that are not ids are 404")
    func edges() async throws {
        try await Self.withAdmin { server, admin in
            let longest = String(repeating: "é", count: 500)
            let kept = try await Self.post(server, "{\"role\": \"read\", \"description\": \"\(longest)\"}", as: admin)
            #expect(kept.status == 201)
            #expect(try kept.envelope().tokens?.first?.description == longest)
            let huge = "{\"role\": \"read\", \"description\": \"\(String(repeating: "x", count: 70_000))\"}"
            #expect(try await Self.post(server, huge, as: admin).status == 413)
            for id in ["0", "-1", "9223372036854775808", "18446744073709551616", "ABCDEF012345", "0123456789abc", "..", "%00"] {
                let reply = try await server.request(.DELETE, "/admin/tokens/\(id)", headers: Self.bearer(admin))
                #expect(reply.status == 404, "\(id): \(reply.status) \(reply.text)")
            }
            #expect(try await server.store.listTokens().count == 2)
        }
    }

    @Test("an authenticator without a token store says so (invalidArgument, a 400)")
    func noTokenStore() async throws {
        let error = try #require(await #expect(throws: DiscfgError.self) {
            _ = try await Authenticator.open.tokens()
        })
        #expect(error.code == .invalidArgument && error.message.contains("keeps no tokens"))
    }
}
