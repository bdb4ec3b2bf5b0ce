import Foundation
import Tracing

extension AWSJSONClient {
    /// The span attribute counting a call's retries (its attempts less one).
    static let retriesAttribute = "aws.retries"

    /// `call` as a client span named `SERVICE.Operation` (`dynamodb.PutItem`), under the
    /// caller's span (a store call's), in the configured tracer or else the one
    /// `InstrumentationSystem` was bootstrapped with; with the no-op tracer, `call` alone
    /// (given no span).
    ///
    /// The span carries the service, the operation and the region, as OpenTelemetry's
    /// AWS conventions name them, and the retries; on failure the AWS error code
    /// (`error.type`), an error status and the error itself, recorded on the span: spans
    /// go to the operator's tracing backend, as the log does, never to a caller.
    func traced(_ operation: String, _ call: ((any Span)?) async throws -> Data) async throws -> Data {
        let tracer = configuration.tracer ?? InstrumentationSystem.tracer
        if tracer is NoOpTracer { return try await call(nil) }
        let span = tracer.startSpan("\(configuration.service).\(operation)", ofKind: .client)
        defer { span.end() }
        span.attributes["rpc.system"] = "aws-api"
        span.attributes["rpc.service"] = configuration.service
        span.attributes["rpc.method"] = operation
        span.attributes["aws.region"] = configuration.region
        do {
            return try await InstrumentationContext.$current.withValue(span.context) { try await call(span) }
        } catch {
            let code = (error as? AWSError)?.awsCode ?? String(describing: type(of: error))
            span.attributes["error.type"] = code
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
            throw error
        }
    }
}
