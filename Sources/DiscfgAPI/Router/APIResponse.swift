import DiscfgCore
import DiscfgService
import DiscfgNetwork
import DiscfgWire
import Foundation
import Hummingbird
import Logging

/// Builds the API's responses: the JSON envelope, raw values, and errors.
enum APIResponse {
    static let jsonContentType = "application/json; charset=utf-8"

    /// The envelope as JSON.
    static func json(_ envelope: Envelope, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        bytes(jsonBody(envelope), contentType: jsonContentType, status: status, headers: headers)
    }

    /// The envelope's JSON, a line.
    static func jsonBody(_ envelope: Envelope) -> ByteBuffer {
        EnvelopeJSON.withBytes(envelope, line)
    }

    /// The JSON of one change's envelope (``Envelope/init(action:config:change:)``), a line.
    static func jsonBody(action: String, config: ConfigName, change: Event) -> ByteBuffer {
        EnvelopeJSON.withBytes(action: action, config: config, change: change, line)
    }

    /// `json` and a newline, in a buffer of their size.
    private static func line(_ json: UnsafeRawBufferPointer) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(json.count + 1)
        buffer.writeBytes(json)
        buffer.writeInteger(UInt8(ascii: "\n"))
        return buffer
    }

    /// A body of bytes with a content type.
    static func bytes(_ data: Data, contentType: String, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        bytes(ByteBuffer(bytes: data), contentType: contentType, status: status, headers: headers)
    }

    /// A body in a buffer with a content type.
    static func bytes(_ buffer: ByteBuffer, contentType: String, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = contentType
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: buffer))
    }

    /// The error envelope with the status its code maps to.
    static func error(_ error: DiscfgError, action: String) -> Response {
        let parts = errorParts(error, action: action)
        return bytes(parts.body, contentType: jsonContentType, status: parts.status, headers: parts.headers)
    }

    /// The error envelope's status, headers (besides its type) and body.
    static func errorParts(_ error: DiscfgError, action: String) -> (status: HTTPResponse.Status, headers: HTTPFields, body: ByteBuffer) {
        var headers: HTTPFields = [:]
        if error.code == .unauthenticated { headers[.wwwAuthenticate] = "Bearer realm=\"discfg\"" }
        // A throttled store asks callers (OpenFeature's OFREP providers among them) to wait.
        if error.code == .throttled { headers[.retryAfter] = "1" }
        if let current = error.currentItem { headers[.eTag] = ETag.value(current.modRevision) }
        AuditNote.current?.update { $0.error = error.code }
        return (FailurePolicy.httpStatus(for: error.code), headers, jsonBody(Envelope(action: action, error: error)))
    }
}

/// Turns every failure inside a route into the JSON error envelope, so no request ever
/// gets a bare 500 or an HTML page: route-not-found, bad bodies and store errors alike.
struct ErrorEnvelopeMiddleware<Context: RequestContext>: RouterMiddleware {
    @concurrent func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            // Routes answer their own errors; what is left failed before any route
            // matched (no such path) or outside one.
            return try Self.response(for: error, action: request.method.rawValue.lowercased(), request: request, logger: context.logger)
        }
    }

    /// The error envelope for `error`, which happened during `action`. Rethrows
    /// cancellation, which has no answer.
    static func response(for error: any Error, action: String, request: Request, logger: Logger) throws -> Response {
        switch error {
        case let error as DiscfgError:
            return APIResponse.error(FailurePolicy.shown(error, logger: logger), action: action)
        case let error as HTTPError:
            let code: DiscfgError.Code = switch error.status {
            case .notFound: .keyNotFound
            case .contentTooLarge: .tooLarge
            case .unauthorized: .unauthenticated
            case .forbidden: .permissionDenied
            case .tooManyRequests: .throttled
            case .serviceUnavailable: .unavailable
            default: error.status.code < 500 ? .invalidArgument : .internal
            }
            let message = error.status == .notFound ? "no route for \(request.method) \(request.uri.path)" : (error.body ?? error.status.reasonPhrase)
            let failure = DiscfgError(code, message, field: error.status == .notFound ? "path" : nil)
            var response = APIResponse.error(FailurePolicy.shown(failure, logger: logger), action: action)
            response.status = error.status
            return response
        case is CancellationError:
            throw error
        default:
            return APIResponse.error(FailurePolicy.shown(error, logger: logger), action: action)
        }
    }
}

extension ConfigAPI {
    /// The JSON error response the API gives for `error`, for transports (such as the
    /// Lambda adapters) that refuse a request before it reaches the router.
    public static func errorResponse(_ error: DiscfgError, action: String) -> Response {
        APIResponse.error(error, action: action)
    }
}
