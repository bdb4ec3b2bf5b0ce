import DiscfgCore
import GRPCCore
import GRPCNIOTransportHTTP2
import ServiceLifecycle

/// The etcd v3 gRPC API over one config of a store (`discfg serve --etcd HOST:PORT`):
/// `KV`, `Watch`, `Maintenance.Status` and `Cluster.MemberList`, over plain HTTP/2.
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
    /// Told the port once the server listens.
    public let onListening: @Sendable (Int) -> Void

    /// A server; nothing listens until ``run()``.
    public init(
        store: any ConfigStore, config: ConfigName, host: String, port: Int, watchBacklogBytes: Int = 1 << 20,
        onListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.store = store
        self.config = config
        self.host = host
        self.port = port
        self.watchBacklogBytes = watchBacklogBytes
        self.onListening = onListening
    }

    public func run() async throws {
        let backend = EtcdBackend(store: store, config: config)
        try await backend.prepare()
        let identity = EtcdIdentity(config: config)
        let leases = EtcdLeases(backend: backend)
        try await leases.recover()
        let address: GRPCNIOTransportCore.SocketAddress = host.contains(":") ? .ipv6(host: host, port: port) : .ipv4(host: host == "localhost" ? "127.0.0.1" : host, port: port)
        let transport = HTTP2ServerTransport.Posix(address: address, transportSecurity: .plaintext)
        let display = host.contains(":") ? "[\(host)]" : host
        let cluster = EtcdClusterService(backend: backend, identity: identity, clientURL: EtcdClusterService.ClientURL("http://\(display):\(port)"))
        let server = GRPCServer(
            transport: transport,
            services: [
                EtcdKVService(backend: backend, identity: identity, leases: leases),
                EtcdLeaseService(backend: backend, identity: identity, leases: leases),
                EtcdWatchService(backend: backend, identity: identity, backlogBytes: watchBacklogBytes),
                EtcdMaintenanceService(backend: backend, identity: identity),
                cluster,
            ]
        )
        // Leases run out on this clock; their keys go in one transaction each.
        let expiry = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                await leases.expire()
            }
        }
        defer { expiry.cancel() }
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await server.serve() }
            let bound = try await transport.listeningAddress
            let boundPort = bound.ipv4?.port ?? bound.ipv6?.port ?? port
            cluster.clientURL.set("http://\(display):\(boundPort)")
            onListening(boundPort)
            try? await gracefulShutdown()
            server.beginGracefulShutdown()
        }
    }
}
