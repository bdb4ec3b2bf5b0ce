import DiscfgCore
import Foundation
import Hummingbird

/// The discfg REST API (v1): one router that `discfg serve` runs over HTTP and the
/// Lambda function runs behind API Gateway.
///
/// It is generic over the request context, holds no server state, and can be called
/// without a server (`router.buildResponder().respond(to:context:)`).
///
/// ```swift
/// let api = DiscfgAPI(store: try SQLiteStore(path: "discfg.db"), authenticator: .open)
/// let router = Router(context: APIRequestContext.self)
/// api.register(on: router)
/// ```
public struct DiscfgAPI: Sendable {
    /// Limits and timings.
    public struct Options: Sendable {
        /// The largest import body, in bytes.
        public var maxImportBytes = Limits.maxSnapshotBytes
        /// The largest settings body, in bytes.
        public var maxSettingsBytes = 64 * 1024
        /// How often an idle Server-Sent Events stream sends a comment line.
        public var heartbeat: Duration = .seconds(15)
        /// A long poll's wait when the request names none.
        public var defaultPollTimeout: Duration = .seconds(30)
        /// The longest long poll.
        public var maxPollTimeout: Duration = .seconds(300)
        /// Where webhooks set through the API may point.
        public var webhookPolicy = WebhookPolicy.strict
        /// The longest any other request may take before it is abandoned with 503.
        public var requestTimeout: Duration = .seconds(30)
        /// The most watches (Server-Sent Events streams and long polls) open at once;
        /// more are answered 503 with `Retry-After`.
        public var maxWatches = 1000
        /// The most bytes of events a Server-Sent Events stream holds for a slow reader;
        /// past it the stream ends with an `error` event naming the `Last-Event-ID` to
        /// resume from.
        public var streamBacklogBytes = 1024 * 1024
        /// The most bytes of keys and values in a page of a listing, a history or a long
        /// poll, passed to the store, which stops reading there; a fuller page is cut
        /// short with a cursor to continue (at least one entry). A request's `maxBytes`
        /// may ask for less.
        public var maxPageBytes = Limits.maxPageBytes

        /// The defaults.
        public init() {}
    }

    /// Who may call a route.
    public enum Access: Hashable, Sendable {
        /// Anyone, without credentials.
        case everyone
        /// Callers with this role on the route's config (any config for routes without one).
        case role(Role)
        /// Admins of every config: the route reaches across configs.
        case adminOfAll

        /// Whether `caller` may call a route with this access on `config` (nil: a route
        /// that names no config).
        public func admits(_ caller: Caller, config: ConfigName?) -> Bool {
            switch self {
            case .everyone: true
            case .role(let role): caller.allows(role, on: config)
            case .adminOfAll: caller.role == .admin && caller.configs == nil
            }
        }
    }

    /// One route: its method, its path in OpenAPI form, and who may call it.
    public struct Route: Hashable, Sendable, CustomStringConvertible {
        public var method: HTTPRequest.Method
        public var path: String
        public var access: Access
        public var description: String { "\(method.rawValue) \(path)" }
    }

    public let store: any ConfigStore
    public let authenticator: Authenticator
    public let options: Options
    /// The open watches, capped by ``Options/maxWatches``.
    let watches: StreamSlots

    /// Creates the API over a store.
    public init(store: any ConfigStore, authenticator: Authenticator, options: Options = Options()) {
        self.store = store
        self.authenticator = authenticator
        self.options = options
        watches = StreamSlots(capacity: options.maxWatches)
    }

    /// The OpenAPI document describing every route, served at `/openapi.yaml`.
    public static var openAPIDocument: String { OpenAPIDocument.yaml }

    /// Every route the API serves, for documentation checks and the authorization matrix.
    public static var routes: [Route] {
        paths.flatMap { path, methods in methods.map { Route(method: $0.0, path: path, access: $0.1) } }
    }

    /// Paths (OpenAPI form), their methods and who may call each; `register(on:)`
    /// follows this table, and a test holds every handler to the access it declares.
    static let paths: [(String, [(HTTPRequest.Method, Access)])] = [
        ("/openapi.yaml", [(.get, .everyone)]),
        ("/admin/sweep", [(.post, .adminOfAll)]),
        ("/v1/configs", [(.get, .role(.read))]),
        ("/v1/{config}", [(.put, .role(.admin)), (.get, .role(.read)), (.patch, .role(.admin)), (.delete, .role(.admin))]),
        ("/v1/{config}/keys", [(.get, .role(.read)), (.delete, .role(.write))]),
        ("/v1/{config}/keys/{key}", [(.get, .role(.read)), (.put, .role(.write)), (.delete, .role(.write))]),
        ("/v1/{config}/history/{key}", [(.get, .role(.read))]),
        ("/v1/{config}/watch", [(.get, .role(.read))]),
        ("/v1/{config}/export", [(.get, .role(.read))]),
        ("/v1/{config}/import", [(.post, .role(.write))]),
    ]

    /// Adds every route to `router`, with JSON errors for failures, unknown paths and
    /// methods a path does not allow (405 with `Allow`).
    public func register<Context: DiscfgRequestContext>(on router: Router<Context>) {
        router.add(middleware: ErrorEnvelopeMiddleware<Context>())
        let deadlines = RequestDeadlines(timeout: options.requestTimeout)
        for (path, entries) in Self.paths {
            let pattern = Self.hummingbirdPattern(path)
            let methods = entries.map(\.0)
            for method in methods {
                let isWatch = path.hasSuffix("/watch")
                router.on(RouterPath(pattern), method: method) { request, context in
                    if isWatch { return try await handle(method, path, request, context) }
                    return try await deadlines.run { try await handle(method, path, request, context) }
                }
            }
            let allow = methods.map(\.rawValue).joined(separator: ", ")
            for method in Self.answeredMethods where !methods.contains(method) {
                router.on(RouterPath(pattern), method: method) { _, _ in
                    var response = APIResponse.error(
                        DiscfgError(.invalidArgument, "\(method.rawValue) is not allowed on \(path); use \(allow)", field: "method"),
                        action: method.rawValue.lowercased()
                    )
                    response.status = .methodNotAllowed
                    response.headers[.allow] = allow
                    return response
                }
            }
        }
    }

    /// Methods every path answers: its own, and 405 with `Allow` for the rest.
    static let answeredMethods: [HTTPRequest.Method] = [.get, .put, .post, .patch, .delete, .head, .options, .trace, HTTPRequest.Method("QUERY")!]

    static func hummingbirdPattern(_ path: String) -> String {
        path.replacingOccurrences(of: "{config}", with: ":config").replacingOccurrences(of: "{key}", with: "**")
    }

    private func handle<Context: DiscfgRequestContext>(
        _ method: HTTPRequest.Method, _ path: String, _ request: Request, _ context: Context
    ) async throws -> Response {
        var request = request
        switch (method, path) {
        case (.get, "/openapi.yaml"):
            return APIResponse.bytes(Data(Self.openAPIDocument.utf8), contentType: "application/yaml")
        case (.post, "/admin/sweep"): return try await sweep(request, context)
        case (.get, "/v1/configs"): return try await listConfigs(request, context)
        case (.put, "/v1/{config}"): return try await createConfig(&request, context)
        case (.get, "/v1/{config}"): return try await configInfo(request, context)
        case (.patch, "/v1/{config}"): return try await updateConfig(&request, context)
        case (.delete, "/v1/{config}"): return try await deleteConfig(request, context)
        case (.get, "/v1/{config}/keys"): return try await list(request, context, prefix: request.query("prefix") ?? "/", recursive: request.flag("recursive"))
        case (.delete, "/v1/{config}/keys"): return try await delete(request, context)
        case (.get, "/v1/{config}/keys/{key}"): return try await getOrList(request, context)
        case (.put, "/v1/{config}/keys/{key}"): return try await set(&request, context)
        case (.delete, "/v1/{config}/keys/{key}"): return try await delete(request, context)
        case (.get, "/v1/{config}/history/{key}"): return try await history(request, context)
        case (.get, "/v1/{config}/watch"): return try await watch(request, context)
        case (.get, "/v1/{config}/export"): return try await export(request, context)
        case (.post, "/v1/{config}/import"): return try await importSnapshot(&request, context)
        default: throw DiscfgError(.internal, "route \(method) \(path) has no handler")
        }
    }
}
