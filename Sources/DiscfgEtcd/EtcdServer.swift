import DiscfgCore
import DiscfgService
import DiscfgNetwork
import GRPCCore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// The etcd v3 gRPC API over one config of a store (`discfg serve --etcd HOST:PORT`):
/// `KV`, `Watch`, `Lease`, `Maintenance.Status`, `Cluster.MemberList` and `Auth.Authenticate`
/// (with discfg tokens, ``access``), over HTTP/2, plain or under TLS (``tls``), and
/// the same methods through etcd's HTTP/JSON gateway on the same port (HTTP/1.1,
/// ``EtcdGateway``).
/// A `Service`: it stops when the service group shuts down.
///
/// ```swift
/// let etcd = EtcdServer(store: store, config: try ConfigName("etcd"), host: "127.0.0.1", port: 2379)
/// try await etcd.run()
/// ```
public struct EtcdServer: Service {
    /// The store.
    public let store: any ConfigStore
    /// The config holding the etcd keys; created if missing.
    public let config: ConfigName
    /// The address to listen on: an IPv4 or IPv6 address, or `localhost`.
    public let host: String
    /// The port; 0 picks a free one.
    public let port: Int
    /// Bytes of events each watcher holds for a client reading slower than the store
    /// changes, before it lets them go and catches up from history.
    public let watchBacklogBytes: Int
    /// How long a connection may wait for its client before it is closed: to finish the
    /// HTTP/2 preface; with no request open (then with GOAWAY, as gRPC's
    /// `MaxConnectionIdle`); and how long one request message may take to arrive whole
    /// before its stream is reset.
    public let idleTimeout: Duration
    /// How long an answer may wait on the client's flow-control window with no byte
    /// sent before its stream is reset, and a connection's socket may stay full before
    /// the connection is closed.
    public let writeTimeout: Duration
    /// Connections served at once; one more is closed as soon as it is accepted.
    public let maxConnections: Int
    /// Watchers open at once over all connections; a create past them is refused.
    public let maxWatchers: Int
    /// Told the port once the server listens.
    public let onListening: @Sendable (Int) -> Void
    /// Where leases are kept: the store itself when it keeps them, so every server on it
    /// sees the same leases and expires them when the server that granted them is gone;
    /// nil keeps them in this process.
    public var leaseStore: (any LeaseStore)?
    /// Who may call: everyone, or while the store's tokens are required, callers that
    /// authenticated with one (``EtcdAccess``), followed live. Open unless set.
    public var access = EtcdAccess.open
    /// The token cache the server's REST API answers from, when it runs one: the etcd
    /// API's sessions then follow the same reading of the store's tokens (nil: its own).
    public var tokenCache: TokenCache?
    /// The history the config keeps when this server creates it (an existing config
    /// keeps its own, and ``notice`` is told when it differs).
    public var history = EtcdBackend.defaultHistory
    /// The quota of the config when this server creates it (etcd's
    /// `--quota-backend-bytes`; nil for none). An existing config keeps its own.
    public var quotaBytes: Int? = EtcdBackend.defaultQuotaBytes
    /// Told, in a sentence for the log, what an operator should know: the access rule's
    /// answer changed; the config keeps other history than ``history``.
    public var notice: @Sendable (String) -> Void = { _ in }
    /// How long a call may take before it is answered `UNAVAILABLE`, and the log that
    /// has the details of failures callers are told in general terms (``FailurePolicy``).
    public var requestTimeout: Duration = .seconds(30), logger = Logger(label: "discfg.etcd")
    /// Whether to listen off loopback although calls need no credentials there: tokens
    /// are not required, nor client certificates (`--insecure`).
    public var openToRemotePeers = false
    /// TLS for every connection, with ALPN `h2` as etcd offers it (`serve --tls-cert`,
    /// `--tls-key`, `--tls-client-ca`); nil for plain HTTP/2. Its files are read again by
    /// whoever calls ``DiscfgNetwork/ServerTLS/reloadOnHangup(logger:)`` on it (`serve` does, on SIGHUP).
    public var tls: ServerTLS?
    /// Whether to listen off loopback without TLS (`--insecure`).
    public var allowsPlaintextOffLoopback = false
    /// What client certificates may do (mutual TLS, `serve --tls-client-roles`), the roles
    /// the REST API gives them too: a call that carries no etcd token runs as its
    /// connection's certificate, as the same ``DiscfgNetwork/ClientCertificateRoles/caller(for:)``
    /// the REST API asks, checked call by call as a token's; one with a token, as the
    /// token. With roles given, a connection whose certificate has none is closed as its
    /// handshake completes; with none, every certificate the client CA signed may call,
    /// as etcd's `--client-cert-auth` admits them, and is no credential.
    public var certificateRoles: ClientCertificateRoles = .none
    /// Origins (`https://console.example.com`, `serve --cors-origin`) whose web pages may
    /// call the JSON gateway, as they may call the REST API; other pages may change nothing.
    public var allowedOrigins: [String] = []
    /// Where each call's audit line (``AuditRecord``) is noted; nil for none. Whoever
    /// sets it runs its ``AuditTrailService``.
    public var auditTrail: AuditTrail?
    /// The server's metrics in Prometheus' text, which `GET /metrics` on the etcd port
    /// answers with etcd's own series after it (``EtcdMetrics``): the REST API's
    /// `/metrics` text when the server runs beside it (`serve` sets it); nil for the
    /// process's series alone.
    public var metricsText: (@Sendable () -> String)?

    /// A server; nothing listens until ``run()``.
    public init(
        store: any ConfigStore, config: ConfigName, host: String, port: Int, watchBacklogBytes: Int = 1 << 20,
        idleTimeout: Duration = .seconds(60), writeTimeout: Duration = .seconds(30), maxConnections: Int = 4096, maxWatchers: Int = 1000,
        onListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.idleTimeout = idleTimeout
        self.writeTimeout = writeTimeout
        self.maxConnections = maxConnections
        self.maxWatchers = maxWatchers
        self.store = store
        self.config = config
        self.host = host
        self.port = port
        self.watchBacklogBytes = watchBacklogBytes
        self.onListening = onListening
    }

    /// How long `GET /health` waits for the store before it says the member is unhealthy.
    static let healthTimeout = Duration.seconds(2)

    public func run() async throws {
        let gate = EtcdAccessGate(
            access, config: config, notice: notice, certificates: tls?.requiresClientCertificates == true ? certificateRoles : .none, tokens: tokenCache
        )
        // Known before the first connection: a server that starts with tokens required
        // refuses calls without one from the first.
        await gate.read()
        let requiresTokens = gate.current(at: .now)?.required == true
        try Self.checkBindSafety(host: host, tls: tls, allowsPlaintext: allowsPlaintextOffLoopback, openToRemotePeers: openToRemotePeers, requiresTokens: requiresTokens)
        let following = Task { await gate.follow() }
        defer { following.cancel() }
        var backend = EtcdBackend(store: store, config: config)
        backend.calls = EtcdCalls(timeout: requestTimeout, logger: logger, config: config)
        let prepared = try await backend.prepare(history: history, quotaBytes: quotaBytes)
        if prepared.settings.history != history {
            notice("config \(config) keeps \(prepared.settings.history.text) of history where a new etcd config keeps \(history.text); 'discfg update \(config) --history \(history.text)' bounds it")
        }
        if let quotaBytes, prepared.settings.quotaBytes == nil {
            notice("config \(config) has no quota where a new etcd config has \(quotaBytes) bytes; 'discfg update \(config) '{\"quotaBytes\": \(quotaBytes)}'' sets it")
        }
        let identity = EtcdIdentity(config: config)
        let audit = EtcdAudit(trail: auditTrail, config: config.rawValue)
        let leases = EtcdLeases(backend: backend, store: leaseStore)
        try await leases.recover()
        let display = host.contains(":") ? "[\(host)]" : host
        let scheme = tls == nil ? "http" : "https"
        let cluster = EtcdClusterService(backend: backend, identity: identity, clientURL: EtcdClusterService.ClientURL("\(scheme)://\(display):\(port)"))
        let authenticates = access.tokens != nil || !gate.certificates.grants.isEmpty
        let methods = EtcdMethodTable.methods(
            kv: EtcdKVService(backend: backend, identity: identity, leases: leases, authenticates: authenticates),
            lease: EtcdLeaseService(backend: backend, identity: identity, leases: leases, authenticates: authenticates),
            watch: EtcdWatchService(
                backend: backend, identity: identity, backlogBytes: watchBacklogBytes, openWatchers: Budget(limit: maxWatchers), authenticates: authenticates
            ),
            maintenance: EtcdMaintenanceService(backend: backend, identity: identity, authenticates: authenticates),
            cluster: cluster,
            auth: EtcdAuthService(backend: backend, identity: identity, gate: gate),
            audit: audit
        ).mapValues { method in
            var guarded = method.guarded(by: gate)
            guard audit.trail != nil else { return guarded }
            // A call refused before it runs has its audit line too.
            let admission = guarded.admission
            guarded.admission = { token, certificate in
                let admitted = admission(token, certificate)
                if case .refused(let error) = admitted { audit.refused(method.descriptor, error) }
                return admitted
            }
            return guarded
        }
        let gateway = EtcdGateway(
            methods: methods, version: EtcdMaintenanceService.version, browserGuard: BrowserGuard(boundHost: host, allowedOrigins: allowedOrigins), audit: audit,
            health: { [backend] in
                do {
                    _ = try await Deadline.within(.after(Self.healthTimeout)) { try await backend.currentRevision() }
                    return nil
                } catch {
                    return "its store did not answer within \(Self.healthTimeout.components.seconds) s"
                }
            },
            metrics: { [backend, metricsText] in
                // A store that does not answer leaves the database's size out, not the rest.
                let info = try? await Deadline.within(.after(Self.healthTimeout)) { try await backend.store.configInfo(backend.config) }
                return EtcdMetrics.text(served: metricsText?() ?? ProcessMetrics.text(), info: info)
            }
        )
        let connections = ConnectionCap(limit: maxConnections, stallTimeout: writeTimeout)
        let timeouts = GRPCConnection.Timeouts(idle: TimeAmount(idleTimeout), write: TimeAmount(writeTimeout), drain: TimeAmount(Self.drainTimeout))
        let heldBytes = Budget(limit: Self.maxHeldBytes, reserve: Self.reservedHeldBytes)
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(ChannelOptions.backlog, value: Int32(ConnectionCap.listenBacklog))
            .serverChannelInitializer { channel in
                // An accept that fails for want of descriptors (EMFILE, ENFILE) waits a
                // second before the next, as NIO's async bootstrap and so the REST API's
                // listener do; without it the listener retried at once, for ever, and
                // spun a core while the REST API starved.
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(AcceptBackoffHandler(shouldForwardIOErrorCaught: false))
                }
            }
            .childChannelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                guard connections.admit(channel) else {
                    // Over the limit: closed at once, which gRPC clients retry later.
                    return channel.close()
                }
                return channel.eventLoop.makeCompletedFuture {
                    // The subject of the connection's client certificate, noted as its
                    // handshake completes, when certificates are credentials.
                    let peer = gate.certificates.grants.isEmpty ? nil : PeerCertificate()
                    // Under TLS, first: the connection below reads and writes plain HTTP/2.
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(tls.handler(for: .h2))
                        try channel.pipeline.syncOperations.addHandler(TLSHandshakeGuard(
                            timeout: TimeAmount(tls.handshakeTimeout), peer: peer, admits: tls.requiresClientCertificates ? certificateRoles.handshakeAdmission : nil
                        ))
                    }
                    // gRPC clients speak HTTP/2 from the first byte (prior knowledge), which
                    // the connection reads itself; any other first bytes are HTTP/1.1 to
                    // the JSON gateway, over the same methods and budgets.
                    try channel.pipeline.syncOperations.addHandler(EtcdProtocolSniffer(
                        idleTimeout: timeouts.idle,
                        http2: { channel in
                            try channel.pipeline.syncOperations.addHandler(GRPCConnection(methods: methods, timeouts: timeouts, serverBytes: heldBytes, peer: peer))
                        },
                        http1: { channel in
                            try EtcdGatewayConnection.install(on: channel, gateway: gateway, timeouts: timeouts, serverBytes: heldBytes, peer: peer)
                        }
                    ))
                }
            }
            .bind(host: host == "localhost" ? "127.0.0.1" : host, port: port)
            .get()
        // Leases run out on the store's clock; their keys go in one transaction each.
        // Each pass lists the config's leases: on a store shared by servers, a query a
        // second while it holds leases and one every 5 s while it holds none; four a
        // second in this process.
        let pass: Duration = leaseStore == nil ? .milliseconds(250) : .seconds(1)
        let expiry = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: pass)
                await leases.expire()
            }
        }
        defer { expiry.cancel() }
        let boundPort = listener.localAddress?.port ?? port
        cluster.clientURL.set("\(scheme)://\(display):\(boundPort)")
        onListening(boundPort)
        try? await gracefulShutdown()
        try? await listener.close()
        // Each connection is sent GOAWAY and finishes the calls it took; the ones still
        // open after the drain timeout close themselves, and these are closed here.
        connections.quiesceAll()
        let deadline = ContinuousClock.now + Self.drainTimeout + .seconds(1)
        while connections.openConnections > 0, ContinuousClock.now < deadline, !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(20))
        }
        await connections.closeAll()
    }

    /// How long the calls a connection took may take to finish once the server stops.
    static let drainTimeout = Duration.seconds(10)

    /// The most bytes all connections together hold for their clients: requests before
    /// their methods took them, answers before they left, and each stream's and
    /// message's overhead (each connection also has its own limit,
    /// ``GRPCConnection/maxConnectionBytes``). The memory ceiling of docs/etcd.md is built on it.
    static let maxHeldBytes = 64 * GRPCConnection.maxMessageBytes
    /// The part of ``maxHeldBytes`` kept for connections that hold little: connections
    /// each at their own limit hold at most the rest together (``StreamBytes``'s fair
    /// share), so a few slow clients cannot refuse everyone else.
    static let reservedHeldBytes = maxHeldBytes / 4
}
