import DiscfgCore
import DiscfgNetwork
import Hummingbird

/// ``DiscfgNetwork/BrowserGuard`` as router middleware: the REST API's answers to its
/// verdicts, with the CORS headers of the API's methods and request headers.
struct BrowserGuardMiddleware<Context: RequestContext>: RouterMiddleware {
    let guardrail: BrowserGuard

    static var corsMethods: String { "GET, PUT, POST, PATCH, DELETE" }
    static var corsHeaders: String { "Authorization, Content-Type, If-Match, If-None-Match, Last-Event-ID, Accept" }

    @concurrent func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response) async throws -> Response {
        // Every path, the API's and the rest (console, metrics, unknown paths); the API's
        // routes ask the Host rule again through ``Admission``, with this same refusal.
        let verdict = guardrail.verdict(
            method: request.method.rawValue, authority: request.head.authority, origin: request.headers[.origin],
            preflight: request.headers[.accessControlRequestMethod] != nil
        )
        switch verdict {
        case .refuse(let error, let status):
            let parts = Admission.Refusal(browser: error, status: status).parts(action: request.method.rawValue.lowercased())
            return APIResponse.bytes(parts.body, contentType: APIResponse.jsonContentType, status: parts.status, headers: parts.headers)
        case .preflight(let origin):
            var headers = Self.corsHeaders(origin)
            headers[.accessControlAllowMethods] = Self.corsMethods
            headers[.accessControlAllowHeaders] = Self.corsHeaders
            headers[.accessControlMaxAge] = "600"
            return Response(status: .noContent, headers: headers)
        case .admit(let corsOrigin):
            var response = try await next(request, context)
            if let corsOrigin {
                for field in Self.corsHeaders(corsOrigin) { response.headers[field.name] = field.value }
            }
            return response
        }
    }

    private static func corsHeaders(_ origin: String) -> HTTPFields {
        [.accessControlAllowOrigin: origin, .vary: "Origin", .accessControlExposeHeaders: "ETag, Location"]
    }
}
