import CoreMetrics
import DiscfgCore
import DiscfgService
import DiscfgNetwork
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
import Tracing

/// `discfg serve`: the API over HTTP, with health, metrics, an audit log, and a background sweeper that turns expired keys into `expire` events.
public enum DiscfgServer {
    /// The `Server` header of every answer.
    static let serverName = "discfg"

    /// How the server runs.
    public struct Configuration: Sendable {
        /// Address to listen on; `127.0.0.1` as the original.
        public var host = "127.0.0.1"
        /// Port to listen on; 8899 as the original.
        public var port = 8899
        /// A Unix domain socket to listen on in place of ``host`` and ``port`` (`discfg agent
        /// --listen unix:PATH`), whose file's permissions decide who may connect; its
        /// callers count as on this machine. A socket file already there is replaced.
        public var unixSocketPath: String?
        /// How often expired keys are swept.
        public var sweepInterval: Duration = .seconds(1)
        /// API limits and timings.
        public var api = ConfigAPI.Options()
        /// Origins whose web pages may call the API (`--cors-origin`); none by default.
        public var allowedOrigins: [String] = []
        /// The most connections served at once; a request on one more is answered `503`
        /// with `Retry-After` and its connection closed (see ``DiscfgNetwork/ConnectionCap``).
        public var maxConnections = 4096
        /// How long a client may leave the server's answer unread (an event stream it
        /// does not drain, a large page) before it is disconnected.
        public var writeTimeout: Duration = .seconds(30)
        /// How long a connection may sit without a request before it is closed; this
        /// also bounds a client that sends its request head too slowly.
        public var idleTimeout: Duration = .seconds(60)
        /// Whether key reads are answered from in-memory views of the configs read
        /// (``ConfigViews``), kept current by the store's watch. On for stores whose watch
        /// is cheap (SQLite, memory); a DynamoDB store's watch polls the table, so there it
        /// is a choice (`serve --read-views`).
        public var readViews = true
        /// Where the audit log goes: one JSON line (``AuditRecord``) per request and per
        /// refusal, the router's and the event loops' alike (`serve --audit-log`, else
        /// standard error); nil to log each line through the server's logger, at info.
        public var auditLog: LogSink?
        /// How the audit lines are written to ``auditLog``: JSON (the audit log file's
        /// format), or the format of the server's other lines when they share standard
        /// error (`serve --log-format`).
        public var auditFormat: LogFormat = .json
        /// The clock the views judge TTLs by, and deployments' status is computed at: the store's.
        public var clock: any WallClock = SystemClock()
        /// Where spans of requests and their store calls go; nil for the tracer
        /// `InstrumentationSystem` was bootstrapped with, and none while that is the no-op one.
        /// Traced, every request goes through the router, where it gets its span: the
        /// event loops answer none.
        public var tracer: (any Tracer)?
        /// A swift-metrics backend that sees the server's series besides `/metrics`; nil
        /// for the one `MetricsSystem` was bootstrapped with, if any.
        public var metricsBackend: (any MetricsFactory)?
        /// TLS for every connection (`serve --tls-cert`, `--tls-key`, `--tls-client-ca`),
        /// read again on each of ``hangups`` while the application runs; nil for plain HTTP.
        public var tls: ServerTLS?
        /// SIGHUP, trapped before the server listens (`serve` makes it first thing): the
        /// application runs it and reloads ``tls`` on it. nil: SIGHUP is not the server's.
        public var hangups: Hangups?
        /// The body of `/healthz` (JSON) in place of `{"status":"ok"}`, e.g. a read-only
        /// copy's staleness (`discfg agent`); it may throw to answer as a failure.
        public var health: (@Sendable () async throws -> Data)?
        /// Prometheus text appended to `/metrics`: series the server does not keep itself.
        public var metricsAppendix: (@Sendable () -> String)?
        /// Headers added to every answer the router gives (`Discfg-Staleness`); set
        /// ``readViews`` off so that key reads go through the router too.
        public var answerHeaders: (@Sendable () -> HTTPFields)?
        /// Whether the server may listen off loopback without TLS, where bearer tokens
        /// and values cross the network in clear (`serve --insecure`).
        public var allowsPlaintextOffLoopback = false

        /// The defaults.
        public init() {}
    }

    /// The router `serve` runs: the API plus `/healthz` and `/metrics`.
    public static func makeRouter(
        store: any ConfigReading, authenticator: Authenticator, metrics: APIMetrics, configuration: Configuration
    ) -> Router<APIRequestContext> {
        makeRouter(
            store: store, apiStore: InstrumentedStore(store, metrics: metrics, tracer: RequestTracing.tracer(configuration.tracer)),
            authenticator: authenticator, metrics: metrics, configuration: configuration,
            metricsText: metricsText(store: store, metrics: metrics, configuration: configuration, accessLog: nil),
            auditLog: configuration.auditLog.map { AuditTrail(sink: $0, format: configuration.auditFormat) }
        )
    }

    /// The router, whose routes use `apiStore` (`store` as the API sees it), and whose
    /// `/metrics` answers `metricsText` (``metricsText(store:metrics:configuration:accessLog:)``).
    /// Its audit lines go to `auditLog`, the trail of the configured audit log, or without
    /// one through each request's logger.
    static func makeRouter(
        store: any ConfigReading, apiStore: InstrumentedStore, authenticator: Authenticator, metrics: APIMetrics, configuration: Configuration,
        metricsText text: @escaping @Sendable () -> String, auditLog: AuditTrail?
    ) -> Router<APIRequestContext> {
        let router = Router(context: APIRequestContext.self)
        router.add(middleware: AccessLogMiddleware(metrics: metrics, trail: auditLog))
        if let tracer = apiStore.tracer { router.add(middleware: TracingMiddleware(tracer: tracer)) }
        router.add(middleware: BrowserGuardMiddleware(guardrail: BrowserGuard(boundHost: configuration.host, allowedOrigins: configuration.allowedOrigins)))
        if let headers = configuration.answerHeaders { router.add(middleware: AnswerHeadersMiddleware(headers: headers)) }
        let health = configuration.health
        router.get("/healthz") { _, _ in
            if let health { return APIResponse.bytes(try await health(), contentType: APIResponse.jsonContentType) }
            _ = try await store.listConfigs()
            return APIResponse.bytes(Data("{\"status\":\"ok\"}\n".utf8), contentType: APIResponse.jsonContentType)
        }
        router.get("/metrics") { _, _ in
            APIResponse.bytes(Data(text().utf8), contentType: "text/plain; version=0.0.4; charset=utf-8")
        }
        api(store: apiStore, authenticator: authenticator, configuration: configuration).register(on: router)
        return router
    }

    /// What `/metrics` answers, made at each scrape: the server's series (`accessLog`'s
    /// key reads and writes counted first), the process's (``DiscfgNetwork/ProcessMetrics``)
    /// and the configuration's appendix. The one text of the server's metrics: the etcd
    /// API's port serves it too.
    static func metricsText(
        store: any ConfigReading, metrics: APIMetrics, configuration: Configuration, accessLog: AccessLog?
    ) -> @Sendable () -> String {
        let appendix = configuration.metricsAppendix
        let commits = store as? any GroupCommitReporting
        return {
            accessLog?.flush()
            return metrics.render(with: commits?.groupCommits) + ProcessMetrics.text() + (appendix?() ?? "")
        }
    }

    /// The API `serve` runs over `apiStore` (the store as the API sees it), as the router
    /// and the event loops (``KeyReads``) both serve it: they admit, time and store alike.
    static func api(store apiStore: any ConfigStore, authenticator: Authenticator, configuration: Configuration) -> ConfigAPI {
        var options = configuration.api
        options.browserGuard = BrowserGuard(boundHost: configuration.host, allowedOrigins: configuration.allowedOrigins)
        options.clock = configuration.clock
        return ConfigAPI(store: apiStore, authenticator: authenticator, options: options)
    }

    /// The application: server, sweeper, graceful shutdown on SIGTERM and SIGINT
    /// (`runService()`). Over a read-only copy (``ReadOnlyCopy``) every change is refused
    /// (``InstrumentedStore``) and nothing sweeps: the copy's source expires keys.
    public static func makeApplication(
        store: any ConfigReading, authenticator: Authenticator, configuration: Configuration, logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in },
        services extra: (_ apiStore: any ConfigStore, _ metricsText: @escaping @Sendable () -> String) -> [any Service] = { _, _ in [] }
    ) -> some ApplicationProtocol {
        let metrics = APIMetrics(backend: configuration.metricsBackend ?? APIMetrics.bootstrappedBackend)
        let views = configuration.readViews ? ConfigViews(store: store, clock: configuration.clock) : nil
        // One trail over the audit log for the router and the event loops. Without one,
        // lines a silenced logger would drop are not made.
        let auditLog = configuration.auditLog.map { AuditTrail(sink: $0, format: configuration.auditFormat) }
        let trail = auditLog ?? (logger.logLevel <= .info ? .logging(to: logger) : nil)
        let accessLog = views.map { _ in AccessLog(metrics: metrics, trail: trail, route: KeyReads.route) }
        // One view of the store for the router and the event loops: timed, and telling
        // the views of every write.
        let apiStore = InstrumentedStore(store, metrics: metrics, views: views, tracer: RequestTracing.tracer(configuration.tracer))
        let text = metricsText(store: store, metrics: metrics, configuration: configuration, accessLog: accessLog)
        let router = makeRouter(
            store: store, apiStore: apiStore, authenticator: authenticator, metrics: metrics, configuration: configuration, metricsText: text,
            auditLog: auditLog
        )
        let connections = ConnectionCap(limit: configuration.maxConnections, stallTimeout: configuration.writeTimeout)
        // Traced or not, the same requests are taken on the event loops, with the span the
        // router would give them: tracing watches the path, it never picks another.
        let reads = views.map {
            KeyReads(views: $0, api: api(store: apiStore, authenticator: authenticator, configuration: configuration), logger: logger, tracer: apiStore.tracer)
        }
        let (seconds, attoseconds) = configuration.idleTimeout.components
        let idleTimeout = TimeAmount.nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        var services: [any Service] = []
        if let store = store as? any ConfigStore { services.append(ExpirySweepService(store: store, interval: configuration.sweepInterval, logger: logger)) }
        if let views { services.append(ConfigViewsService(views: views)) }
        if let accessLog { services.append(AccessLogService(log: accessLog)) }
        if let hangups = configuration.hangups {
            if let tls = configuration.tls { hangups.onEach(tls.reloadOnHangup(logger: logger)) }
            services.append(hangups)
        }
        // Services that write through the same view of the store (the etcd API), so the
        // views see their writes too.
        services += extra(apiStore, text)
        var application = Application(
            router: router,
            server: HTTPServerBuilder { responder in
                ServerChannel(responder: responder, cap: connections, reads: reads, accessLog: accessLog, idleTimeout: idleTimeout, tls: configuration.tls)
            },
            configuration: ApplicationConfiguration(
                address: configuration.unixSocketPath.map { .unixDomainSocket(path: $0) } ?? .hostname(configuration.host, port: configuration.port),
                serverName: serverName,
                backlog: ConnectionCap.listenBacklog,
                availableConnectionsDelegate: .maximum(connections.acceptLimit, logger: logger)
            ),
            services: services,
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
            logger: logger
        )
        application.beforeServerStarts { try await checkBindSafety(configuration, authenticator: authenticator) }
        return application
    }
}

/// Adds headers to every answer, e.g. a read-only copy's staleness.
struct AnswerHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    let headers: @Sendable () -> HTTPFields

    @concurrent func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        for field in headers() { response.headers[field.name] = field.value }
        return response
    }
}

/// Stops the views' watches when the server shuts down.
struct ConfigViewsService: Service {
    let views: ConfigViews

    func run() async throws {
        try? await gracefulShutdown()
        views.close()
    }
}

/// Sweeps expired keys into `expire` events while the server runs.
struct ExpirySweepService: Service {
    let store: any ConfigStore
    let interval: Duration
    let logger: Logger

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let events = try await store.sweepExpired()
                    if !events.isEmpty { logger.info("expired \(events.count) key(s)") }
                } catch {
                    logger.warning("expiry sweep failed: \(error)")
                }
                try await Task.sleep(for: interval)
            }
        }
    }
}
