import DiscfgAPI
import DiscfgCore
import DiscfgService
import DiscfgNetwork
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// Where a request context behind API Gateway comes from.
public struct LambdaRequestSource: RequestContextSource {
    public var logger: Logger
    /// The IAM principal the gateway authenticated, mapped to a role.
    public var caller: Caller?
    /// The invocation's deadline.
    public var deadline: ContinuousClock.Instant?

    public init(logger: Logger, caller: Caller?, deadline: ContinuousClock.Instant?) {
        self.logger = logger
        self.caller = caller
        self.deadline = deadline
    }
}

/// The request context of the API behind API Gateway: no streaming, an invocation
/// deadline, and possibly an IAM caller.
public struct LambdaRequestContext: DiscfgRequestContext {
    public typealias Source = LambdaRequestSource
    public var coreContext: CoreRequestContextStorage
    public var authenticatedCaller: Caller?
    public var deadline: ContinuousClock.Instant?
    public var supportsStreaming: Bool { false }

    public init(source: LambdaRequestSource) {
        coreContext = CoreRequestContextStorage(source: source)
        authenticatedCaller = source.caller
        deadline = source.deadline
    }
}

/// An HTTP request as API Gateway describes it, in either payload format.
struct GatewayRequest {
    var method: String
    /// The path, percent-encoded.
    var path: String
    /// The query string, percent-encoded, without `?`.
    var query: String
    var headers: [(String, String)]
    var body: Data
    /// The IAM principal's ARN when the gateway authenticated one.
    var principal: String?
}

/// The response, before it is put in the payload format's shape.
struct GatewayResponse {
    var status: Int
    var headers: [(String, String)]
    var body: Data
}

/// Runs API Gateway requests through the same router as `discfg serve`.
final class LambdaHTTPHandler: Sendable {
    private let responder: RouterResponder<LambdaRequestContext>
    private let access: LambdaAccess
    /// Where each request's audit line goes, written at once: a frozen or ended function
    /// would never write a batched line. Nil for the function's log (its logger, whose
    /// lines carry the invocation's request id), which Lambda sends to CloudWatch Logs.
    let auditTrail: AuditTrail?

    /// Lambda's response limit is 6 MB, and a binary body grows by a third in base64.
    static let maxResponseBytes = 4_400_000

    init(store: any ConfigStore, access: LambdaAccess, options: ConfigAPI.Options, auditLog: LogSink? = nil) {
        let authenticator: Authenticator
        if access.modes.contains(.token) {
            authenticator = Authenticator(mode: .required, store: (store as? any TokenStore) ?? NoTokens())
        } else if access.modes.isEmpty {
            authenticator = .open
        } else {
            authenticator = Authenticator(mode: .required, store: NoTokens())
        }
        let router = Router(context: LambdaRequestContext.self)
        ConfigAPI(store: store, authenticator: authenticator, options: options).register(on: router)
        responder = router.buildResponder()
        self.access = access
        auditTrail = auditLog.map { AuditTrail(sink: $0, urgent: true) }
    }

    /// Answers one request, and writes its audit line (``AuditRecord``).
    func handle(_ request: GatewayRequest, deadline: ContinuousClock.Instant, logger: Logger) async -> GatewayResponse {
        let note = AuditNote()
        let response = await note.noting { () async -> GatewayResponse in
            switch authenticate(request) {
            case .failure(let error):
                // Refused before the router: the gateway's IAM principal, when it named one.
                if let principal = request.principal { note.update { $0.principal = Principal(kind: .iam, id: principal) } }
                return await Self.collect(ConfigAPI.errorResponse(error, action: "authorize"))
            case .success(let caller):
                return await route(request, caller: caller, deadline: deadline, logger: logger)
            }
        }
        let record = note.record(api: "rest", route: "unmatched", AuditNote.Answer(method: request.method, path: request.path, status: response.status))
        (auditTrail ?? .logging(to: logger)).write(record)
        return response
    }

    /// The IAM caller, nil to leave it to bearer tokens, or the reason to refuse.
    private func authenticate(_ request: GatewayRequest) -> Result<Caller?, DiscfgError> {
        let hasBearer = request.headers.contains { $0.0.lowercased() == "authorization" && $0.1.lowercased().hasPrefix("bearer ") }
        if access.modes.contains(.iam), let principal = request.principal, !(access.modes.contains(.token) && hasBearer) {
            guard let caller = access.caller(forPrincipal: principal) else {
                return .failure(DiscfgError(.permissionDenied, "IAM principal \(principal) has no role here (DISCFG_IAM_ROLES)", field: "authorization"))
            }
            return .success(caller)
        }
        if access.modes == .iam {
            return .failure(DiscfgError(
                .unauthenticated,
                "this API accepts only IAM-authenticated requests: sign them with SigV4 for execute-api (the discfg CLI does so for https://…execute-api… stores)",
                field: "authorization"
            ))
        }
        return .success(nil)
    }

    private func route(_ gateway: GatewayRequest, caller: Caller?, deadline: ContinuousClock.Instant, logger: Logger) async -> GatewayResponse {
        guard let method = HTTPRequest.Method(gateway.method) else {
            return await Self.collect(ConfigAPI.errorResponse(DiscfgError.invalid("method", "\(gateway.method) is not an HTTP method"), action: "request"))
        }
        var fields = HTTPFields()
        for (name, value) in gateway.headers {
            guard let name = HTTPField.Name(name) else { continue }
            fields.append(HTTPField(name: name, value: value))
        }
        let target = gateway.query.isEmpty ? gateway.path : gateway.path + "?" + gateway.query
        let head = HTTPRequest(method: method, scheme: "https", authority: gateway.headers.first { $0.0.lowercased() == "host" }?.1, path: target, headerFields: fields)
        let request = Request(head: head, body: RequestBody(buffer: ByteBuffer(bytes: gateway.body)))
        let context = LambdaRequestContext(source: LambdaRequestSource(logger: logger, caller: caller, deadline: deadline))
        let responder = responder
        // The router answers a request cut off by the deadline itself (RequestDeadlines),
        // saying whether a change may have been applied; this later cutoff only bounds
        // what the router cannot: middleware, and collecting the body.
        let collected = await RequestDeadlines.answer(by: deadline - RequestDeadlines.answerMargin / 2) { () async -> GatewayResponse in
            do {
                let response = try await responder.respond(to: request, context: context)
                return await Self.collect(response)
            } catch {
                // The failure policy: the caller's own mistakes as they are, anything
                // else in general terms with the correlation id of the log line.
                return await Self.collect(ConfigAPI.errorResponse(FailurePolicy.shown(error, logger: logger), action: "request"))
            }
        }
        guard var response = collected else {
            return await Self.collect(ConfigAPI.errorResponse(DiscfgError(.unavailable, "the request did not finish before the function's deadline", field: "timeout"), action: "request"))
        }
        if response.body.count > Self.maxResponseBytes {
            response = await Self.collect(ConfigAPI.errorResponse(
                DiscfgError(.tooLarge, "the response (\(response.body.count) bytes) is larger than a Lambda function may return; ask for less (limit, prefix)", field: "response"),
                action: "request"
            ))
        }
        return response
    }

    /// The whole response: API Gateway wants the body at once.
    static func collect(_ response: Response) async -> GatewayResponse {
        let buffer = Collected()
        // A body that fails part-way is answered with what was written before the failure.
        try? await response.body.write(CollectingWriter(collected: buffer))
        var headers: [(String, String)] = response.headers.map { ($0.name.canonicalName, $0.value) }
        if !headers.contains(where: { $0.0 == "content-length" }), response.status.code != 304 {
            headers.append(("content-length", String(buffer.data.count)))
        }
        return GatewayResponse(status: response.status.code, headers: headers, body: buffer.data)
    }
}

private final class Collected: Sendable {
    private let bytes = Mutex(Data())
    func append(_ buffer: ByteBuffer) { bytes.withLock { $0.append(contentsOf: buffer.readableBytesView) } }
    var data: Data { bytes.withLock { $0 } }
}

private struct CollectingWriter: ResponseBodyWriter {
    let collected: Collected
    mutating func write(_ buffer: ByteBuffer) async throws { collected.append(buffer) }
    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
