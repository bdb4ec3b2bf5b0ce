import DiscfgCore
import Foundation
import Testing

/// Function URL events (payload 2.0, no authorizer) with `DISCFG_AUTH=token`: bearer
/// tokens made by `discfg token create` against the same table.
@Suite("Lambda: Function URL with tokens")
struct FunctionURLTests {
    typealias Request = GatewayEvent.Request

    @Test("401 without a token or with a wrong one; a token from discfg token create works within its role")
    func tokens() async throws {
        try await withMotoTable { table in
            try await table.createConfig("app")
            let writer = try #require(try await table.cli.json("token", "create", "--role", "write", "--description", "lambda test").token)
            let reader = try #require(try await table.cli.json("token", "create", "--role", "read", "--scope", "app").token)
            try await withLambda(table, environment: ["DISCFG_AUTH": "token"]) { lambda in
                let (bare, _) = try await lambda.request(GatewayEvent.functionURL(Request("GET", "/v1/app/keys/x")))
                #expect(bare.statusCode == 401, "\(bare.raw)")
                #expect(try bare.envelope().error?.code == .unauthenticated)
                #expect(bare.header("www-authenticate")?.hasPrefix("Bearer") == true, "\(bare.raw)")

                let (wrong, _) = try await lambda.request(GatewayEvent.functionURL(Request(
                    "GET", "/v1/app/keys/x", headers: [("Authorization", "Bearer dcfg_nope_0000000000000000")]
                )))
                #expect(wrong.statusCode == 401, "\(wrong.raw)")

                let (put, _) = try await lambda.request(GatewayEvent.functionURL(Request(
                    "PUT", "/v1/app/keys/x", headers: [("authorization", "Bearer \(writer)"), ("content-type", "text/plain")], text: "hello"
                )))
                #expect(put.statusCode == 201, "\(put.raw)")
                #expect(put.fields.contains("cookies") && !put.fields.contains("multiValueHeaders"), "the 2.0 response format: \(put.raw)")

                let (got, _) = try await lambda.request(GatewayEvent.functionURL(Request(
                    "GET", "/v1/app/keys/x", headers: [("authorization", "Bearer \(reader)")]
                )))
                #expect(got.statusCode == 200, "\(got.raw)")
                #expect(try got.envelope().item?.value == "hello")

                let (readOnly, _) = try await lambda.request(GatewayEvent.functionURL(Request(
                    "PUT", "/v1/app/keys/x", headers: [("authorization", "Bearer \(reader)")], text: "changed"
                )))
                #expect(readOnly.statusCode == 403, "\(readOnly.raw)")
            }
            #expect(try await table.cli.json("get", "app", "x").item?.value == "hello")
        }
    }

    @Test("with DISCFG_AUTH=token the function serves the web console at /ui/ with its Content-Security-Policy to anyone; the API it calls still wants a token")
    func console() async throws {
        try await withMotoTable { table in
            try await withLambda(table, environment: ["DISCFG_AUTH": "token"]) { lambda in
                let (page, _) = try await lambda.request(GatewayEvent.functionURL(Request("GET", "/ui/")))
                #expect(page.statusCode == 200, "\(page.raw)")
                #expect(page.header("content-type") == "text/html; charset=utf-8")
                #expect(page.header("content-security-policy")?.hasPrefix("default-src 'none'; script-src 'self';") == true, "\(page.raw)")
                #expect(page.body.contains("<title>discfg console</title>"))
                let (api, _) = try await lambda.request(GatewayEvent.functionURL(Request("GET", "/v1/configs")))
                #expect(api.statusCode == 401, "\(api.raw)")
            }
        }
    }

    @Test("DISCFG_AUTH=iam,token: a bearer token is checked as a token, otherwise the IAM identity decides")
    func iamAndToken() async throws {
        try await withMotoTable { table in
            try await table.createConfig("app")
            let reader = try #require(try await table.cli.json("token", "create", "--role", "read").token)
            try await withLambda(table, environment: ["DISCFG_AUTH": "iam,token"]) { lambda in
                let (iam, _) = try await lambda.request(GatewayEvent.httpAPI(Request("PUT", "/v1/app/keys/k", text: "v")))
                #expect(iam.statusCode == 201, "the IAM caller (default role admin) writes: \(iam.raw)")
                let (token, _) = try await lambda.request(GatewayEvent.httpAPI(
                    Request("PUT", "/v1/app/keys/k", headers: [("Authorization", "Bearer \(reader)")], text: "w")
                ))
                #expect(token.statusCode == 403, "the token, not the IAM identity, decides: \(token.raw)")
                let (bad, _) = try await lambda.request(GatewayEvent.httpAPI(
                    Request("GET", "/v1/app/keys/k", headers: [("Authorization", "Bearer dcfg_nope_0000000000000000")])
                ))
                #expect(bad.statusCode == 401, "a bad token is not rescued by the IAM identity: \(bad.raw)")
            }
        }
    }
}
