import DiscfgCore
import DiscfgService
import DiscfgNetwork
import Foundation
import Hummingbird

/// The discfg REST API (v1): one router that `discfg serve` runs over HTTP and the
/// Lambda function runs behind API Gateway.
///
/// It is generic over the request context, holds no server state, and can be called
/// without a server (`router.buildResponder().respond(to:context:)`).
///
/// ```swift
/// let api = ConfigAPI(store: try SQLiteStore(path: "discfg.db"), authenticator: .open)
/// let router = Router(context: APIRequestContext.self)
/// api.register(on: router)
/// ```
public struct ConfigAPI: Sendable {
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
        /// The most document reads (`GET …?document`) built and sent at once; more wait
        /// their turn. Each holds up to 16 MiB of values and 16 MiB of text meanwhile.
        public var maxDocumentReads = 2
        /// The most bytes of events a Server-Sent Events stream holds for a slow reader;
        /// past it the stream ends with an `error` event naming the `Last-Event-ID` to
        /// resume from.
        public var streamBacklogBytes = 1024 * 1024
        /// The most bytes of keys and values in a page of a listing, a history or a long
        /// poll, passed to the store, which stops reading there; a fuller page is cut
        /// short with a cursor to continue (at least one entry). A request's `maxBytes`
        /// may ask for less.
        public var maxPageBytes = Limits.maxPageBytes
        /// Whether the web console is served at `/ui/` (``Console``).
        public var servesConsole = true
        /// The clock a deployment's status is computed at: the store's.
        public var clock: any WallClock = SystemClock()
        /// The names a request may be sent to (the `Host` rule of a loopback server); nil
        /// where the transport checks them (Lambda behind API Gateway).
        public var browserGuard: BrowserGuard?
        /// The entity a read that names none is made for: the agent's instance id, so a
        /// host keeps one version of a staged deployment; nil on a server, whose plain
        /// reads get the stable version until a deployment completes.
        public var entity: String?
        /// What counts readers and the health applications report (`POST health`) and
        /// passes it on; nil for one the API makes, passing to its store within
        /// ``HealthCounter/defaultInlinePeriod`` of a report (what the Lambda function
        /// uses; `serve` and the agent give their own, flushed by a loop).
        public var health: HealthCounter?

        /// The defaults.
        public init() {}
    }

    public let store: any ConfigStore
    public let authenticator: Authenticator
    public let options: Options
    /// The open watches, capped by ``Options/maxWatches``.
    let watches: StreamSlots
    /// The document reads under way, capped by ``Options/maxDocumentReads``.
    let documentReads: DocumentReadSlots
    /// Whether a request may reach its route, for the router and the event loops alike.
    let admission: Admission
    /// The deadline of every request but the streaming ones, for the router and the event
    /// loops alike.
    let deadlines: RequestDeadlines
    /// Each config's flags, parsed once per change of its flag sets.
    let flagCatalogs = FlagCatalogCache()
    /// Each config's running deployments, for reads that name an entity.
    let deploymentOverlays = DeploymentOverlayCache()
    /// Readers and health counted here (``Options/health``, or the API's own).
    public let health: HealthCounter

    /// Creates the API over a store.
    public init(store: any ConfigStore, authenticator: Authenticator, options: Options = Options()) {
        self.store = store
        self.authenticator = authenticator
        self.options = options
        watches = StreamSlots(capacity: options.maxWatches)
        documentReads = DocumentReadSlots(capacity: options.maxDocumentReads)
        admission = Admission(browserGuard: options.browserGuard)
        deadlines = RequestDeadlines(timeout: options.requestTimeout)
        health = options.health ?? HealthCounter(
            reporter: HealthCounter.reporterName(instance: ProcessInfo.processInfo.hostName), sink: store, inlinePeriod: HealthCounter.defaultInlinePeriod, clock: options.clock
        )
    }

    /// Every route the API serves, for documentation checks and the authorization matrix.
    public static var routes: [Endpoint] { Endpoint.allCases }

    /// Adds every route to `router`, with JSON errors for failures, unknown paths and
    /// methods a path does not allow (405 with `Allow`).
    public func register<Context: DiscfgRequestContext>(on router: Router<Context>) {
        router.add(middleware: ErrorEnvelopeMiddleware<Context>())
        if options.servesConsole { Console.embedded.register(on: router) }
        var paths: [String] = []
        for endpoint in Endpoint.allCases where !paths.contains(endpoint.path) { paths.append(endpoint.path) }
        for path in paths {
            let pattern = RouterPath(Self.hummingbirdPattern(path))
            let endpoints = Endpoint.allCases.filter { $0.path == path }
            for endpoint in endpoints {
                router.on(pattern, method: endpoint.method) { request, context in
                    do {
                        // A stream (a watch, an export) has no deadline of its own; every other
                        // request has the configured timeout's, or its transport's if earlier.
                        if endpoint.streams { return try await respond(endpoint, request, context, deadline: nil) }
                        let answerBy = context.deadline.map { $0 - RequestDeadlines.answerMargin }
                        return try await deadlines.run(answerBy: answerBy) { deadline in
                            try await respond(endpoint, request, context, deadline: deadline)
                        }
                    } catch {
                        return try ErrorEnvelopeMiddleware<Context>.response(for: error, action: endpoint.action, request: request, logger: context.logger)
                    }
                }
            }
            let methods = endpoints.map(\.method)
            let allow = methods.map(\.rawValue).joined(separator: ", ")
            for method in Self.answeredMethods where !methods.contains(method) {
                router.on(pattern, method: method) { _, _ in
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
        path.replacingOccurrences(of: "{config}", with: ":config").replacingOccurrences(of: "{key}", with: "**").replacingOccurrences(of: "{id}", with: ":id")
            .replacingOccurrences(of: "{action}", with: ":action")
            .replacingOccurrences(of: "{flag}", with: ":flag").replacingOccurrences(of: "{env}", with: ":env")
            .replacingOccurrences(of: "{profile}", with: ":profile")
    }

    /// Answers one route: its request admitted (``Admission``), then its handler, whose
    /// operations the pipeline runs within `deadline`.
    func respond<Context: DiscfgRequestContext>(_ endpoint: Endpoint, _ request: Request, _ context: Context, deadline: Deadline?) async throws -> Response {
        var request = request
        AuditNote.current?.update { note in
            note.route = endpoint.path
            if endpoint.namesConfig { note.config = request.configNameText(context) }
            // With its leading slash, as the event loops' lines and keys have it.
            if endpoint.path.hasSuffix("{key}") { note.key = "/" + request.pathRemainder(context) }
            note.prefix = request.query("prefix")
        }
        let admitted: Admission.Admitted
        switch try await admit(endpoint, request, context) {
        case .success(let admission): admitted = admission
        case .failure(let refusal): return refusal.response(for: endpoint)
        }
        // Every operation the route performs goes through the one chain, as the caller
        // admitted above, with the reason the request gives for its changes.
        let perform = Performer(caller: admitted.caller, config: admitted.config, message: try Self.message(of: request), deadline: deadline)
        // A route whose reach is its keys performs its operation once it has read them;
        // every other is one operation, known from its route.
        guard endpoint.kind.reach != .keys else { return try await route(endpoint, &request, context, perform) }
        return try await perform(Action(endpoint.kind, on: admitted.config)) { try await route(endpoint, &request, context, perform) }
    }

    /// Runs an admitted request's handler, which decodes the operation the request is and
    /// performs it (``Performer``).
    private func route<Context: DiscfgRequestContext>(_ endpoint: Endpoint, _ request: inout Request, _ context: Context, _ perform: Performer) async throws -> Response {
        let caller = perform.caller
        switch endpoint {
        case .document: return APIResponse.bytes(Data(Self.openAPIDocument.utf8), contentType: "application/yaml")
        case .sweep: return try await sweep()
        case .listTokens: return try await listTokens()
        case .createToken: return try await createToken(&request)
        case .revokeToken: return try await revokeToken(context)
        case .listConfigs: return try await listConfigs(shownTo: caller)
        case .createConfig: return try await createConfig(&request, context)
        case .configInfo: return try await configInfo(request, context, shownTo: caller)
        case .updateConfig: return try await updateConfig(&request, context)
        case .deleteConfig: return try await deleteConfig(request, context)
        case .listKeys: return try await listOrDocument(request, context, perform)
        case .deletePrefix, .deleteKey: return try await delete(request, context, perform)
        case .getKey: return try await getOrList(request, context, perform)
        case .setKey: return try await set(&request, context, perform)
        case .patchKey: return try await patch(&request, context, perform)
        case .setDocument: return try await putDocument(&request, context, prefix: "/", perform)
        case .history: return try await history(request, context, perform)
        case .watch: return try await watch(request, context, perform)
        case .export: return try await export(request, context, perform)
        case .importSnapshot: return try await importSnapshot(&request, context, perform)
        case .transaction: return try await transaction(&request, context, perform)
        case .compact: return try await compact(request, context)
        case .listSchemas: return try await listSchemas(request, context)
        case .getSchema: return try await getSchema(request, context)
        case .setSchema: return try await setSchema(&request, context)
        case .deleteSchema: return try await deleteSchema(request, context)
        case .listDeployments: return try await listDeployments(request, context)
        case .startDeployment: return try await startDeployment(&request, context, perform)
        case .getDeployment: return try await getDeployment(request, context)
        case .changeDeployment: return try await changeDeployment(request, context, perform)
        case .reportHealth: return try await reportHealth(&request, context)
        case .deploymentHealth: return try await deploymentHealth(request, context)
        case .recordHealth: return try await recordHealth(&request, context)
        case .evaluateFlag: return try await evaluateFlag(&request, context, perform)
        case .evaluateFlags: return try await evaluateFlags(&request, context, perform)
        case .flagEvents: return try await flagEvents(request, context, perform)
        case .appConfigFlags: return try await appConfigFlags(request, context, perform)
        }
    }
}
