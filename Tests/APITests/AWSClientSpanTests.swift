import DiscfgAWS
import DiscfgTestSupport
import Foundation
import InMemoryTracing
import Testing
import Tracing

/// The AWS client's spans, in the tracer its configuration names (never the process's,
/// which every suite of the test process shares): one client span per DynamoDB call,
/// its retries inside it, under the span of whoever called (a store call's).
@Suite("AWS client: one span per DynamoDB call, a child of its caller's")
struct AWSClientSpanTests {
    /// A client on the shared moto server (or `endpoint`), its spans in `tracer`.
    static func client(_ tracer: InMemoryTracer, endpoint: URL? = nil) async throws -> AWSJSONClient {
        let shared = try await MotoDynamoDB.shared.client()
        var configuration = shared.configuration
        configuration.tracer = tracer
        if let endpoint { configuration.endpoint = endpoint }
        return AWSJSONClient(configuration: configuration, credentialProvider: shared.credentialProvider)
    }

    /// Runs `body` under a caller's span, as a store call runs its AWS calls.
    static func underCaller<T>(_ tracer: InMemoryTracer, _ body: () async throws -> T) async rethrows -> (InMemorySpan, T) {
        let caller = tracer.startSpan("store.get", ofKind: .client)
        defer { caller.end() }
        return (caller, try await InstrumentationContext.$current.withValue(caller.context) { try await body() })
    }

    @Test("a call is one span named by its operation, with the region and retries, under the caller's span; a failure is recorded on it")
    func spans() async throws {
        let tracer = InMemoryTracer()
        let client = try await Self.client(tracer)
        let table = "spans-\(UUID().uuidString.prefix(12))"
        let (caller, _) = try await Self.underCaller(tracer) {
            _ = try await client.send(operation: "ListTables", body: Data("{}".utf8))
            await #expect(throws: AWSError.self) {
                _ = try await client.send(operation: "DescribeTable", body: Data(#"{"TableName": "\#(table)"}"#.utf8))
            }
        }
        try await client.shutdown()

        let spans = tracer.finishedSpans.filter { $0.operationName.hasPrefix("dynamodb.") }
        #expect(spans.map(\.operationName) == ["dynamodb.ListTables", "dynamodb.DescribeTable"])
        for span in spans {
            #expect(span.kind == .client)
            #expect(span.traceID == caller.traceID && span.parentSpanID == caller.spanID, "a child of the caller's span")
            #expect(span.attributes["rpc.system"]?.toSpanAttribute() == .string("aws-api"))
            #expect(span.attributes["rpc.service"]?.toSpanAttribute() == .string("dynamodb"))
            #expect(span.attributes["aws.region"]?.toSpanAttribute() == .string("us-east-1"))
            #expect(span.attributes["aws.retries"]?.toSpanAttribute() == .int64(0))
        }
        #expect(spans.first?.attributes["rpc.method"]?.toSpanAttribute() == .string("ListTables"))
        #expect(spans.first?.status == nil && spans.first?.errors.isEmpty == true)
        let failed = try #require(spans.last)
        #expect(failed.attributes["rpc.method"]?.toSpanAttribute() == .string("DescribeTable"))
        #expect(failed.status?.code == .error)
        #expect(failed.attributes["error.type"]?.toSpanAttribute() == .string("ResourceNotFoundException"))
        #expect(failed.errors.count == 1 && failed.errors.first?.error is AWSError)
    }

    @Test("a call retried after 500s is still one span, which counts its retries")
    func retries() async throws {
        let moto = try await SharedMotoServer.shared.server()
        try await withServer(try await FaultProxy.start(upstream: moto.endpoint, seed: 2, rates: [.serverError: 1])) { proxy in
            let tracer = InMemoryTracer()
            let client = try await Self.client(tracer, endpoint: proxy.endpoint)
            let (caller, _) = await Self.underCaller(tracer) {
                await #expect(throws: AWSError.self) { _ = try await client.send(operation: "ListTables", body: Data("{}".utf8)) }
            }
            try await client.shutdown()
            let spans = tracer.finishedSpans.filter { $0.operationName.hasPrefix("dynamodb.") }
            #expect(spans.count == 1)
            let span = try #require(spans.first)
            #expect(span.parentSpanID == caller.spanID)
            let attempts = client.configuration.retryPolicy.maxAttempts
            #expect(try proxy.calls().count == attempts)
            #expect(span.attributes["aws.retries"]?.toSpanAttribute() == .int64(Int64(attempts - 1)))
            #expect(span.attributes["error.type"]?.toSpanAttribute() == .string("InternalServerError"))
            #expect(span.status?.code == .error)
        }
    }
}
