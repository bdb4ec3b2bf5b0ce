import DiscfgCore
import Foundation
import Testing

/// API Gateway REST API proxy events (payload 1.0) through the real `discfg lambda`
/// against moto's DynamoDB.
@Suite("Lambda: REST API payload 1.0")
struct RestAPIEventTests {
    typealias Request = GatewayEvent.Request

    @Test("PUT then GET a key: statuses, ETag, the JSON envelope and multiValueHeaders")
    func putThenGet() async throws {
        try await withMotoTable { table in
            try await table.createConfig("app")
            try await withLambda(table) { lambda in
                let (put, putInvocation) = try await lambda.request(GatewayEvent.restAPI(Request(
                    "PUT", "/v1/app/keys/db/host", headers: [("Content-Type", "application/json")], text: #"{"json":"works"}"#
                )))
                #expect(put.statusCode == 201, "\(put.raw)")
                #expect(put.fields == ["statusCode", "headers", "multiValueHeaders", "body", "isBase64Encoded"], "\(put.raw)")
                let set = try put.envelope()
                #expect(set.action == "set")
                #expect(set.item?.value == #"{"json":"works"}"#)
                #expect(set.item?.version == 1)
                let revision = try #require(set.revision)
                #expect(put.header("ETag") == "\"\(revision.rawValue)\"")
                #expect(!(await lambda.logLines(requestID: putInvocation.requestID) { _ in true }).isEmpty, "a log line carries the request id:\n\(lambda.process.output.logs)\n\(lambda.process.output.termination?.description ?? "running")")

                let (got, _) = try await lambda.request(GatewayEvent.restAPI(Request("GET", "/v1/app/keys/db/host")))
                #expect(got.statusCode == 200, "\(got.raw)")
                #expect(got.isBase64Encoded == false)
                #expect(got.header("Content-Type")?.hasPrefix("application/json") == true)
                #expect(got.header("ETag") == "\"\(revision.rawValue)\"")
                #expect(got.multiValueHeader("ETag") == ["\"\(revision.rawValue)\""], "\(got.raw)")
                #expect(got.multiValueHeader("Content-Type")?.first?.hasPrefix("application/json") == true)
                let envelope = try got.envelope()
                #expect(envelope.action == "get")
                #expect(envelope.config == "app")
                #expect(envelope.item?.key == "/db/host")
                #expect(envelope.item?.value == #"{"json":"works"}"#)
                #expect(envelope.item?.modRevision == revision)

                // The stage in requestContext.path is not part of the route; the query string is read.
                let (parsed, _) = try await lambda.request(GatewayEvent.restAPI(Request("GET", "/v1/app/keys/db/host", query: [("format", "json")])))
                #expect(parsed.statusCode == 200)
                #expect(parsed.body.contains(#""value":{"json":"works"}"#), "?format=json parses the value: \(parsed.body)")

                let cli = try await table.cli.json("get", "app", "db/host")
                #expect(cli.item?.value == #"{"json":"works"}"#, "the CLI reads what the function wrote")
            }
        }
    }

    @Test("a base64 request body is decoded; binary values come back base64 with ?raw, text values as text")
    func binaryValues() async throws {
        try await withMotoTable { table in
            try await table.createConfig("app")
            let bytes = Data([0xFF, 0xFE, 0x00, 0x80, 0xC3, 0x28, 0x0A])
            try await withLambda(table) { lambda in
                let (put, _) = try await lambda.request(GatewayEvent.restAPI(Request(
                    "PUT", "/v1/app/keys/certs/blob", headers: [("Content-Type", "application/octet-stream")], body: bytes, base64Body: true
                )))
                #expect(put.statusCode == 201, "\(put.raw)")
                let stored = try await table.cli.run("get", "app", "certs/blob", "--raw")
                #expect(stored.stdoutData == bytes, "the store holds the decoded bytes, not the base64 text")

                let (raw, _) = try await lambda.request(GatewayEvent.restAPI(Request("GET", "/v1/app/keys/certs/blob", query: [("raw", "")])))
                #expect(raw.statusCode == 200, "\(raw.raw)")
                #expect(raw.isBase64Encoded == true, "\(raw.raw)")
                #expect(try raw.bodyData == bytes)
                #expect(raw.header("Content-Type") == "application/octet-stream")

                let (json, _) = try await lambda.request(GatewayEvent.restAPI(Request("GET", "/v1/app/keys/certs/blob")))
                #expect(json.isBase64Encoded == false, "the JSON envelope is text")
                let item = try #require(try json.envelope().item)
                #expect(item.encoding == "base64")
                #expect(Data(base64Encoded: item.value) == bytes)
            }
            _ = try await table.cli.json("set", "app", "greeting", "hello, wörld", "--content-type", "text/plain; charset=utf-8")
            _ = try await table.cli.json("set", "app", "settings.yaml", "a: 1\n", "--content-type", "application/yaml")
            try await withLambda(table) { lambda in
                let (text, _) = try await lambda.request(GatewayEvent.restAPI(Request("GET", "/v1/app/keys/greeting", query: [("raw", "")])))
                #expect(text.statusCode == 200)
                #expect(text.isBase64Encoded == false, "text/* is sent as text: \(text.raw)")
                #expect(text.body == "hello, wörld")
                let (yaml, _) = try await lambda.request(GatewayEvent.restAPI(Request("GET", "/v1/app/keys/settings.yaml", query: [("raw", "")])))
                #expect(yaml.isBase64Encoded == false, "YAML is sent as text: \(yaml.raw)")
                #expect(yaml.body == "a: 1\n")
            }
        }
    }

    @Test("a missing key is a 404 JSON error; a failed condition is a 412 with the current item")
    func errors() async throws {
        try await withMotoTable { table in
            try await table.createConfig("app")
            let set = try await table.cli.json("set", "app", "counter", "1")
            let revision = try #require(set.revision)
            try await withLambda(table) { lambda in
                let (missing, _) = try await lambda.request(GatewayEvent.restAPI(Request("GET", "/v1/app/keys/nope")))
                #expect(missing.statusCode == 404, "\(missing.raw)")
                #expect(missing.header("Content-Type")?.hasPrefix("application/json") == true)
                #expect(try missing.envelope().error?.code == .keyNotFound)

                let (noConfig, _) = try await lambda.request(GatewayEvent.restAPI(Request("GET", "/v1/other/keys/x")))
                #expect(noConfig.statusCode == 404)
                #expect(try noConfig.envelope().error?.code == .configNotFound)

                let (failed, _) = try await lambda.request(GatewayEvent.restAPI(Request(
                    "PUT", "/v1/app/keys/counter", headers: [("If-Match", "\"\(revision.rawValue + 40)\"")], text: "2"
                )))
                #expect(failed.statusCode == 412, "\(failed.raw)")
                let envelope = try failed.envelope()
                #expect(envelope.error?.code == .conditionFailed)
                #expect(envelope.item?.value == "1", "the 412 carries the current item")
                #expect(failed.header("ETag") == "\"\(revision.rawValue)\"")

                let (absent, _) = try await lambda.request(GatewayEvent.restAPI(Request(
                    "PUT", "/v1/app/keys/counter", headers: [("If-None-Match", "*")], text: "3"
                )))
                #expect(absent.statusCode == 412)

                let (bad, _) = try await lambda.request(GatewayEvent.restAPI(Request("GET", "/v1/app/keys/counter", query: [("revision", "abc")])))
                #expect(bad.statusCode == 400, "bad input is a 400, never a 500: \(bad.raw)")
            }
            #expect(try await table.cli.json("get", "app", "counter").item?.value == "1", "nothing was changed")
        }
    }
}
