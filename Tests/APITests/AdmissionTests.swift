@testable import DiscfgAPI
import DiscfgCore
import DiscfgService
import DiscfgTestSupport
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Testing

/// One admission (`Admission.admit`) for the router and the event loop's fast path
/// (`KeyReads`): for the same request, the fast path lets in exactly whom the router lets
/// in, and turns away the rest with the router's own status and error.
@Suite("API: one admission for the router and the event loops")
struct AdmissionTests {
    /// A request the test sends both ways.
    struct Case: CustomStringConvertible {
        var endpoint: Endpoint
        var path: String
        var host: String?
        var credentials: String
        var description: String { "\(endpoint.method) \(path)\(host.map { " Host: \($0)" } ?? "") as \(credentials)" }
    }

    @Test("every kind of caller × the key routes, with a foreign Host and a bad config name: the fast path's verdict is the router's answer")
    func sameVerdict() async throws {
        try await withServer(try await LiveServer.start(auth: .required, tokenCacheLifetime: .seconds(600))) { server in
            var tokens: [String: String] = [:]
            for (name, role, configs) in [
                ("read", Role.read, nil), ("write", .write, nil), ("admin", .admin, nil),
                ("read@other", .read, [try ConfigName("other")]), ("admin@other", .admin, [try ConfigName("other")]),
            ] as [(String, Role, [ConfigName]?)] {
                let (token, record) = try TokenFormat.generate(role: role, configs: configs, description: nil, now: Date())
                try await server.store.saveToken(record)
                tokens[name] = token
            }
            let admin = try #require(tokens["admin"])
            #expect(try await server.put("/v1/app", "", headers: [("Authorization", "Bearer \(admin)")]).status == 201)
            var authorizations: [(String, String?)] = [("no token", nil), ("a wrong token", "Bearer \(admin)x"), ("Basic", "Basic abc")]
            authorizations += tokens.sorted { $0.key < $1.key }.map { ($0.key, "Bearer \($0.value)") }

            // The fast path's half, over the server's store and token records, as `serve`
            // builds it.
            let authenticator = Authenticator(mode: .required, store: server.store, cacheLifetime: .seconds(600))
            _ = try await authenticator.identify(authorization: "Bearer \(admin)", peerIsLoopback: true)
            let api = DiscfgServer.api(store: server.store, authenticator: authenticator, configuration: DiscfgServer.Configuration())
            let views = ConfigViews(store: server.store)
            defer { views.close() }
            let reads = KeyReads(views: views, api: api, logger: Logger(label: "test"))

            var refusals: Set<Int> = []
            for endpoint in [Endpoint.getKey, .setKey] {
                for (path, host) in [("/v1/app/keys/k", nil), ("/v1/app/keys/k", "evil.example"), ("/v1/bad!name/keys/k", nil)] as [(String, String?)] {
                    for (credentials, authorization) in authorizations {
                        let testCase = Case(endpoint: endpoint, path: path, host: host, credentials: credentials)
                        let body = endpoint == .setKey ? "v" : nil
                        var fields = [("Host", host ?? "127.0.0.1:\(server.port)")]
                        if let authorization { fields.append(("Authorization", authorization)) }
                        if let body { fields.append(("Content-Length", String(body.utf8.count))) }

                        let head = HTTPRequestHead(version: .http1_1, method: endpoint == .setKey ? .PUT : .GET, uri: path, headers: HTTPHeaders(fields))
                        let candidate = try #require(reads.candidate(head, now: .now()), "\(testCase)")
                        let caller = try #require(api.authenticator.cachedIdentity(authorization: candidate.authorization, peerIsLoopback: true))
                        let verdict = api.admission.admit(
                            candidate.endpoint, Admission.Head(authority: candidate.authority, configName: candidate.configName), caller: caller
                        )
                        // `Connection: keep-alive` keeps the request off the fast path: the router answers.
                        let routed = try await server.request(
                            endpoint == .setKey ? .PUT : .GET, path, body: body.map { Data($0.utf8) },
                            headers: fields.filter { $0.0 != "Content-Length" } + [("Connection", "keep-alive")]
                        )
                        switch verdict {
                        case .failure(let refusal):
                            refusals.insert(Int(refusal.status.code))
                            #expect(reads.admitted(candidate, peerIsLoopback: true) == nil, "\(testCase)")
                            #expect(routed.status == refusal.status.code, "\(testCase)")
                            let shown = try routed.envelope().error
                            #expect(shown?.code == refusal.error.code && shown?.message == refusal.error.message && shown?.field == refusal.error.field, "\(testCase)")
                        case .success(let admitted):
                            #expect(reads.admitted(candidate, peerIsLoopback: true) == admitted, "\(testCase)")
                            #expect(![400, 401, 403, 421].contains(routed.status), "\(testCase): \(routed.text)")
                        }
                    }
                }
            }
            // Every kind of refusal was met: Host, names, identity, access.
            #expect(refusals == [421, 400, 401, 403])
        }
    }

    @Test("the caller's role and scope decide access as each route declares it, with the router's words")
    func accessOfEveryRoute() throws {
        let admission = Admission(browserGuard: nil)
        let app = Admission.Head(authority: nil, configName: "app")
        let none = Admission.Head(authority: nil, configName: nil)
        let scopedAdmin = Caller(name: "token:a", role: .admin, configs: [try ConfigName("other")])
        for endpoint in Endpoint.allCases {
            let head = endpoint.namesConfig ? app : none
            for caller in [Caller.anonymous, Caller(name: "token:r", role: .read), Caller(name: "token:w", role: .write), scopedAdmin] {
                let verdict = admission.admit(endpoint, head, caller: .success(caller))
                let admits = endpoint.admits(caller, config: endpoint.namesConfig ? try ConfigName("app") : nil)
                switch verdict {
                case .success(let admitted):
                    #expect(admits, "\(endpoint) \(caller.name)")
                    #expect(admitted.caller == (endpoint.kind.role == nil ? .unidentified : caller))
                case .failure(let refusal):
                    #expect(!admits && refusal.status == .forbidden && refusal.error.field == "authorization", "\(endpoint) \(caller.name)")
                }
            }
        }
        let unauthenticated = DiscfgError(.unauthenticated, "no token", field: "authorization")
        #expect(admission.admit(.document, none, caller: .failure(unauthenticated)).map(\.caller) == .success(.unidentified))
        #expect(admission.admit(.getKey, app, caller: .failure(unauthenticated)) == .failure(Admission.Refusal(unauthenticated)))
        guard case .failure(let scoped) = admission.admit(.listTokens, none, caller: .success(scopedAdmin)) else {
            Issue.record("a scoped admin reached every config's tokens")
            return
        }
        #expect(scoped.error.message.contains("scoped to some configs"))
    }
}
