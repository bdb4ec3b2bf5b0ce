import DiscfgAgent
import DiscfgAPI
import DiscfgCore
import DiscfgLambda
import DiscfgStores
import Foundation
import Logging
import Synchronization

/// `discfg agent --lambda-extension`: the agent inside a Lambda execution environment, as
/// the layer's `extensions/discfg-agent`. Its configs are read through the agent's
/// followers into a ``ReplicaStore`` served read-only on `127.0.0.1:PORT`; each copy is
/// also kept in the cache directory, which a load falls back to when the store fails.
final class AgentExtension: ExtensionWorkload {
    private let settings: AgentExtensionSettings
    private let replica: ReplicaStore
    private let followers: [ConfigFollower]
    private let logger: Logger
    private let interval: Duration
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
        let store = try opener.open(StoreLocation(parsing: settings.store))
        let source = StoreSource(store, description: settings.store)
        let replica = ReplicaStore(source: settings.store, configs: settings.configs)
        let cache = settings.cacheDirectory
        self.settings = settings
        self.replica = replica
        self.logger = logger
        interval = settings.interval ?? .seconds(30)
        followers = settings.configs.map { config in
            ConfigFollower(config: config, source: source, replica: replica, logger: logger) { snapshot in
                Self.writeCache(snapshot, in: cache, logger: logger)
            }
        }
    }

    /// Starts serving, then loads every config from the store, or from the cache.
    func load() async throws {
        try await serve()
        for follower in followers {
            if case .failed(let why) = await follower.refresh() {
                let file = Self.cacheFile(follower.config, in: settings.cacheDirectory)
                guard let data = FileManager.default.contents(atPath: file), let snapshot = try? PublishedSnapshot(decoding: data),
                      snapshot.config == follower.config
                else {
                    throw DiscfgError(
                        .unavailable,
                        "config \"\(follower.config)\" could not be loaded from \(settings.store) (\(why)), and \(file) holds no copy of it",
                        field: "DISCFG_STORE"
                    )
                }
                replica.install(snapshot)
                logger.warning("serving config \(follower.config) from the cache at revision \(snapshot.revision): \(why)")
            }
        }
        state.withLock { $0.lastRefresh = .now }
    }

    /// Refreshes every config when an interval has passed since the last refresh and none
    /// is running; the extension loop calls this in a task of its own on each INVOKE.
    func refreshInBackground() async {
        let due = state.withLock { state in
            guard !state.refreshing, ContinuousClock.now - state.lastRefresh >= interval else { return false }
            state.refreshing = true
            return true
        }
        guard due else { return }
        for follower in followers { await follower.refresh() }
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
        var configuration = DiscfgServer.Configuration()
        configuration.port = settings.port
        // The followers change the replica behind the API's back: reads go to it directly.
        configuration.readViews = false
        let (bound, signal) = AsyncStream<Int>.makeStream()
        let app = DiscfgServer.makeApplication(
            store: replica, authenticator: .open, configuration: configuration, logger: logger,
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
            let outcome = await server.result
            throw DiscfgError(.unavailable, "cannot serve on 127.0.0.1:\(settings.port): \(outcome)", field: "DISCFG_AGENT_PORT")
        }
    }

    static func cacheFile(_ config: ConfigName, in directory: String) -> String {
        (directory as NSString).appendingPathComponent("\(config).json")
    }

    /// Keeps `snapshot` in the cache directory (written whole, then renamed into place).
    private static func writeCache(_ snapshot: PublishedSnapshot, in directory: String, logger: Logger) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try snapshot.encoded().write(to: URL(fileURLWithPath: cacheFile(snapshot.config, in: directory)), options: .atomic)
        } catch {
            logger.warning("cannot write the cache in \(directory): \(error)")
        }
    }
}
