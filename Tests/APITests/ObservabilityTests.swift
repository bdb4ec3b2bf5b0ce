@testable import DiscfgAPI
import DiscfgCore
import DiscfgTestSupport
import Foundation
import InMemoryTracing
import MetricsTestKit
import Testing
import Tracing

/// The server's metrics through swift-metrics (a test backend sees what `/metrics`
/// shows), and its spans through swift-distributed-tracing (a request's span, and its
/// store calls as children).
@Suite("serve: metrics and traces through the ecosystem's APIs")
struct ObservabilityTests {
    /// The value of the sample `series` (name and labels, as written) in `/metrics`.
    private func scraped(_ server: LiveServer, _ series: String) async throws -> Int? {
        let text = try await server.get("/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix(series + " ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") }
    }

    @Test("a swift-metrics backend sees the counters /metrics shows: routed requests, and key reads counted on the event loops")
    func metricsBackend() async throws {
        let backend = TestMetrics()
        try await withServer(try await LiveServer.start { $0.metricsBackend = backend }) { server in
            #expect(try await server.put("/v1/app", "").status == 201)
            #expect(try await server.put("/v1/app/keys/db/host", "h1").status < 300)
            #expect(try await server.get("/v1/configs").status == 200)
            #expect(try await server.get("/v1/configs").status == 200)
            // The first read of a config loads its view; the reads after it are the view's.
            #expect(try await server.get("/v1/app/keys/db/host").status == 200)
            let before = try #require(try await scraped(server, "discfg_view_reads_total"))
            for _ in 0..<3 { #expect(try await server.get("/v1/app/keys/db/host").status == 200) }

            // A scrape folds the event loops' counts in first.
            let viewReads = try await scraped(server, "discfg_view_reads_total")
            #expect(viewReads == before + 3)
            #expect(try backend.expectCounter("discfg_view_reads_total").totalValue == Int64(before + 3))
            let listed = #"discfg_http_requests_total{route="/v1/configs",method="GET",status="200"}"#
            #expect(try await scraped(server, listed) == 2)
            let counter = try backend.expectCounter(
                "discfg_http_requests_total", [("route", "/v1/configs"), ("method", "GET"), ("status", "200")]
            )
            #expect(counter.totalValue == 2)
            let timer = try backend.expectTimer("discfg_http_request_duration_seconds", [("route", "/v1/configs"), ("method", "GET")])
            #expect(timer.values.count == 2)
            #expect(try backend.expectTimer("discfg_store_operation_duration_seconds", [("operation", "listConfigs")]).values.count == 2)
        }
    }

    @Test("/metrics keeps its series names, help text and latency buckets")
    func exposition() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.get("/v1/configs")
            let text = try await server.get("/metrics").text
            #expect(text.contains("# HELP discfg_http_requests_total HTTP requests by route, method and status.\n"))
            #expect(text.contains("# TYPE discfg_http_request_duration_seconds histogram\n"))
            #expect(text.contains(#"discfg_http_request_duration_seconds_bucket{route="/v1/configs",method="GET",le="0.0001"} "#))
            #expect(text.contains(#"discfg_http_request_duration_seconds_bucket{route="/v1/configs",method="GET",le="+Inf"} 1"#))
            #expect(text.contains(#"discfg_http_request_duration_seconds_count{route="/v1/configs",method="GET"} 1"#))
            #expect(text.contains("discfg_view_reads_total 0\n"))
            // The SQLite store's group commits: counters and the batch-size histogram.
            _ = try await server.put("/v1/app", "")
            _ = try await server.put("/v1/app/keys/k", "v")
            let after = try await server.get("/metrics").text
            let commits = after.split(separator: "\n").first { $0.hasPrefix("discfg_store_commits_total ") }
            #expect((commits.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0) >= 1)
            #expect(after.contains("# TYPE discfg_store_commit_batch_size histogram\n"))
        }
    }

    /// The finished spans once `count` of them match, waiting a little for spans that
    /// end as the answer is written.
    private func spans(_ tracer: InMemoryTracer, atLeast count: Int, where match: (FinishedInMemorySpan) -> Bool) async throws -> [FinishedInMemorySpan] {
        try await eventually("\(count) matching spans finish", timeout: .seconds(2), interval: .milliseconds(10)) {
            let found = tracer.finishedSpans.filter(match)
            return found.count >= count ? found : nil
        }
    }

    @Test("a routed request is a server span named by its route, its store call a child span in the same trace")
    func requestAndStoreSpans() async throws {
        let tracer = InMemoryTracer()
        try await withServer(try await LiveServer.start { $0.tracer = tracer }) { server in
            #expect(try await server.get("/v1/configs").status == 200)
            let requests = try await spans(tracer, atLeast: 1) { $0.operationName == "GET /v1/configs" }
            let request = try #require(requests.first)
            #expect(request.kind == .server)
            #expect(request.attributes["http.response.status_code"]?.toSpanAttribute() == .int64(200))
            #expect(request.attributes["http.route"]?.toSpanAttribute() == .string("/v1/configs"))
            let store = try #require(try await spans(tracer, atLeast: 1) { $0.operationName == "store.listConfigs" }.first)
            #expect(store.kind == .client)
            #expect(store.traceID == request.traceID)
            #expect(store.parentSpanID == request.spanID)

            // A failing store call is an error span; a refused request is not the store's.
            #expect(try await server.get("/v1/missing/keys?recursive").status == 404)
            let missing = try await spans(tracer, atLeast: 1) { $0.attributes["http.response.status_code"]?.toSpanAttribute() == .int64(404) }
            #expect(missing.first?.status?.code != .error)
        }
    }

    @Test("a request carrying its caller's trace context continues that trace")
    func continuesCallersTrace() async throws {
        let tracer = InMemoryTracer()
        try await withServer(try await LiveServer.start { $0.tracer = tracer }) { server in
            let headers = [(InMemoryTracer.traceIDKey, "trace-from-caller"), (InMemoryTracer.spanIDKey, "span-of-caller")]
            #expect(try await server.get("/v1/configs", headers: headers).status == 200)
            let request = try #require(try await spans(tracer, atLeast: 1) { $0.operationName == "GET /v1/configs" }.first)
            #expect(request.traceID == "trace-from-caller")
            #expect(request.parentSpanID == "span-of-caller")
        }
    }

    @Test("without a tracer the server makes no spans, and its store is not traced")
    func noTracerNoSpans() async throws {
        try await withServer(try await LiveServer.start()) { server in
            let reply = try await server.get("/v1/configs")
            #expect(reply.status == 200)
        }
        // Nothing bootstrapped InstrumentationSystem in this process: the no-op tracer
        // means none at all.
        #expect(RequestTracing.tracer(nil) == nil)
    }
}
