import ArgumentParser
import DiscfgAPI
import DiscfgCore
import DiscfgDynamoDB
import DiscfgEtcd
import DiscfgNetwork
import DiscfgService
import DiscfgSignals
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the REST API over HTTP.",
        usage: "discfg serve [<options>]",
        discussion: """
        Listens on 127.0.0.1:8899 by default, as the original did. Routes are \
        described at /openapi.yaml; /healthz and /metrics (Prometheus) are there \
        for operators. SIGTERM or Ctrl-C stops it gracefully, finishing requests \
        in flight. Once everything listens it writes one line naming each URL it \
        serves (the REST API, the console, /metrics, the etcd API); --log-format \
        json or logfmt makes that line, its other lines and the audit lines on \
        standard error one format for a log collector.

        Authentication uses bearer tokens ('discfg token create'):
          --auth auto    (default) open until the first token is created, then
                         required for good, even once every token is revoked
          --auth token   always required
          --auth none    never required

        Without a token, only callers on this machine are let in. A non-loopback \
        --host needs TLS (--tls-cert and --tls-key) and tokens or client \
        certificates (--tls-client-ca), unless --insecure is given, which also \
        lets other machines in without one.

        TLS (1.2 and later) serves both APIs with one certificate; SIGHUP reads \
        the files again (new connections get the new certificate, open ones \
        stay). --tls-client-ca requires a certificate of that CA on every \
        connection; --tls-client-roles gives common names roles as tokens have \
        them (CN=deployer=write@demo).

        Web pages cannot use the server: a request from another site's page may \
        not change anything (allow a console's origin with --cors-origin), and on \
        loopback the Host header must name this machine (421 otherwise), which \
        defeats DNS rebinding.

        A web console is at /ui/ (open http://127.0.0.1:8899/ui/ and enter a \
        token): browse, edit with compare-and-swap, and follow configs live. \
        --no-ui turns it off.

        Examples:
          discfg serve
          discfg serve --tls-cert cert.pem --tls-key key.pem   # over TLS
          discfg serve --store sqlite:///var/lib/discfg/discfg.db
          discfg serve --etcd 127.0.0.1:2379      # etcdctl and etcd clients work too

        --etcd serves the etcd v3 gRPC API (KV, Watch, Lease, Maintenance.Status, \
        Cluster.MemberList, Auth.Authenticate) beside the REST API, over one \
        config (--etcd-config, default etcd, created if missing). etcd keys are \
        any bytes; each becomes a discfg key that sorts as it does, e.g. \
        app/db.host is /app.2Fdb.2Ehost.

        While the REST API requires tokens, so does the etcd API: a client \
        authenticates with a token's id as user name and the token as password \
        (etcdctl --user ID --password dcfg_...), and each call is allowed by the \
        token's role and scopes; a call without one is refused ("user name is \
        empty"). It follows the tokens live: 'discfg token create' requires them \
        within a second or two, and a revoked token's calls and streams end as \
        fast. Off loopback it needs TLS and required tokens (or client \
        certificates), unless --insecure. A new etcd config keeps its last \
        100000 changes (--etcd-history).
        """
    )

    enum AuthMode: String, ExpressibleByArgument, CaseIterable {
        case auto, token, none
    }

    enum ReadViews: String, ExpressibleByArgument, CaseIterable {
        case auto, on, off
    }

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
    @OptionGroup(title: "TLS") var tls: ServeTLSOptions

    @Option(name: .long, help: "Address to listen on.") var host = "127.0.0.1"
    @Option(name: .long, help: "Port to listen on (0 picks a free one). Default: 8899.", transform: { Int(try NumberField("--port", 0...65535).parse($0)) })
    var port = 8899
    @Option(name: .long, help: "When bearer tokens are required: auto, token or none.") var auth: AuthMode = .auto
    @Flag(name: .long, help: "Allow a non-loopback address without TLS or without tokens, and callers from other machines without one.") var insecure = false
    @Option(name: .customLong("request-timeout"), help: ArgumentHelp("Abandon a request (other than a watch) after this many seconds (1-3600). Default: 30.", valueName: "seconds"),
            transform: { Int(try NumberField("--request-timeout", 1...3600).parse($0)) })
    var requestTimeout: Int = 30
    @Option(name: .customLong("max-poll-timeout"), help: ArgumentHelp("The longest a long-poll watch waits, in seconds (1-3600); shorter for proxies that cut idle connections. Default: 300.", valueName: "seconds"),
            transform: { Int(try NumberField("--max-poll-timeout", 1...3600).parse($0)) })
    var maxPollTimeout: Int = 300
    @Option(name: .customLong("cors-origin"), help: ArgumentHelp("Let web pages from this origin (https://host[:port]) call the API; repeatable. Others may not change anything.", valueName: "origin"),
            transform: { try BrowserGuard.validateOrigin($0) })
    var corsOrigins: [String] = []
    @Flag(name: .customLong("no-ui"), help: "Do not serve the web console at /ui/.") var noUI = false
    @Flag(name: .customLong("allow-http-webhooks"), help: "Let configs set plain http:// webhooks through the API.") var allowHTTPWebhooks = false
    @Flag(name: .customLong("allow-private-webhooks"), help: "Let configs set webhooks on loopback, private or link-local addresses through the API.") var allowPrivateWebhooks = false
    @Option(name: .customLong("max-connections"), help: ArgumentHelp("Connections served at once (1-1000000), by the REST API and by the etcd API each; a request on one more is answered 503 with Retry-After (the etcd API closes the connection, which clients retry). Lowered to fit the descriptor limit (ulimit -n, raised to its hard limit first): 128 descriptors are kept for the store and the listeners, and the two APIs share the rest. Default: 4096.", valueName: "count"),
            transform: { Int(try NumberField("--max-connections", 1...1_000_000).parse($0)) })
    var maxConnections: Int = 4096
    @Option(name: .customLong("write-timeout"), help: ArgumentHelp("Seconds (1-86400) a client may keep the server's send buffer full, reading nothing or a trickle of an event stream or a large page, before it is disconnected; on the etcd API also how long an answer may wait on the client's closed flow-control window before its stream is reset. Default: 30.", valueName: "seconds"),
            transform: { try NumberField("--write-timeout", 1...86_400).parse($0) })
    var writeTimeout: Int64 = 30
    @Option(name: .customLong("idle-timeout"), help: ArgumentHelp("Seconds (1-86400) a connection may wait without sending a whole request before it is closed; on the etcd API, one with no request open is sent GOAWAY and closed (PINGs do not count), and a request message not whole by then resets its stream. Default: 60.", valueName: "seconds"),
            transform: { try NumberField("--idle-timeout", 1...86_400).parse($0) })
    var idleTimeout: Int64 = 60
    @Option(name: .customLong("max-watches"), help: ArgumentHelp("Watches open at once (1-1000000): event streams and long polls, answered 503 with Retry-After past it, and, counted apart, etcd watchers, a create past it refused with a reason. Default: 1000.", valueName: "count"),
            transform: { Int(try NumberField("--max-watches", 1...1_000_000).parse($0)) })
    var maxWatches: Int = 1000
    @Option(name: .customLong("stream-backlog"), help: ArgumentHelp("KiB (1-1048576) of events an event stream holds for a slow reader before cutting it off with the Last-Event-ID to resume from; an etcd watch stream's watchers hold it together, and one past it lets go and catches up from history. Default: 1024.", valueName: "KiB"),
            transform: { Int(try NumberField("--stream-backlog", 1...1_048_576).parse($0)) })
    var streamBacklog: Int = 1024
    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.") var logLevel = "info"
    @Option(name: .customLong("log-format"), help: ArgumentHelp(
        "How the lines on standard error are written, the server's own and the audit lines alike: text, json (an object a line) or logfmt (key=value pairs). An --audit-log file keeps JSON lines. Default: text.",
        valueName: "format"
    )) var logFormat: LogFormat = .text
    @Option(name: .customLong("audit-log"), help: ArgumentHelp(
        "Append the audit log (a JSON line per request and per refusal, on both APIs: who, what, which config and keys, the outcome, the revision of a change; never values, tokens or messages) to this file rather than standard error. SIGHUP opens it again, for rotation.",
        valueName: "file"
    )) var auditLog: String?
    @Option(name: .customLong("etcd"), help: ArgumentHelp("Also serve the etcd v3 gRPC API on this address (e.g. 127.0.0.1:2379; port 0 picks a free one).", valueName: "host:port"))
    var etcdAddress: String?
    @Option(name: .customLong("etcd-config"), help: ArgumentHelp("The config holding the etcd API's keys. Default: etcd.", valueName: "config"))
    var etcdConfig = "etcd"
    @Option(name: .customLong("etcd-history"), help: ArgumentHelp(
        "The history a new etcd config keeps: N (its last N changes), Nd (N days) or forever, as etcd keeps every revision until compacted. An existing config keeps its own ('discfg update' changes it). Default: 100000.",
        valueName: "retention"
    ), transform: { text in
        do { return try HistoryRetention(parsing: text) } catch let error as DiscfgError { throw usage(error.message, field: "--etcd-history") }
    })
    var etcdHistory = EtcdBackend.defaultHistory
    @Option(name: .customLong("etcd-quota"), help: ArgumentHelp(
        "Bytes of keys and values a new etcd config may hold, as --quota takes them (2GiB, 500MB, 1048576; 1 byte to 1 PiB), or none: past it a change is refused with etcd's NOSPACE ('mvcc: database space exceeded'), as etcd's --quota-backend-bytes. An existing config keeps its own. Default: 2GiB (etcd's).",
        valueName: "size"
    ), transform: { text in
        let size = text.trimmingCharacters(in: .whitespaces)
        return size.lowercased() == "none" ? nil : Int(try ByteSize.parse(size, as: NumberField.quotaBytes.named("--etcd-quota")))
    })
    var etcdQuota: Int? = EtcdBackend.defaultQuotaBytes
    @Option(name: .customLong("read-views"), help: ArgumentHelp(
        "Answer key reads from in-memory views of the configs read, kept current by watching the store: auto (on, except for dynamodb:// stores, whose watch polls the table), on or off.",
        valueName: "mode"
    )) var readViews: ReadViews = .auto
    @Option(name: .customLong("monitor-interval"), help: ArgumentHelp(
        "Seconds (0-3600) between passes of the deployment monitor, which records a staged deployment COMPLETE or ROLLED_BACK when its time comes (making its candidate live, or dropping it) and rolls one back when a signal it watches (--rollback-on) reads unhealthy; 0 runs none (another server, or the Lambda function's schedule, monitors). Default: 5.",
        valueName: "seconds"
    ), transform: { try NumberField("--monitor-interval", 0...3600).parse($0) })
    var monitorInterval: Int64 = 5
    @Option(name: .customLong("otel-endpoint"), help: ArgumentHelp(
        "Export spans of requests, their store calls and AWS calls over OTLP/HTTP to the collector at this URL (e.g. http://127.0.0.1:4318; spans go to its /v1/traces). The OTEL_* environment variables tune the export.",
        valueName: "url"
    ), transform: { try OTelEndpoint(parsing: $0) }) var otelEndpoint: OTelEndpoint?

    func run() async throws {
        try await global.run("serve") { output in
            guard let level = Logger.Level(rawValue: logLevel) else { throw usage("unknown log level \(logLevel)", field: "--log-level") }
            let serverTLS = try tls.serverTLS()
            let certificateRoles = try tls.roles()
            let store = try global.makeStore()
            let tokens = store as? any TokenStore
            let tokenCount = try await tokens?.listTokens().count ?? 0
            let issued = try await tokens?.tokensWereIssued() ?? false
            let mode: Authenticator.Mode = switch auth {
            case .none: .open
            case .token: .required
            case .auto: .onceTokensExist
            }
            let authenticator = Authenticator(mode: mode, store: tokens, openToRemotePeers: insecure, certificateRoles: certificateRoles)
            var configuration = DiscfgServer.Configuration()
            configuration.host = host
            configuration.port = port
            configuration.tls = serverTLS
            configuration.allowsPlaintextOffLoopback = insecure
            // The servers refuse an unsafe bind themselves; checked here first, for the
            // command's own words and exit status.
            do { try await DiscfgServer.checkBindSafety(configuration, authenticator: authenticator) } catch let refusal as DiscfgServer.BindRefusal {
                throw ServeTLSOptions.refusal(refusal)
            }
            if mode != .open, tokens == nil {
                throw usage("this store keeps no tokens; use --auth none on loopback", field: "--auth")
            }
            // The etcd API authenticates callers with discfg tokens while the REST API requires them.
            let answersWithoutToken = try await authenticator.answersWithoutToken()
            let requiresTokens = mode != .open && !answersWithoutToken
            let etcd = try etcdAddress.map { address in
                let (etcdHost, etcdPort) = try Self.hostAndPort(address)
                let config: ConfigName
                do { config = try ConfigName(etcdConfig) } catch let error as DiscfgError { throw usage(error.message, field: "--etcd-config") }
                do {
                    try EtcdServer.checkBindSafety(host: etcdHost, tls: serverTLS, allowsPlaintext: insecure, openToRemotePeers: insecure, requiresTokens: requiresTokens)
                } catch let refusal as EtcdServer.BindRefusal {
                    throw ServeTLSOptions.refusal(refusal)
                }
                try ListenFailure.check(host: etcdHost, port: etcdPort, field: "--etcd")
                return (host: etcdHost, port: etcdPort, config: config)
            }
            // Buffered: a line per request written one at a time would cost more than the request.
            let logSink = LogSink.standardError
            defer { logSink.flush() }
            let format = logFormat
            var logger = Logger(label: "discfg") { BufferedLogHandler(label: $0, sink: logSink, format: format) }
            let serveLog = ServeLog(sink: logSink, format: logFormat)
            logger.logLevel = level
            let auditSink: LogSink
            do { auditSink = try auditLog.map(LogSink.init(appendingTo:)) ?? logSink } catch let error as DiscfgError { throw usage("--audit-log: \(error.message)", field: "--audit-log") }
            defer { auditSink.flush() }
            let otel: (any Service)? = try otelEndpoint?.bootstrap()
            // SIGHUP is trapped from here on, before any port is announced: a reload asked
            // for at once is handled, never the signal's default end of the process.
            let hangups = await Hangups()
            configuration.hangups = hangups
            if auditLog != nil {
                hangups.onEach { [logger] in
                    do { try auditSink.reopen() } catch { logger.error("kept appending to the old audit log file on SIGHUP: \(error)") }
                }
            }
            configuration.api.requestTimeout = .seconds(requestTimeout)
            configuration.api.maxPollTimeout = .seconds(maxPollTimeout)
            configuration.allowedOrigins = corsOrigins
            configuration.api.webhookPolicy = WebhookPolicy(allowHTTP: allowHTTPWebhooks, allowPrivate: allowPrivateWebhooks)
            configuration.api.defaultPollTimeout = min(configuration.api.defaultPollTimeout, .seconds(maxPollTimeout))
            // One descriptor budget for both APIs, so neither can starve the other or the store.
            let descriptors = DescriptorBudget(descriptors: DescriptorBudget.raisedLimit(), requested: maxConnections, servesEtcd: etcd != nil)
            if descriptors.lowered {
                let etcdPart = etcd == nil ? "" : " and \(descriptors.etcd) etcd API connections"
                serveLog.write(.warning, "the descriptor limit (ulimit -n \(descriptors.descriptors)) allows \(descriptors.rest) REST connections\(etcdPart) at once, fewer than --max-connections \(maxConnections); raise the limit for more")
            }
            configuration.maxConnections = descriptors.rest
            configuration.writeTimeout = .seconds(writeTimeout)
            configuration.idleTimeout = .seconds(idleTimeout)
            configuration.api.maxWatches = maxWatches
            configuration.api.servesConsole = !noUI
            configuration.api.streamBacklogBytes = streamBacklog * 1024
            // Readers and the health applications report (POST /v1/CONFIG/health) reach
            // the store each monitor interval, where the monitor reads them.
            let health = HealthCounter(reporter: HealthCounter.reporterName(instance: ProcessInfo.processInfo.hostName), sink: store)
            configuration.api.health = health
            // On standard error the audit lines are the access log, and --log-level above
            // info silences them (through the logger); a file gets every line.
            let audits = auditLog != nil || level <= .info ? auditSink : nil
            configuration.auditLog = audits
            // On standard error the audit lines share the log's format; a file keeps JSON.
            configuration.auditFormat = auditLog == nil ? logFormat : .json
            configuration.readViews = switch readViews {
            case .on: true
            case .off: false
            case .auto: !(store is DynamoDBStore)
            }
            let reach = insecure ? "" : ", and only from this machine"
            let authText = switch mode {
            case .open: "none\(reach)"
            case .required: "bearer tokens (\(tokenCount) valid)"
            case .onceTokensExist: issued ? "bearer tokens (\(tokenCount) valid)" : "none until a token is created\(reach)"
            }
            let storeName = global.storeDescription
            if insecure {
                if let warning = ServeTLSOptions.insecureWarning(host: host, tls: serverTLS, answersWithoutCredentials: try await authenticator.answersWithoutToken()) {
                    serveLog.write(.warning, warning)
                }
            }
            let scheme = serverTLS == nil ? "http" : "https"
            if let serverTLS {
                let clients = serverTLS.files.clientCA.map { ", client certificates of \($0) required" } ?? ""
                serveLog.write(.notice, "TLS with \(ServerTLS.describe(serverTLS.loaded))\(clients); SIGHUP reads the files again")
            }
            let startLine = StartLine(
                log: serveLog, store: storeName, scheme: scheme, host: host, console: !noUI,
                etcd: etcd.map { (host: $0.host, config: $0.config) }, auth: authText
            )
            let auditFormat = configuration.auditFormat
            let app = DiscfgServer.makeApplication(
                store: store, authenticator: authenticator, configuration: configuration, logger: logger,
                onServerRunning: { startLine.restListening($0) },
                services: { apiStore, metricsText in
                    var exporters = otel.map { [$0] } ?? []
                    exporters.append(HealthFlushService(counter: health, interval: .seconds(monitorInterval > 0 ? monitorInterval : 5)))
                    if monitorInterval > 0 {
                        let signals = SignalReader.standard(region: global.aws.region, profile: global.aws.credProfile, credentials: try? global.aws.explicitCredentials())
                        exporters.append(DeploymentMonitorService(
                            monitor: DeploymentMonitor(store: apiStore, signals: signals), signals: signals, interval: .seconds(monitorInterval), log: serveLog
                        ))
                    }
                    guard let etcd else { return exporters }
                    var server = EtcdServer(
                        store: apiStore, config: etcd.config, host: etcd.host, port: etcd.port,
                        watchBacklogBytes: streamBacklog * 1024, idleTimeout: .seconds(idleTimeout), writeTimeout: .seconds(writeTimeout),
                        maxConnections: descriptors.etcd, maxWatchers: maxWatches
                    ) { startLine.etcdListening($0) }
                    // While tokens are required (followed live), etcd calls need an etcd token
                    // from Auth.Authenticate with a discfg token, as the REST API needs the
                    // token itself; a call without one runs as its connection's client
                    // certificate when that has a role (etcdRoles).
                    server.access = switch (mode, tokens) {
                    case (.open, _), (_, nil): .open
                    case (.required, let tokens?): .tokensRequired(tokens)
                    case (.onceTokensExist, let tokens?): .tokensOnceIssued(tokens)
                    }
                    // One reading of the tokens for both APIs.
                    server.tokenCache = authenticator.tokenCache
                    server.leaseStore = store as? any LeaseStore
                    server.history = etcdHistory
                    server.quotaBytes = etcdQuota
                    server.notice = { serveLog.write(.notice, $0) }
                    if server.leaseStore == nil {
                        server.notice("etcd leases are kept in this process: store \(storeName) keeps none, so another serve --etcd on it neither renews nor expires them (a dead server's leases and their keys stay); serve the etcd API over SQLite or DynamoDB directly to share them")
                    }
                    server.openToRemotePeers = insecure
                    server.allowedOrigins = corsOrigins
                    server.tls = serverTLS
                    server.allowsPlaintextOffLoopback = insecure
                    server.certificateRoles = certificateRoles
                    server.requestTimeout = .seconds(requestTimeout)
                    server.logger = logger
                    // The etcd port's /metrics serves the REST API's text, with etcd's series.
                    server.metricsText = metricsText
                    let trail = audits.map { AuditTrail(sink: $0, format: auditFormat) }
                    server.auditTrail = trail
                    return exporters + [ListeningService(server, host: etcd.host, port: etcd.port, field: "--etcd")]
                        + (trail.map { [AuditTrailService(trail: $0)] } ?? [])
                }
            )
            _ = output
            do { try await app.runService() } catch let error as IOError where ListenFailure.covers(error) {
                throw ListenFailure.error(error, host: host, port: port, field: "--port")
            }
        }
    }

    /// `HOST:PORT` or `[IPV6]:PORT`, as `--etcd` takes it.
    static func hostAndPort(_ text: String) throws -> (String, Int) {
        guard let colon = text.lastIndex(of: ":") else {
            throw usage("--etcd takes HOST:PORT (e.g. 127.0.0.1:2379), got \"\(text.debugEscaped)\"", field: "--etcd")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw usage("--etcd names no host in \"\(text.debugEscaped)\"; e.g. 127.0.0.1:2379", field: "--etcd") }
        let port = try Int(NumberField("--etcd port", 0...65535).parse(String(text[text.index(after: colon)...])))
        return (host, port)
    }
}
