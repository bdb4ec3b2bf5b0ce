import DiscfgCore
import Foundation
import Testing

/// Watching through API Gateway: no Server-Sent Events (406), long polls bounded by
/// `DISCFG_POLL_TIMEOUT` and the invocation deadline.
@Suite("Lambda: watch")
struct WatchEventTests {
    typealias Request = GatewayEvent.Request

    @Test("an SSE watch is a 406 JSON error; a long poll from revision 1 returns the events")
    func sseRefusedLongPollWorks() async throws {
        try await withMotoTable { table in
            try await table.createConfig("app")
            let first = try #require(try await table.cli.json("set", "app", "a", "1").revision)
            let second = try #require(try await table.cli.json("set", "app", "b", "2").revision)
            try await withLambda(table) { lambda in
                let (sse, _) = try await lambda.request(GatewayEvent.httpAPI(Request("GET", "/v1/app/watch", headers: [("Accept", "text/event-stream")])))
                #expect(sse.statusCode == 406, "\(sse.raw)")
                #expect(sse.header("content-type")?.hasPrefix("application/json") == true)
                #expect(try sse.envelope().error != nil, "\(sse.raw)")

                let (poll, _) = try await lambda.request(GatewayEvent.restAPI(Request(
                    "GET", "/v1/app/watch", query: [("fromRevision", "1"), ("timeout", "1")]
                )))
                #expect(poll.statusCode == 200, "\(poll.raw)")
                let events = try poll.envelope().events ?? []
                #expect(events.map(\.revision) == [first, second])
                #expect(events.map(\.key) == ["/a", "/b"])
                #expect(events.map(\.type) == [.put, .put])
            }
        }
    }

    @Test("a long poll with nothing to report ends at DISCFG_POLL_TIMEOUT, not at the requested timeout")
    func pollTimeoutCap() async throws {
        try await withMotoTable(ownServer: true) { table in
            try await table.createConfig("app")
            try await withLambda(table, environment: ["DISCFG_POLL_TIMEOUT": "1"]) { lambda in
                let clock = ContinuousClock()
                let start = clock.now
                let (poll, _) = try await lambda.request(GatewayEvent.restAPI(Request(
                    "GET", "/v1/app/watch", query: [("fromRevision", "1"), ("timeout", "60")]
                )), deadline: .seconds(60))
                let elapsed = clock.now - start
                #expect(poll.statusCode == 200, "\(poll.raw)")
                #expect(try poll.envelope().events ?? [] == [])
                #expect(elapsed < .seconds(30), "capped at 1 s, not the 60 s asked for; took \(elapsed)")
            }
        }
    }

    @Test("a long poll answers before the invocation deadline")
    func deadlineCap() async throws {
        // Its own moto: the poll ends 2 s before the deadline, and its last query must not
        // wait behind the rest of the suite's calls for longer than that.
        try await withMotoTable(ownServer: true) { table in
            try await table.createConfig("app")
            try await withLambda(table) { lambda in
                let invocation = try await lambda.invoke(GatewayEvent.httpAPI(Request(
                    "GET", "/v1/app/watch", query: [("fromRevision", "1"), ("timeout", "20")]
                )), deadline: .seconds(4))
                let took = invocation.finishedAt - invocation.deliveredAt
                #expect(took < .seconds(4), "answered within the 4 s deadline, took \(took)")
                guard case .response(let data) = invocation.result else {
                    Issue.record("expected a response, got \(invocation.result)")
                    return
                }
                let poll = try GatewayResponse(data)
                #expect(poll.statusCode == 200, "\(poll.raw)")
            }
        }
    }
}
