import HTTPTypes
import Hummingbird
import Tracing

/// Where the server's spans go: the tracer a configuration names, or else the one
/// `InstrumentationSystem` was bootstrapped with; nil while that is the no-op tracer, so
/// that a server nobody traces makes no spans at all.
enum RequestTracing {
    static func tracer(_ configured: (any Tracer)?) -> (any Tracer)? {
        if let configured { return configured }
        let bootstrapped = InstrumentationSystem.tracer
        return bootstrapped is NoOpTracer ? nil : bootstrapped
    }
}

/// A server span for each routed request, named by its route once matched
/// (`GET /v1/configs/{config}/keys/{key...}`), continuing the caller's trace when the
/// request carries one (`traceparent`, as the tracer reads it). The store calls made while
/// answering are its children (``InstrumentedStore``).
struct TracingMiddleware<Context: RequestContext>: RouterMiddleware {
    let tracer: any Tracer

    @concurrent func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response) async throws -> Response {
        var parent = InstrumentationContext.current ?? .topLevel
        tracer.extractContext(request.headers, into: &parent)
        let method = request.method.rawValue
        let span = tracer.startSpan(method, context: parent, ofKind: .server)
        defer { span.end() }
        span.attributes["http.request.method"] = method
        span.attributes["url.path"] = request.uri.path
        do {
            let response = try await InstrumentationContext.$current.withValue(span.context) { try await next(request, context) }
            Self.finish(span, method: method, route: context.endpointPath, status: response.status.code)
            return response
        } catch {
            Self.finish(span, method: method, route: context.endpointPath, status: (error as? any HTTPResponseError)?.status.code ?? 500)
            throw error
        }
    }

    private static func finish(_ span: any Span, method: String, route: String?, status: Int) {
        if let route {
            span.operationName = "\(method) \(route)"
            span.attributes["http.route"] = route
        }
        span.attributes["http.response.status_code"] = status
        if status >= 500 { span.setStatus(SpanStatus(code: .error)) }
    }
}

extension Tracer {
    /// Reads a caller's trace context from request headers into `context`.
    func extractContext(_ headers: HTTPFields, into context: inout InstrumentationContext) {
        extract(headers, into: &context, using: HTTPFieldsExtractor())
    }
}

/// Reads the tracer's propagation headers (`traceparent`, `tracestate`) from HTTPTypes
/// fields.
struct HTTPFieldsExtractor: Extractor {
    func extract(key: String, from fields: HTTPFields) -> String? {
        guard let name = HTTPField.Name(key) else { return nil }
        return fields[name]
    }
}
