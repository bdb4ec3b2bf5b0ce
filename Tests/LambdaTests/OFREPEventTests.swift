import DiscfgTestSupport
import Foundation
import Testing

/// OFREP through API Gateway: the router's routes, over DynamoDB; no event stream (API
/// Gateway buffers responses), so the bulk answer names none and polling relies on ETags.
@Suite("Lambda: OFREP")
struct OFREPEventTests {
    typealias Request = GatewayEvent.Request

    @Test("single and bulk evaluations over the real function; 304 with If-None-Match; the event stream refused with 406")
    func evaluations() async throws {
        try await withMotoTable { table in
            try await table.createConfig("app")
            for (key, text) in [("/flags/web", OFREPFlagSets.web), ("/flags/ops", OFREPFlagSets.ops)] {
                let set = try await table.cli.run("set", "app", key, text, "--content-type", "application/json")
                #expect(set.status == 0, "\(set.stderr)")
            }
            try await withLambda(table) { lambda in
                let (float, _) = try await lambda.request(GatewayEvent.httpAPI(Request("POST", "/v1/app/ofrep/v1/evaluate/flags/float-flag", text: #"{"context": {}}"#)))
                #expect(float.statusCode == 200, "\(float.raw)")
                #expect(float.body == #"{"key":"float-flag","reason":"STATIC","variant":"ten","value":10.0,"metadata":{"flagSetId":"web","version":2}}"# + "\n")
                let (missing, _) = try await lambda.request(GatewayEvent.restAPI(Request("POST", "/v1/app/ofrep/v1/evaluate/flags/nope", text: "{}")))
                #expect(missing.statusCode == 404 && missing.body.contains(#""errorCode":"FLAG_NOT_FOUND""#), "\(missing.raw)")
                let (general, _) = try await lambda.request(GatewayEvent.httpAPI(Request("POST", "/v1/app/ofrep/v1/evaluate/flags/bad-variant", text: "{}")))
                #expect(general.statusCode == 400 && general.body.contains(#""errorCode":"GENERAL""#), "\(general.raw)")

                let context = #"{"context": {"targetingKey": "u1", "plan": "pro"}}"#
                let (bulk, _) = try await lambda.request(GatewayEvent.httpAPI(Request("POST", "/v1/app/ofrep/v1/evaluate/flags", text: context)))
                #expect(bulk.statusCode == 200, "\(bulk.raw)")
                #expect(bulk.body.contains(#"{"key":"bool-flag","reason":"TARGETING_MATCH","variant":"on","value":true"#))
                #expect(!bulk.body.contains("eventStreams"), "API Gateway cannot stream: \(bulk.body)")
                let tag = try #require(bulk.header("etag"))
                let (again, _) = try await lambda.request(GatewayEvent.httpAPI(Request("POST", "/v1/app/ofrep/v1/evaluate/flags", headers: [("If-None-Match", tag)], text: context)))
                #expect(again.statusCode == 304, "\(again.raw)")
                let (events, _) = try await lambda.request(GatewayEvent.httpAPI(Request("GET", "/v1/app/ofrep/v1/events")))
                #expect(events.statusCode == 406, "\(events.raw)")
            }
        }
    }
}
