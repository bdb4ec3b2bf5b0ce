import DiscfgAPI
import DiscfgCore
@testable import DiscfgLambda
import Foundation
import Testing

/// `ROLE@CONFIG:/prefix/` in DISCFG_IAM_ROLES: read, and held by the function behind API
/// Gateway on every route as on `serve`.
@Suite("Lambda: IAM rules scoped to prefixes")
struct LambdaScopeTests {
    static let account = "arn:aws:iam::123456789012:user/"

    @Test("DISCFG_IAM_ROLES takes prefix scopes joined with '+', and refuses bad ones naming the variable")
    func parsing() throws {
        let access = try LambdaAccess(environment: ["DISCFG_IAM_ROLES": "arn:aws:iam::1:role/deploy=write@app:/app/feature/+app:etcd:/registry/+web"])
        let caller = try #require(access.caller(forPrincipal: "arn:aws:iam::1:role/deploy"))
        #expect(caller.scopes?.map(\.description) == ["app:/app/feature/", "app:etcd:/registry/", "web"])
        #expect(caller.configs == [try ConfigName("app"), try ConfigName("web")])
        for (rule, words) in [
            ("a=write@app:", "names no prefix"), ("a=write@app:feature", "does not start with '/'"), ("a=write@app:/", "root prefix"),
            ("a=write@app:etcd:", "no etcd prefix"), ("a=write@:/app/", "must not be empty"), ("a=write@app:/x//y", "empty segment"),
            ("a=write@app:/x+", "empty scope"), ("a=write@bad name:/x/", "bad name"),
        ] {
            let error = #expect(throws: DiscfgError.self, "\(rule)") { try LambdaAccess(environment: ["DISCFG_IAM_ROLES": rule]) }
            #expect(error?.field == "DISCFG_IAM_ROLES" && error?.message.contains(words) == true, "\(rule): \(String(describing: error))")
        }
    }

    @Test("a scoped IAM principal reaches its prefix and nothing past it, through the real function")
    func scopedPrincipal() async throws {
        try await withMotoTable { table in
            try await table.createConfig("app")
            let roles = "\(Self.account)deployer=write@app:/app/,\(Self.account)admin=admin"
            try await withLambda(table, environment: ["DISCFG_IAM_ROLES": roles]) { lambda in
                func call(_ method: String, _ path: String, query: [(String, String)] = [], body: String? = nil) async throws -> (Int, String) {
                    let request = GatewayEvent.Request(method, path, query: query, body: body.map { Data($0.utf8) })
                    let (reply, _) = try await lambda.request(GatewayEvent.httpAPI(request, callerARN: Self.account + "deployer"))
                    return (reply.statusCode, reply.raw)
                }
                #expect(try await call("PUT", "/v1/app/keys/app/feature", body: "on").0 == 201)
                #expect(try await call("GET", "/v1/app/keys/app/feature").0 == 200)
                #expect(try await call("GET", "/v1/app/keys", query: [("prefix", "/app/")]).0 == 200)
                for (method, path, query, body) in [
                    ("PUT", "/v1/app/keys/apple", [(String, String)](), "x"), ("PUT", "/v1/app/keys/db/password", [], "x"),
                    ("GET", "/v1/app/keys", [("prefix", "/")], nil), ("GET", "/v1/app/export", [], nil),
                    ("GET", "/v1/app/watch", [("timeout", "0")], nil), ("GET", "/v1/app", [], nil),
                    ("POST", "/v1/app/txn", [], #"{"success": [{"op": "put", "key": "/app/a", "value": "1"}, {"op": "put", "key": "/db/b", "value": "2"}]}"#),
                ] {
                    let (status, text) = try await call(method, path, query: query, body: body)
                    #expect(status == 403 && text.contains("app:/app/"), "\(method) \(path) \(query): \(status) \(text)")
                }
                let (status, text) = try await call("GET", "/v1/app/keys/app/a")
                #expect(status == 404, "the refused transaction wrote nothing: \(status) \(text)")
            }
        }
    }

    @Test("an etcd-space IAM scope reaches no discfg key through a transaction's range, through the real function")
    func etcdScopeRanges() async throws {
        try await withMotoTable { table in
            try await table.createConfig("app")
            let roles = "\(Self.account)etcd=admin@app:etcd:app/,\(Self.account)admin=admin"
            try await withLambda(table, environment: ["DISCFG_IAM_ROLES": roles]) { lambda in
                func call(_ who: String, _ method: String, _ path: String, body: String? = nil) async throws -> (Int, String) {
                    let request = GatewayEvent.Request(method, path, body: body.map { Data($0.utf8) })
                    let (reply, _) = try await lambda.request(GatewayEvent.httpAPI(request, callerARN: Self.account + who))
                    return (reply.statusCode, reply.raw)
                }
                #expect(try await call("admin", "PUT", "/v1/app/keys/app/db/password", body: "hunter2").0 == 201)
                for body in [
                    #"{"success": [{"op": "get", "from": "/app.2F", "to": "/app0"}]}"#,
                    #"{"success": [{"op": "delete", "from": "/app.2F", "to": "/app0"}]}"#,
                    #"{"compare": [{"from": "/app.2F", "to": "/app0", "target": "value", "result": "=", "value": "hunter2"}], "success": [{"op": "put", "key": "/app.2Fhit", "value": "1"}]}"#,
                ] {
                    let (status, text) = try await call("etcd", "POST", "/v1/app/txn", body: body)
                    #expect(status == 403 && text.contains("app:etcd:app/") && !text.contains("hunter2"), "\(body): \(status) \(text)")
                }
                let (status, text) = try await call("admin", "GET", "/v1/app/keys/app/db/password")
                #expect(status == 200 && text.contains("hunter2"), "the refused transactions deleted nothing: \(status) \(text)")
            }
        }
    }
}
