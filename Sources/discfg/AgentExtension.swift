import DiscfgAgent
import DiscfgAPI
import DiscfgCore
import DiscfgLambda
import DiscfgStores
import Foundation
import Logging
import NIOCore
import Synchronization

/// `discfg agent --lambda-extension`: the agent inside a Lambda execution environment, as
/// the layer's `extensions/discfg-agent`. An ``Agent`` (its followers, a ``ReplicaStore``
/// and the cache directory's last known good copies) is served read-only on
/// `127.0.0.1:PORT`; it refreshes when an INVOKE finds the interval passed, not on a timer,
/// since Lambda freezes the environment between invokes.
final class AgentExtension: ExtensionWorkload {
    /// The interval when `DISCFG_AGENT_INTERVAL` is not set: `discfg agent --interval`'s default.
    static let defaultInterval: Duration = .seconds(15)

    private let agent: Agent
    private let port: Int
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var server: Task<Void, any Error>?
        var refreshing = false
        var lastRefresh = ContinuousClock.now
    }

    /// Runs the extension loop with the settings in `environment`; returns the exit status.
    static func run(environment: [String: String]) async -> Int32 {
        await LambdaExtension.run(name: AgentExtensionSettings.extensionName, environment: environment) { logger in
            try AgentExtension(environment: environment, logger: logger)
        }
    }

    /// Reads the settings and opens the store; nothing is read from it yet.
    ///
    /// - Throws: ``DiscfgError`` naming the variable that is missing or wrong, or the store URL.
    init(environment: [String: String], logger: Logger) throws {
        let settings = try AgentExtensionSettings(environment: environment)
        var opener = StoreOpener(environment: environment)
        opener.createTable = false
        let source: any AgentSource
        if let destination = settings.source {
            source = S3Source(s3: try opener.openS3(), destination: destination)
        } else {
            source = StoreSource(try opener.open(StoreLocation(parsing: settings.store)), description: settings.store)
        }
        let cache: SnapshotCache
        do { cache = try SnapshotCache(directory: settings.cacheDirectory) } catch let error as DiscfgError {
            throw DiscfgError.invalid("DISCFG_AGENT_CACHE_DIR", error.message.replacingOccurrences(of: "--cache-dir", with: "DISCFG_AGENT_CACHE_DIR"))
        }
        agent = Agent(
            source: source, configs: settings.configs,
            interval: settings.interval ?? Self.defaultInterval, cache: cache, logger: logger
        )
        port = settings.port
        self.logger = logger
    }

    /// Starts serving, then loads every config from the store, or from the cache.
    func load() async throws {
        try await serve()
        try await agent.load()
        state.withLock { $0.lastRefresh = .now }
    }

    /// Refreshes every config when an interval has passed since the last refresh and none
    /// is running; the extension loop calls this in a task of its own on each INVOKE.
    func refreshInBackground() async {
        let interval = agent.interval
        let due = state.withLock { state in
            guard !state.refreshing, ContinuousClock.now - state.lastRefresh >= interval else { return false }
            state.refreshing = true
            return true
        }
        guard due else { return }
        for follower in agent.followers { await follower.refresh() }
        state.withLock {
            $0.refreshing = false
            $0.lastRefresh = .now
        }
    }

    /// Stops serving.
    func shutdown() async {
        guard let server = state.withLock({ $0.server }) else { return }
        server.cancel()
        _ = await server.result
    }

    /// Serves the replica read-only on `127.0.0.1:PORT`; returns once the port is bound.
    private func serve() async throws {
        let configuration = agent.serverConfiguration(port: port)
        let (bound, signal) = AsyncStream<Int>.makeStream()
        let app = DiscfgServer.makeApplication(
            store: agent.replica, authenticator: .open, configuration: configuration, logger: logger,
            onServerRunning: { port in
                signal.yield(port)
                signal.finish()
            }
        )
        let server = Task {
            defer { signal.finish() }
            try await app.run()
        }
        state.withLock { $0.server = server }
        var ports = bound.makeAsyncIterator()
        guard await ports.next() != nil else {
            switch await server.result {
            case .failure(let error as IOError) where ListenFailure.covers(error):
                throw ListenFailure.error(error, port: port, field: "DISCFG_AGENT_PORT")
            case .failure(let error):
                throw DiscfgError(.unavailable, "cannot serve on 127.0.0.1:\(port): \(error)", field: "DISCFG_AGENT_PORT")
            case .success:
                throw DiscfgError(.unavailable, "cannot serve on 127.0.0.1:\(port): the server stopped before it listened", field: "DISCFG_AGENT_PORT")
            }
        }
    }
}
