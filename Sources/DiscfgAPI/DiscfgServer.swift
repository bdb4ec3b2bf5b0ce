import DiscfgCore
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import ServiceLifecycle

/// `discfg serve`: the API over HTTP, with health, metrics, access logs, and a background sweeper that turns expired keys into `expire` events.
public enum DiscfgServer {
    /// How the server runs.
    public struct Configuration: Sendable {
        /// Address to listen on; `127.0.0.1` as the original.
        public var host = "127.0.0.1"
        /// Port to listen on; 8899 as the original.
        public var port = 8899
        /// How often expired keys are swept.
        public var sweepInterval: Duration = .seconds(1)
        /// API limits and timings.
        public var api = ConfigAPI.Options()
        /// Origins whose web pages may call the API (`--cors-origin`); none by default.
        public var allowedOrigins: [String] = []
        /// The most connections served at once; a request on one more is answered `503`
        /// with `Retry-After` and its connection closed (see ``ConnectionGuard``).
        public var maxConnections = 4096
        /// How long a client may leave the server's answer unread (an event stream it
        /// does not drain, a large page) before it is disconnected.
        public var writeTimeout: Duration = .seconds(30)
        /// How long a connection may sit without a request before it is closed; this
        /// also bounds a client that sends its request head too slowly.
        public var idleTimeout: Duration = .seconds(60)

        /// The defaults.
        public init() {}
    }

    /// The router `serve` runs: the API plus `/healthz` and `/metrics`.
    public static func makeRouter(
        store: any ConfigStore, authenticator: Authenticator, metrics: APIMetrics, configuration: Configuration
    ) -> Router<APIRequestContext> {
        let router = Router(context: APIRequestContext.self)
        router.add(middleware: AccessLogMiddleware(metrics: metrics))
        router.add(middleware: BrowserGuardMiddleware(guardrail: BrowserGuard(boundHost: configuration.host, allowedOrigins: configuration.allowedOrigins)))
        router.get("/healthz") { _, _ in
            _ = try await store.listConfigs()
            return APIResponse.bytes(Data("{\"status\":\"ok\"}\n".utf8), contentType: APIResponse.jsonContentType)
        }
        router.get("/metrics") { _, _ in
            APIResponse.bytes(Data(metrics.render().utf8), contentType: "text/plain; version=0.0.4; charset=utf-8")
        }
        ConfigAPI(store: InstrumentedStore(store, metrics: metrics), authenticator: authenticator, options: configuration.api)
            .register(on: router)
        return router
    }

    /// The application: server, sweeper, graceful shutdown on SIGTERM and SIGINT
    /// (`runService()`).
    public static func makeApplication(
        store: any ConfigStore, authenticator: Authenticator, configuration: Configuration, logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let metrics = APIMetrics()
        let router = makeRouter(store: store, authenticator: authenticator, metrics: metrics, configuration: configuration)
        let connections = ConnectionGuard(limit: configuration.maxConnections, stallTimeout: configuration.writeTimeout)
        let (seconds, attoseconds) = configuration.idleTimeout.components
        return Application(
            router: router,
            server: .http1(configuration: HTTP1Channel.Configuration(
                additionalChannelHandlers: [connections.handler()],
                idleTimeout: .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
            )),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: "discfg",
                availableConnectionsDelegate: .maximum(connections.acceptLimit, logger: logger)
            ),
            services: [ExpirySweepService(store: store, interval: configuration.sweepInterval, logger: logger)],
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
            logger: logger
        )
    }
}

/// Logs one line per request with its id, and counts it in the metrics.
struct AccessLogMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: APIMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            record(request, context, status: (error as? any HTTPResponseError)?.status.code ?? 500, start: start)
            throw error
        }
        record(request, context, status: response.status.code, start: start)
        return response
    }

    private func record(_ request: Request, _ context: Context, status: Int, start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        metrics.recordRequest(route: context.endpointPath ?? "unmatched", method: request.method.rawValue, status: status, seconds: elapsed.seconds)
        context.logger.info(
            "\(request.method) \(request.uri.path) \(status) \(Self.milliseconds(elapsed))ms",
            metadata: ["status": "\(status)"]
        )
    }

    /// A duration in milliseconds with two decimals, such as `0.42`.
    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        // Hundredths of a millisecond, rounded: 10^13 attoseconds each.
        let hundredths = seconds * 100_000 + (attoseconds + 5_000_000_000_000) / 10_000_000_000_000
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
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
