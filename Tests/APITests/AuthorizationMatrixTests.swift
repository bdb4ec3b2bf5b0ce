import DiscfgAPI
import DiscfgCore
import DiscfgService
import DiscfgTestSupport
import Foundation
import NIOHTTP1
import Testing

/// Every route of the router's own table, called by every kind of caller, answers as
/// the route's declared access says: 401 without credentials, 403 for a caller the
/// access does not admit, and neither for one it does.
@Suite("API: the authorization matrix, from the route table")
struct AuthorizationMatrixTests {
    /// A kind of caller: its token's role and scope, or no token.
    struct CallerKind: Sendable, CustomStringConvertible {
        var name: String
        var role: Role?
        var configs: [ConfigName]?
        var description: String { name }

        var caller: Caller? { role.map { Caller(name: name, role: $0, configs: configs) } }
    }

    static let callers: [CallerKind] = [
        CallerKind(name: "anonymous", role: nil),
        CallerKind(name: "read", role: .read),
        CallerKind(name: "write", role: .write),
        CallerKind(name: "admin", role: .admin),
        CallerKind(name: "read@other", role: .read, configs: [try! ConfigName("other")]),
        CallerKind(name: "admin@other", role: .admin, configs: [try! ConfigName("other")]),
    ]

    /// A request that reaches the route's handler: path filled in, and a body or
    /// query it needs to get past parsing.
    static func request(for route: Endpoint) -> (method: String, path: String, body: String?) {
        var path = route.path.replacingOccurrences(of: "{config}", with: "app").replacingOccurrences(of: "{key}", with: "k").replacingOccurrences(of: "{id}", with: "0123456789ab")
            .replacingOccurrences(of: "{action}", with: "pause")
        switch route.description {
        case "DELETE /v1/{config}/keys": path += "?prefix=/nothing/&recursive"
        case "GET /v1/{config}/watch": path += "?timeout=0"
        default: break
        }
        let body: String? = switch route.method {
        case .put, .patch: route.path.hasSuffix("{key}") ? "v" : "{}"
        case .post: route.path.hasSuffix("import") || route.path.hasSuffix("txn") ? "{}" : ""
        default: nil
        }
        return (route.method.rawValue, path, body)
    }

    /// What the route must answer this caller: 401, 403, or nil for "let in".
    static func refusal(_ route: Endpoint, _ kind: CallerKind) -> Int? {
        if route.kind.role == nil { return nil }
        guard let caller = kind.caller else { return 401 }
        let config: ConfigName? = route.path.contains("{config}") ? try! ConfigName("app") : nil
        return route.admits(caller, config: config) ? nil : 403
    }

    @Test("serve: every route × every caller")
    func serve() async throws {
        try await withServer(try await LiveServer.start(auth: .required)) { server in
            var tokens: [String: String] = [:]
            for kind in Self.callers {
                guard let role = kind.role else { continue }
                let (token, record) = try TokenFormat.generate(role: role, configs: kind.configs, description: kind.name, now: Date())
                try await server.store.saveToken(record)
                tokens[kind.name] = token
            }
            #expect(ConfigAPI.routes.count >= 16)
            var cells = 0
            for route in ConfigAPI.routes {
                for kind in Self.callers {
                    // Each cell on a fresh config, so a delete earlier in the row changes nothing.
                    _ = try? await server.store.createConfig(try ConfigName("app"), settings: ConfigSettings())
                    let (method, path, body) = Self.request(for: route)
                    // An event stream let in would not end: a bad Last-Event-ID ends it once the gate has let it in.
                    let resume = route == .flagEvents ? [("Last-Event-ID", "x")] : []
                    let headers = (tokens[kind.name].map { [("Authorization", "Bearer \($0)")] } ?? []) + resume
                    let reply = try await server.request(HTTPMethod(rawValue: method), path, body: body.map { Data($0.utf8) }, headers: headers)
                    let expected = Self.refusal(route, kind)
                    if let expected {
                        #expect(reply.status == expected, "\(route) as \(kind): \(reply.status) \(reply.text)")
                    } else {
                        #expect(reply.status != 401 && reply.status != 403 && reply.status < 500, "\(route) as \(kind): \(reply.status) \(reply.text)")
                    }
                    cells += 1
                }
            }
            #expect(cells == ConfigAPI.routes.count * Self.callers.count)
        }
    }
}
