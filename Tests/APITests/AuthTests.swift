import DiscfgNetwork
@testable import DiscfgAPI
import DiscfgCore
import DiscfgTestSupport
import Foundation
import NIOCore
import Testing

@Suite("API: bearer tokens")
struct AuthTests {
    @Test("401 without a token, 403 for a role that may not, scoped tokens see only their configs")
    func roles() async throws {
        try await withServer(try await LiveServer.start(auth: .required, tokenCacheLifetime: .zero)) { server in
            let now = Date()
            let (admin, adminRecord) = try TokenFormat.generate(role: .admin, configs: nil, description: "ops", now: now)
            let (reader, readerRecord) = try TokenFormat.generate(role: .read, configs: [try ConfigName("app")], description: nil, now: now)
            let (writer, writerRecord) = try TokenFormat.generate(role: .write, configs: nil, description: nil, now: now)
            for record in [adminRecord, readerRecord, writerRecord] { try await server.store.saveToken(record) }
            let bearer = { (token: String) in [("Authorization", "Bearer \(token)")] }

            let anonymous = try await server.get("/v1/configs")
            #expect(anonymous.status == 401)
            #expect(anonymous.headers["WWW-Authenticate"].first?.hasPrefix("Bearer") == true)
            #expect(try anonymous.envelope().error?.code == .unauthenticated)
            #expect(try await server.get("/v1/configs", headers: [("Authorization", "Basic abc")]).status == 401)
            #expect(try await server.get("/v1/configs", headers: bearer(admin + "x")).status == 401)
            #expect(try await server.get("/v1/configs", headers: bearer("dcfg_000000000000_forged")).status == 401)

            #expect(try await server.put("/v1/app", "", headers: bearer(admin)).status == 201)
            #expect(try await server.put("/v1/other", "", headers: bearer(admin)).status == 201)
            #expect(try await server.put("/v1/third", "", headers: bearer(writer)).status == 403)
            #expect(try await server.put("/v1/app/keys/k", "v", headers: bearer(writer)).status == 201)
            let denied = try await server.put("/v1/app/keys/k", "v2", headers: bearer(reader))
            #expect(denied.status == 403)
            #expect(try denied.envelope().error?.code == .permissionDenied)
            #expect(try await server.get("/v1/app/keys/k", headers: bearer(reader)).status == 200)
            #expect(try await server.get("/v1/other", headers: bearer(reader)).status == 403)
            #expect(try await server.get("/v1/configs", headers: bearer(reader)).envelope().configs?.map(\.name) == ["app"])
            #expect(try await server.get("/v1/configs", headers: bearer(admin)).envelope().configs?.map(\.name) == ["app", "other"])

            try await server.store.revokeToken(id: writerRecord.id)
            #expect(try await server.put("/v1/app/keys/k", "v3", headers: bearer(writer)).status == 401)
            #expect(try await server.get("/openapi.yaml").status == 200)
        }
    }

    @Test("auto mode: open until the first token exists")
    func onceTokensExist() async throws {
        try await withServer(try await LiveServer.start(auth: .onceTokensExist, tokenCacheLifetime: .zero)) { server in
            #expect(try await server.put("/v1/app", "").status == 201)
            let (token, record) = try TokenFormat.generate(role: .read, configs: nil, description: nil, now: Date())
            try await server.store.saveToken(record)
            #expect(try await server.get("/v1/app").status == 401)
            #expect(try await server.get("/v1/app", headers: [("Authorization", "Bearer \(token)")]).status == 200)
        }
    }

    @Test("tokens: the id is parsed back, the hash is SHA-256 of the token, and only the hash is stored")
    func tokenFormat() throws {
        let (token, record) = try TokenFormat.generate(role: .write, configs: nil, description: nil, now: Date())
        #expect(token.hasPrefix("dcfg_"))
        #expect(TokenFormat.id(of: token) == record.id)
        #expect(record.hash == TokenFormat.hash(token))
        #expect(record.hash.count == 32)
        #expect(TokenFormat.id(of: "dcfg_short") == nil)
        #expect(TokenFormat.id(of: "other_abcdefabcdef_secret") == nil)
    }
}

@Suite("API: authentication never opens by itself")
struct AuthStaysOnTests {
    @Test("auto mode: revoking the last token keeps tokens required; forgetting them, with none valid, opens it again")
    func revokingTheLastTokenKeepsAuthOn() async throws {
        try await withServer(try await LiveServer.start(auth: .onceTokensExist, tokenCacheLifetime: .zero)) { server in
            #expect(try await server.put("/v1/app", "").status == 201)
            let (token, record) = try TokenFormat.generate(role: .admin, configs: nil, description: nil, now: Date())
            try await server.store.saveToken(record)
            #expect(try await server.put("/v1/app/keys/k", "v").status == 401)
            #expect(try await server.put("/v1/app/keys/k", "v", headers: [("Authorization", "Bearer \(token)")]).status == 201)
            try await server.store.revokeToken(id: record.id)
            let anonymous = try await server.put("/v1/app/keys/k", "anyone")
            #expect(anonymous.status == 401, "revoking the last token opened the server: \(anonymous.text)")
            #expect(try await server.get("/v1/app/keys/k").status == 401)
            #expect(try await server.store.tokensWereIssued())
            try await server.store.forgetIssuedTokens()
            #expect(try await server.get("/v1/app/keys/k").status == 200)
        }
    }

    @Test("forgetting issued tokens is refused while one is valid")
    func forgetNeedsNoValidToken() async throws {
        try await withServer(try await LiveServer.start(auth: .onceTokensExist)) { server in
            let (_, record) = try TokenFormat.generate(role: .read, configs: nil, description: nil, now: Date())
            try await server.store.saveToken(record)
            await #expect(throws: DiscfgError.self) { try await server.store.forgetIssuedTokens() }
            #expect(try await server.store.tokensWereIssued())
        }
    }

    @Test("an open server lets in callers from this machine only, unless told otherwise")
    func openOnlyToLoopbackPeers() async throws {
        for mode in [Authenticator.Mode.open, .onceTokensExist] {
            let closed = Authenticator(mode: mode, store: MemoryStore())
            #expect(try await closed.identify(authorization: nil, peerIsLoopback: true) == .anonymous)
            #expect(try await closed.identify(authorization: nil, peerIsLoopback: nil) == .anonymous)
            await #expect(throws: DiscfgError.self) { try await closed.identify(authorization: nil, peerIsLoopback: false) }
            let insecure = Authenticator(mode: mode, store: MemoryStore(), openToRemotePeers: true)
            #expect(try await insecure.identify(authorization: nil, peerIsLoopback: false) == .anonymous)
        }
    }

    @Test("a server library refuses to listen off loopback without TLS, or while it answers without a credential, unless told to; loopback always may")
    func bindSafety() async throws {
        let pki = try await TestCertificates.make()
        defer { pki.remove() }
        let tls = try ServerTLS(files: .init(certificate: pki.path("server.pem"), key: pki.path("server.key")))
        let mutual = try ServerTLS(files: .init(certificate: pki.path("server.pem"), key: pki.path("server.key"), clientCA: pki.path("ca.pem")))
        func check(_ host: String, _ tls: ServerTLS?, plaintext: Bool = false, _ authenticator: Authenticator) async throws {
            var configuration = DiscfgServer.Configuration()
            configuration.host = host
            configuration.tls = tls
            configuration.allowsPlaintextOffLoopback = plaintext
            try await DiscfgServer.checkBindSafety(configuration, authenticator: authenticator)
        }
        for host in ["0.0.0.0", "192.0.2.7", "::"] {
            let required = Authenticator(mode: .required, store: MemoryStore())
            await #expect(throws: DiscfgServer.BindRefusal(host: host, reason: .plaintext), "\(host) without TLS") { try await check(host, nil, required) }
            try await check(host, tls, required)
            try await check(host, nil, plaintext: true, required)
            for mode in [Authenticator.Mode.open, .onceTokensExist] {
                let open = Authenticator(mode: mode, store: MemoryStore())
                await #expect(throws: DiscfgServer.BindRefusal(host: host, reason: .unauthenticated), "\(host) \(mode)") { try await check(host, tls, open) }
                await #expect(throws: DiscfgServer.BindRefusal(host: host, reason: .plaintext), "\(host) \(mode)") { try await check(host, nil, open) }
                try await check(host, mutual, open)
                try await check(host, tls, Authenticator(mode: mode, store: MemoryStore(), openToRemotePeers: true))
                try await check(host, nil, plaintext: true, Authenticator(mode: mode, store: MemoryStore(), openToRemotePeers: true))
            }
        }
        for host in ["127.0.0.1", "localhost", "::1", "[::1]"] {
            try await check(host, nil, Authenticator(mode: .open, store: MemoryStore()))
        }
    }

    @Test("loopback peers are 127/8, ::1 and IPv4-mapped 127/8; nothing else")
    func loopbackAddresses() throws {
        for address in ["127.0.0.1", "127.255.0.9", "::1", "::ffff:127.0.0.1"] {
            #expect(Loopback.contains(try SocketAddress(ipAddress: address, port: 1)), "\(address)")
        }
        for address in ["10.0.0.1", "192.168.1.1", "0.0.0.0", "::", "fe80::1", "::ffff:10.0.0.1", "128.0.0.1", "::2"] {
            #expect(!Loopback.contains(try SocketAddress(ipAddress: address, port: 1)), "\(address)")
        }
    }

    @Test("a sweep needs an admin of every config: a scoped admin gets 403 and sees no value")
    func scopedAdminCannotSweep() async throws {
        try await withServer(try await LiveServer.start(auth: .required)) { server in
            let (admin, adminRecord) = try TokenFormat.generate(role: .admin, configs: nil, description: nil, now: Date())
            let (scoped, scopedRecord) = try TokenFormat.generate(role: .admin, configs: [try ConfigName("a")], description: nil, now: Date())
            for record in [adminRecord, scopedRecord] { try await server.store.saveToken(record) }
            let denied = try await server.request(.POST, "/admin/sweep", headers: [("Authorization", "Bearer \(scoped)")])
            #expect(denied.status == 403)
            #expect(try denied.envelope().events == nil)
            #expect(try await server.request(.POST, "/admin/sweep", headers: [("Authorization", "Bearer \(admin)")]).status == 200)
        }
    }
}
