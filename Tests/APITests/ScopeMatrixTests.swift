import DiscfgAPI
import DiscfgCore
import DiscfgService
import DiscfgTestSupport
import Foundation
import NIOHTTP1
import Testing

/// Every route of the router's own table, called by callers scoped to a prefix and to the
/// whole config, at keys inside the prefix, at its own name, outside it, and on its
/// boundary (`/apple` beside `/app/`): 403 naming the scope when the request reaches past
/// every scope, else the route's own answer.
@Suite("API: the authorization matrix for prefix scopes, from the route table")
struct ScopeMatrixTests {
    /// A kind of caller: its token's role and scopes.
    struct CallerKind: Sendable, CustomStringConvertible {
        var role: Role
        var scopes: [String]
        var description: String { "\(role.rawValue)@\(scopes.joined(separator: "+"))" }
        var grant: AccessGrant { AccessGrant(role: role, scopes: scopes.map { try! AccessScope($0) }) }
    }

    static let callers: [CallerKind] = [
        CallerKind(role: .read, scopes: ["demo:/app/"]),
        CallerKind(role: .write, scopes: ["demo:/app"]),
        CallerKind(role: .admin, scopes: ["demo:/app/"]),
        CallerKind(role: .write, scopes: ["demo:/app/", "demo:etcd:/app/"]),
        CallerKind(role: .admin, scopes: ["demo:etcd:app/"]),
        CallerKind(role: .write, scopes: ["demo"]),
    ]

    /// Where a request points: a key and a prefix.
    struct Target: Sendable, CustomStringConvertible {
        var name: String
        var key: String
        var prefix: String
        var description: String { name }
    }

    static let targets: [Target] = [
        Target(name: "inside", key: "/app/k", prefix: "/app/sub/"),
        Target(name: "the prefix's own key", key: "/app", prefix: "/app/"),
        Target(name: "outside", key: "/db/password", prefix: "/"),
        Target(name: "boundary", key: "/apple", prefix: "/apple/"),
        Target(name: "case", key: "/App/k", prefix: "/App/"),
        Target(name: "etcd key", key: EtcdKeyPath.path(Array("/app/k".utf8)), prefix: "/.2Fapp.2F/"),
        Target(name: "etcd key without an escaped first byte", key: EtcdKeyPath.path(Array("app/k".utf8)), prefix: "/app.2F/"),
    ]

    /// What the request reaches, as the route reads it: a key, a prefix, or the config.
    enum Reach { case key(Key), prefix(KeyPrefix), config }

    /// A request of `route` at `target`: method, path (query included), body, and what it reaches.
    static func request(for route: Endpoint, at target: Target) throws -> (method: HTTPMethod, path: String, body: String?, reach: Reach) {
        let config = "/v1/demo"
        let key = try Key(target.key)
        let prefix = try KeyPrefix(target.prefix)
        let query = target.prefix.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "/-._")))!
        switch route {
        case .document: return (.GET, "/openapi.yaml", nil, .config)
        case .sweep: return (.POST, "/admin/sweep", "", .config)
        case .listTokens: return (.GET, "/admin/tokens", nil, .config)
        case .createToken: return (.POST, "/admin/tokens", #"{"role": "read"}"#, .config)
        case .revokeToken: return (.DELETE, "/admin/tokens/0123456789ab", nil, .config)
        case .listConfigs: return (.GET, "/v1/configs", nil, .config)
        case .createConfig: return (.PUT, "/v1/other", "{}", .config)
        case .configInfo: return (.GET, config, nil, .config)
        case .updateConfig: return (.PATCH, config, "{}", .config)
        case .deleteConfig: return (.DELETE, config, nil, .config)
        case .compact: return (.POST, config + "/compact", "", .config)
        case .listSchemas: return (.GET, config + "/schemas", nil, .config)
        case .getSchema: return (.GET, config + "/schema?target=/app/", nil, .config)
        case .setSchema: return (.PUT, config + "/schema?target=/app/", #"{"type": "string"}"#, .config)
        case .deleteSchema: return (.DELETE, config + "/schema?target=/app/", nil, .config)
        case .listDeployments: return (.GET, config + "/deployments", nil, .config)
        // A start the store refuses after the gate (discfg's own prefix), so no deployment
        // runs over the keys later cells write.
        case .startDeployment: return (.POST, config + "/deployments?strategy=AllAtOnce&prefix=/.discfg/", #"{"\#(key.path)": "v"}"#, .config)
        case .getDeployment: return (.GET, config + "/deployments/00000000000000a1", nil, .config)
        case .changeDeployment: return (.POST, config + "/deployments/00000000000000a1/pause", nil, .config)
        case .reportHealth:
            return (.PUT, config + "/deployments/00000000000000a1/health", #"{"reporter": "r", "stable": {"requests": 1, "errors": 0, "readers": 1}, "candidate": {"requests": 1, "errors": 0, "readers": 1}, "at": 1}"#, .config)
        case .deploymentHealth: return (.GET, config + "/deployments/00000000000000a1/health", nil, .config)
        case .recordHealth: return (.POST, config + "/health", #"{"version": "candidate", "errors": 1}"#, .config)
        case .listKeys: return (.GET, config + "/keys?prefix=\(query)", nil, .prefix(prefix))
        case .deletePrefix: return (.DELETE, config + "/keys?prefix=\(query)&recursive", nil, .prefix(prefix))
        case .getKey: return (.GET, config + "/keys" + key.path, nil, .key(key))
        case .setKey: return (.PUT, config + "/keys" + key.path, "v", .key(key))
        case .patchKey: return (.PATCH, config + "/keys" + key.path, #"{"a": 1}"#, .key(key))
        case .deleteKey: return (.DELETE, config + "/keys" + key.path, nil, .key(key))
        case .setDocument: return (.PUT, config + "/keys?document", "{}", .prefix(.root))
        case .history: return (.GET, config + "/history" + key.path, nil, .key(key))
        case .watch: return (.GET, config + "/watch?prefix=\(query)&timeout=0", nil, .prefix(prefix))
        case .export: return (.GET, config + "/export", nil, .prefix(.root))
        case .importSnapshot: return (.POST, config + "/import", #"{"\#(key.path)": "v"}"#, .key(key))
        case .transaction: return (.POST, config + "/txn", #"{"success": [{"op": "put", "key": "\#(key.path)", "value": "x"}]}"#, .key(key))
        // Flag evaluations and their events read /flags/ wherever the request points.
        case .evaluateFlag: return (.POST, config + "/ofrep/v1/evaluate/flags/f", #"{"context": {}}"#, .prefix(ConfigFlags.prefix))
        case .evaluateFlags: return (.POST, config + "/ofrep/v1/evaluate/flags", #"{"context": {}}"#, .prefix(ConfigFlags.prefix))
        case .flagEvents: return (.GET, config + "/ofrep/v1/events", nil, .prefix(ConfigFlags.prefix))
        case .appConfigFlags: return (.GET, "/applications/demo/environments/prod/configurations/web", nil, .key(try Key("/flags/web")))
        }
    }

    /// The role a request of the matrix needs on `route`: its action's, and a write for
    /// the transaction, whose body puts.
    static func needed(_ route: Endpoint) -> Role? {
        route == .transaction ? .write : route.kind.role
    }

    /// Whether the route lets `kind` in at `reach`, as the model says.
    static func admits(_ route: Endpoint, _ kind: CallerKind, _ reach: Reach) -> Bool {
        let demo = try! ConfigName("demo")
        let grant = kind.grant
        guard let role = needed(route) else { return true }
        switch route.kind.reach {
        case .open: return true
        case .server: return false
        case .configs, .config: return route == .listConfigs ? grant.role >= role : grant.allows(role, on: demo)
        case .keys:
            return switch reach {
            case .key(let key): grant.allows(role, on: demo, key: key)
            case .prefix(let prefix): grant.allows(role, on: demo, keysUnder: prefix)
            case .config: grant.allows(role, on: demo)
            }
        }
    }

    @Test("serve: every route × every scoped caller × inside, own key, outside, boundary, case, etcd key")
    func serve() async throws {
        try await withServer(try await LiveServer.start(auth: .required)) { server in
            var tokens: [String: String] = [:]
            for kind in Self.callers {
                let (token, record) = try TokenFormat.generate(role: kind.role, scopes: kind.grant.scopes, description: kind.description, now: Date())
                try await server.store.saveToken(record)
                tokens[kind.description] = token
            }
            let demo = try ConfigName("demo")
            var cells = 0
            var refused = 0
            for route in ConfigAPI.routes {
                for kind in Self.callers {
                    for target in Self.targets {
                        // Each cell on a fresh config holding the target, so earlier deletes change nothing.
                        _ = try? await server.store.createConfig(demo, settings: ConfigSettings())
                        _ = try await server.store.set(try Key(target.key), to: Data(#"{"a": 0}"#.utf8), in: demo, options: SetOptions())
                        let (method, path, body, reach) = try Self.request(for: route, at: target)
                        // An event stream let in would not end: a bad Last-Event-ID ends it once the gate has let it in.
                        let resume = route == .flagEvents ? [("Last-Event-ID", "x")] : []
                        let reply = try await server.request(method, path, body: body.map { Data($0.utf8) }, headers: [("Authorization", "Bearer \(tokens[kind.description]!)")] + resume)
                        let cell = "\(route) as \(kind) at \(target): \(reply.status) \(reply.text.prefix(300))"
                        if Self.admits(route, kind, reach) {
                            #expect(reply.status != 401 && reply.status != 403 && reply.status < 500, "\(cell)")
                        } else {
                            #expect(reply.status == 403, "\(cell)")
                            refused += 1
                            if route.kind.reach == .keys, let needed = Self.needed(route), kind.role >= needed {
                                #expect(reply.text.contains(kind.grant.scopeList(on: demo)), "the refusal names the scope: \(cell)")
                            }
                        }
                        cells += 1
                    }
                }
            }
            #expect(cells == ConfigAPI.routes.count * Self.callers.count * Self.targets.count)
            // Both halves of the matrix are there: most cells of prefix callers refused, some let in.
            #expect(refused > cells / 2 && refused < cells - 100, "\(refused) of \(cells) refused")
        }
    }

    /// The escaped prefix range of an etcd scope whose first byte needs no escape
    /// (`app/` is `[/app.2F, /app0)`) holds the discfg keys under `/app/`: a transaction's
    /// range reaches every key, so no etcd scope holds one, whichever way it is named.
    static let rangeTransactions: [(name: String, body: String)] = [
        ("get", #"{"success": [{"op": "get", "from": "/app.2F", "to": "/app0"}]}"#),
        ("delete", #"{"success": [{"op": "delete", "from": "/app.2F", "to": "/app0"}]}"#),
        ("delete in failure", #"{"compare": [{"key": "/app.2Fk", "target": "exists", "result": "=", "value": false}], "failure": [{"op": "delete", "from": "/app.2F", "to": "/app0"}]}"#),
        ("compare", #"{"compare": [{"from": "/app.2F", "to": "/app0", "target": "value", "result": "=", "value": "hunter2"}], "success": [{"op": "put", "key": "/app.2Fhit", "value": "1"}]}"#),
        ("open-ended get", #"{"success": [{"op": "get", "from": "/app.2F"}]}"#),
    ]

    @Test("serve: an etcd-space scope reaches no discfg key through a transaction's range (get, delete, compare), and changes nothing")
    func etcdScopeRangesOverREST() async throws {
        try await withServer(try await LiveServer.start(auth: .required)) { server in
            let demo = try ConfigName("demo")
            _ = try await server.store.createConfig(demo, settings: ConfigSettings())
            for (key, value) in [("/app/db/password", "hunter2"), ("/app/db/user", "root"), ("/app.2Fk", "etcd")] {
                _ = try await server.store.set(try Key(key), to: Data(value.utf8), in: demo, options: SetOptions())
            }
            for kind in [CallerKind(role: .admin, scopes: ["demo:etcd:app/"]), CallerKind(role: .write, scopes: ["demo:etcd:app/", "demo:etcd:config/"])] {
                let (token, record) = try TokenFormat.generate(role: kind.role, scopes: kind.grant.scopes, description: kind.description, now: Date())
                try await server.store.saveToken(record)
                let auth = [("Authorization", "Bearer \(token)")]
                for (name, body) in Self.rangeTransactions {
                    let reply = try await server.request(.POST, "/v1/demo/txn", body: Data(body.utf8), headers: auth)
                    #expect(reply.status == 403, "\(kind) \(name): \(reply.status) \(reply.text)")
                    #expect(reply.text.contains("demo:etcd:app/") && !reply.text.contains("hunter2"), "\(kind) \(name): \(reply.text)")
                }
                // The etcd key itself is inside, by key.
                let own = try await server.request(.GET, "/v1/demo/keys/app.2Fk", headers: auth)
                #expect(own.status == 200, "\(own.text)")
                let discfg = try await server.request(.GET, "/v1/demo/keys/app/db/password", headers: auth)
                #expect(discfg.status == 403, "\(discfg.text)")
            }
            #expect(try await server.store.get(try Key("/app/db/password"), in: demo)?.value == Data("hunter2".utf8))
            #expect(try await server.store.get(try Key("/app/db/user"), in: demo)?.value == Data("root".utf8))
            #expect(try await server.store.get(try Key("/app.2Fhit"), in: demo) == nil)
        }
    }

    /// The cells the model must answer as written here, not as it computes: the boundary
    /// of a prefix, a list or watch of `/`, the config's own routes.
    @Test("the boundary cells, spelled out")
    func spelledOut() throws {
        let writer = Self.callers[1]
        let at = { (route: Endpoint, target: Int) in Self.admits(route, writer, try Self.request(for: route, at: Self.targets[target]).reach) }
        #expect(try at(.setKey, 0) && at(.setKey, 1))
        #expect(try !at(.setKey, 2) && !at(.setKey, 3) && !at(.setKey, 4) && !at(.setKey, 5))
        #expect(try at(.listKeys, 0) && at(.listKeys, 1) && !at(.listKeys, 2) && !at(.listKeys, 3))
        #expect(try at(.watch, 1) && !at(.watch, 2))
        #expect(try !at(.export, 0) && !at(.setDocument, 0) && !at(.configInfo, 0) && !at(.compact, 0) && !at(.setSchema, 0))
        #expect(try at(.transaction, 0) && !at(.transaction, 3) && at(.importSnapshot, 1) && !at(.importSnapshot, 3))
        let whole = Self.callers[5]
        #expect(try Self.admits(.export, whole, Self.request(for: .export, at: Self.targets[2]).reach))
    }
}
