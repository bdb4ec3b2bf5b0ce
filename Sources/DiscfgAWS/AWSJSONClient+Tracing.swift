import Foundation
import Tracing

extension AWSJSONClient {
    /// `call` as a client span named `SERVICE.Operation` (`dynamodb.PutItem`), under the
    /// caller's span (a store call's), in the tracer `InstrumentationSystem` was
    /// bootstrapped with; with the no-op tracer, `call` alone.
    ///
    /// The span carries the service and the operation, and on failure the AWS error code
    /// (`error.type`), never the message: the detail stays in the log.
    func traced(_ operation: String, _ call: () async throws -> Data) async throws -> Data {
        let tracer = InstrumentationSystem.tracer
        if tracer is NoOpTracer { return try await call() }
        let span = tracer.startSpan("\(configuration.service).\(operation)", ofKind: .client)
        defer { span.end() }
        span.attributes["rpc.system"] = "aws-api"
        span.attributes["rpc.service"] = configuration.service
        span.attributes["rpc.method"] = operation
        do {
            return try await InstrumentationContext.$current.withValue(span.context) { try await call() }
        } catch {
            span.attributes["error.type"] = (error as? AWSError)?.awsCode ?? String(describing: type(of: error))
            span.setStatus(SpanStatus(code: .error))
            throw error
        }
    }
}
