import DiscfgAPI
import DiscfgCore
import DiscfgService
import DiscfgTestSupport
import Foundation
import Testing

/// The router's route table, called through API Gateway by IAM principals of every
/// role (DISCFG_IAM_ROLES) and by a caller with no IAM identity.
@Suite("Lambda: the authorization matrix, from the route table")
struct LambdaAuthorizationMatrixTests {
    static let account = "arn:aws:iam::123456789012:user/"
    /// Principal name, role rule, and the caller it stands for; nil: no IAM identity.
    static let principals: [(name: String, rule: String?, caller: Caller?)] = [
        ("anonymous", nil, nil),
        ("reader", "read", Caller(name: "reader", role: .read)),
        ("writer", "write", Caller(name: "writer", role: .write)),
        ("admin", "admin", Caller(name: "admin", role: .admin)),
        ("scoped-reader", "read@other", Caller(name: "scoped-reader", role: .read, configs: [try! ConfigName("other")])),
        ("scoped-admin", "admin@other", Caller(name: "scoped-admin", role: .admin, configs: [try! ConfigName("other")])),
        ("stranger", nil, Caller(name: "stranger", role: .read, configs: [])),
        ("prefix-writer", "write@app:/k/", Caller(name: "prefix-writer", role: .write, scopes: [try! AccessScope("app:/k/")])),
    ]

    /// The routes a writer scoped to `app:/k/` reaches with the requests below: the key
    /// `/k` (its prefix's own key), an import or a txn that names no key, and the list of
    /// configs; every listing, watch or export of `/`, a delete of `/nothing/`, and the
    /// config's own routes are refused.
    static func prefixWriterAdmitted(_ route: Endpoint) -> Bool {
        switch route {
        case .getKey, .setKey, .patchKey, .deleteKey, .history, .importSnapshot, .transaction, .listConfigs: true
        default: false
        }
    }

    @Test("every route × every IAM caller, through the real function")
    func matrix() async throws {
        try await withMotoTable { table in
            try await table.createConfig("app")
            let roles = Self.principals.compactMap { entry in entry.rule.map { "\(Self.account)\(entry.name)=\($0)" } }.joined(separator: ",")
            try await withLambda(table, environment: ["DISCFG_IAM_ROLES": roles]) { lambda in
                for route in ConfigAPI.routes {
                    for principal in Self.principals {
                        let path = route.path.replacingOccurrences(of: "{config}", with: "app").replacingOccurrences(of: "{key}", with: "k")
                        var query: [(String, String)] = []
                        switch route.description {
                        case "DELETE /v1/{config}/keys": query = [("prefix", "/nothing/"), ("recursive", "")]
                        case "GET /v1/{config}/watch": query = [("timeout", "0")]
                        default: break
                        }
                        let body: String? = switch route.method {
                        case .put, .patch: route.path.hasSuffix("{key}") ? "v" : "{}"
                        case .post: route.path.hasSuffix("import") || route.path.hasSuffix("txn") ? "{}" : ""
                        default: nil
                        }
                        let request = GatewayEvent.Request(route.method.rawValue, path, query: query, body: body.map { Data($0.utf8) })
                        let arn = principal.name == "anonymous" ? nil : Self.account + principal.name
                        let (reply, _) = try await lambda.request(GatewayEvent.httpAPI(request, callerARN: arn))
                        let config: ConfigName? = route.path.contains("{config}") ? try ConfigName("app") : nil
                        let cell = "\(route) as \(principal.name): \(reply.statusCode) \(reply.raw)"
                        // Behind API Gateway the function admits only principals it knows,
                        // before any route: even the document needs a role there.
                        if route.kind.role == nil, principal.rule != nil {
                            #expect(reply.statusCode == 200, "\(cell)")
                        } else if principal.caller == nil {
                            #expect(reply.statusCode == 401, "\(cell)")
                        } else if principal.caller?.scopes?.contains(where: { !$0.isWholeConfig }) == true {
                            if Self.prefixWriterAdmitted(route) {
                                #expect(![401, 403].contains(reply.statusCode) && reply.statusCode < 500, "\(cell)")
                            } else {
                                #expect(reply.statusCode == 403, "\(cell)")
                            }
                        } else if principal.rule == nil || !route.admits(principal.caller!, config: config) {
                            #expect(reply.statusCode == 403, "\(cell)")
                        } else {
                            #expect(![401, 403].contains(reply.statusCode) && reply.statusCode < 500, "\(cell)")
                        }
                        if route.description == "DELETE /v1/{config}", reply.statusCode == 200 {
                            let (created, _) = try await lambda.request(GatewayEvent.httpAPI(GatewayEvent.Request("PUT", "/v1/app", body: Data("{}".utf8)), callerARN: Self.account + "admin"))
                            #expect(created.statusCode == 201, "\(created.raw)")
                        }
                    }
                }
            }
        }
    }
}
