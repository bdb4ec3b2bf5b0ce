import DiscfgAWS
import Foundation
import InMemoryTracing
import Testing
import Tracing

/// Each AWS call is a client span in the process's tracer, under its caller's span.
@Suite("AWS JSON client spans")
struct AWSJSONClientTracingTests {
    /// The process's tracer: `InstrumentationSystem` is bootstrapped once per process,
    /// and the AWS client, like other libraries, traces through it.
    static let tracer: InMemoryTracer = {
        let tracer = InMemoryTracer()
        InstrumentationSystem.bootstrap(tracer)
        return tracer
    }()

    @Test("a call is a span SERVICE.Operation under its caller's, with the AWS error code on failure")
    func callSpans() async throws {
        let tracer = Self.tracer
        let server = try await LocalHTTPServer { _, index in
            index == 0 ? .json(200, "{}") : AWSJSONClientRetryTests.awsError(400, "ValidationException", "secret detail")
        }
        let client = AWSJSONClient(
            configuration: .dynamoDB(region: "eu-central-1", endpoint: URL(string: server.baseURL)!, timeout: .seconds(5)),
            credentialProvider: StaticCredentialProvider(AWSCredentials(accessKeyID: "AKIDTRACE", secretAccessKey: "s"))
        )
        let caller = tracer.startSpan("store.set", ofKind: .client)
        let callerID = try #require(caller.context.inMemorySpanContext)
        _ = try await InstrumentationContext.$current.withValue(caller.context) {
            try await client.send(operation: "PutItem", body: Data("{}".utf8))
        }
        await #expect(throws: AWSError.self) {
            try await InstrumentationContext.$current.withValue(caller.context) {
                try await client.send(operation: "GetItem", body: Data("{}".utf8))
            }
        }
        caller.end()
        try await client.shutdown()
        await server.stop()

        let put = try #require(tracer.finishedSpans.first { $0.operationName == "dynamodb.PutItem" && $0.traceID == callerID.traceID })
        #expect(put.kind == .client)
        #expect(put.parentSpanID == callerID.spanID)
        #expect(put.attributes["rpc.method"]?.toSpanAttribute() == .string("PutItem"))
        let get = try #require(tracer.finishedSpans.first { $0.operationName == "dynamodb.GetItem" && $0.traceID == callerID.traceID })
        #expect(get.status?.code == .error)
        #expect(get.attributes["error.type"]?.toSpanAttribute() == .string("ValidationException"))
        var texts: [String] = []
        get.attributes.forEach { _, value in texts.append("\(value)") }
        #expect(!texts.contains { $0.contains("secret detail") }, "the message stays out of the span")
    }
}
