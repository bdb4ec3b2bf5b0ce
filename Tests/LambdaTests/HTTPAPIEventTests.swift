import DiscfgCore
import Foundation
import Testing

/// HTTP API events (payload 2.0) whose routes use the IAM authorizer: the caller's ARN
/// decides the role through `DISCFG_IAM_ROLES`.
@Suite("Lambda: HTTP API payload 2.0 with IAM")
struct HTTPAPIEventTests {
    typealias Request = GatewayEvent.Request

    static let reader = "arn:aws:iam::123456789012:user/reader"
    static let deployer = "arn:aws:sts::123456789012:assumed-role/deployer/ci-run-42"
    static let stranger = "arn:aws:iam::210987654321:user/someone"

    @Test("an IAM caller works; the 2.0 response has headers and cookies, no multiValueHeaders")
    func works() async throws {
        try await withMotoTable { table in
            try await table.createConfig("app")
            try await withLambda(table) { lambda in
                let (put, _) = try await lambda.request(GatewayEvent.httpAPI(
                    Request("PUT", "/v1/app/keys/feature/flag", headers: [("Content-Type", "application/json")], text: "true"),
                    cookies: ["session=abc123", "theme=dark"]
                ))
                #expect(put.statusCode == 201, "\(put.raw)")
                #expect(put.fields.contains("cookies"), "the 2.0 response names its cookies: \(put.raw)")
                #expect(put.cookies == [], "discfg sets no cookies: \(put.raw)")
                #expect(!put.fields.contains("multiValueHeaders"), "\(put.raw)")
                #expect(put.fields.isSubset(of: ["statusCode", "headers", "cookies", "body", "isBase64Encoded"]), "\(put.raw)")
                let revision = try #require(try put.envelope().revision)
                #expect(put.header("etag") == "\"\(revision.rawValue)\"")

                let (got, _) = try await lambda.request(GatewayEvent.httpAPI(
                    Request("GET", "/v1/app/keys/feature/flag", query: [("format", "json")])
                ))
                #expect(got.statusCode == 200, "\(got.raw)")
                #expect(got.body.contains(#""value":true"#), "rawQueryString is read: \(got.body)")
                #expect(got.header("content-type")?.hasPrefix("application/json") == true)
            }
        }
    }

    @Test("DISCFG_IAM_ROLES maps caller ARNs to roles: a read caller gets 403 on PUT and 200 on GET; the ARN is logged with the request id")
    func roles() async throws {
        try await withMotoTable { table in
            try await table.createConfig("app")
            try await table.createConfig("other")
            _ = try await table.cli.json("set", "app", "db/host", "db.internal")
            _ = try await table.cli.json("set", "other", "x", "1")
            let roles = "\(Self.reader)=read,arn:aws:sts::123456789012:assumed-role/deployer/*=write@app"
            try await withLambda(table, environment: ["DISCFG_IAM_ROLES": roles]) { lambda in
                let (denied, deniedInvocation) = try await lambda.request(GatewayEvent.httpAPI(
                    Request("PUT", "/v1/app/keys/db/host", text: "evil"), callerARN: Self.reader
                ))
                #expect(denied.statusCode == 403, "\(denied.raw)")
                #expect(try denied.envelope().error?.code == .permissionDenied)
                let lines = await lambda.logLines(requestID: deniedInvocation.requestID) { $0.contains(Self.reader) }
                #expect(lines.contains { $0.contains(Self.reader) }, "the caller ARN is logged with the request id:\n\(lambda.process.output.logs)\n\(lambda.process.output.termination?.description ?? "running")")

                let (read, _) = try await lambda.request(GatewayEvent.httpAPI(Request("GET", "/v1/app/keys/db/host"), callerARN: Self.reader))
                #expect(read.statusCode == 200, "\(read.raw)")
                #expect(try read.envelope().item?.value == "db.internal")

                // A wildcard pattern, scoped to one config.
                let (written, _) = try await lambda.request(GatewayEvent.httpAPI(
                    Request("PUT", "/v1/app/keys/db/port", headers: [("Discfg-Message", "open%20the%20port")], text: "5432"), callerARN: Self.deployer
                ))
                #expect(written.statusCode == 201, "\(written.raw)")
                let change = try written.envelope()
                #expect(change.by == Principal(kind: .iam, id: Self.deployer), "the change records the caller's ARN: \(written.raw)")
                #expect(change.message == "open the port")
                let (outOfScope, _) = try await lambda.request(GatewayEvent.httpAPI(Request("GET", "/v1/other/keys/x"), callerARN: Self.deployer))
                #expect(outOfScope.statusCode == 403, "write@app does not reach config other: \(outOfScope.raw)")

                // No pattern matches and no DISCFG_IAM_DEFAULT_ROLE: refused.
                let (stranger, _) = try await lambda.request(GatewayEvent.httpAPI(
                    Request("PUT", "/v1/other/keys/x", text: "2"), callerARN: Self.stranger
                ))
                #expect(stranger.statusCode == 403, "invoking the API made a stranger an admin: \(stranger.raw)")
                let (strangerReads, _) = try await lambda.request(GatewayEvent.httpAPI(Request("GET", "/v1/app"), callerARN: Self.stranger))
                #expect(strangerReads.statusCode == 403, "\(strangerReads.raw)")
            }
            #expect(try await table.cli.json("get", "app", "db/host").item?.value == "db.internal", "the refused write changed nothing")
        }
    }

    @Test("DISCFG_IAM_DEFAULT_ROLE=none refuses callers no pattern matches, and a request with no IAM identity is 401")
    func defaultRoleNone() async throws {
        try await withMotoTable { table in
            try await table.createConfig("app")
            let environment = ["DISCFG_IAM_ROLES": "\(Self.reader)=read", "DISCFG_IAM_DEFAULT_ROLE": "none"]
            try await withLambda(table, environment: environment) { lambda in
                let (refused, _) = try await lambda.request(GatewayEvent.httpAPI(Request("GET", "/v1/app/keys/x"), callerARN: Self.stranger))
                #expect(refused.statusCode == 403, "\(refused.raw)")
                let (reader, _) = try await lambda.request(GatewayEvent.httpAPI(Request("GET", "/v1/app/keys/x"), callerARN: Self.reader))
                #expect(reader.statusCode == 404, "the reader gets as far as the missing key: \(reader.raw)")
                let (anonymous, _) = try await lambda.request(GatewayEvent.httpAPI(Request("GET", "/v1/app/keys/x"), callerARN: nil))
                #expect(anonymous.statusCode == 401, "\(anonymous.raw)")
            }
        }
    }

    @Test("a REST API caller's identity.userArn is mapped the same way")
    func restAPIIdentity() async throws {
        try await withMotoTable { table in
            try await table.createConfig("app")
            try await withLambda(table, environment: ["DISCFG_IAM_ROLES": "\(Self.reader)=read", "DISCFG_IAM_DEFAULT_ROLE": "write"]) { lambda in
                let (denied, invocation) = try await lambda.request(GatewayEvent.restAPI(Request("PUT", "/v1/app/keys/k", text: "v"), callerARN: Self.reader))
                #expect(denied.statusCode == 403, "\(denied.raw)")
                #expect(await lambda.logLines(requestID: invocation.requestID) { $0.contains(Self.reader) }.contains { $0.contains(Self.reader) }, "\(lambda.process.output.stdout)")
                let (allowed, _) = try await lambda.request(GatewayEvent.restAPI(Request("PUT", "/v1/app/keys/k", text: "v"), callerARN: Self.stranger))
                #expect(allowed.statusCode == 201, "\(allowed.raw)")
            }
        }
    }
}
