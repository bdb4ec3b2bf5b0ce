import AsyncHTTPClient
import DiscfgAPI
import DiscfgCore
import DiscfgNetwork
import DiscfgSQLite
import DiscfgWire
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// `discfg serve` running in this process on a free loopback port, over a fresh SQLite
/// store, and a client to talk to it over real HTTP: the one in-process server of the
/// API tests and of the remote store's conformance fixture.
public final class LiveServer: TestServer {
    public struct Reply: Sendable {
        public var status: Int
        public var headers: HTTPHeaders
        public var body: Data

        public var text: String { String(decoding: body, as: UTF8.self) }

        public func envelope() throws -> Envelope {
            try JSONDecoder.discfg().decode(Envelope.self, from: body)
        }
    }

    public let port: Int
    public let store: SQLiteStore
    public let directory: URL
    public let client: HTTPClient
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    private init(port: Int, store: SQLiteStore, directory: URL, group: ServiceGroup, task: Task<Void, any Error>) {
        self.port = port
        self.store = store
        self.directory = directory
        self.group = group
        self.task = task
        client = HTTPClient(eventLoopGroupProvider: .singleton)
    }

    /// A server a test let go of without ``stop()`` (its set-up threw after the start):
    /// its client is shut down, which AsyncHTTPClient requires of every client it frees,
    /// and the server is stopped, so the test fails rather than the whole test process.
    deinit {
        client.shutdown { _ in }
        task.cancel()
    }

    /// Starts a server; `auth` decides whether tokens are needed, and token records are
    /// trusted for `tokenCacheLifetime` (short, so tests see revocations at once);
    /// `certificateRoles` are the roles of client certificates, for a server whose
    /// `configure` gives it TLS with a client CA; `serving` wraps the store the API serves
    /// (a slow one, say), the tokens staying in the SQLite store.
    public static func start(
        auth: Authenticator.Mode = .open, tokenCacheLifetime: Duration = .milliseconds(1), port: Int = 0, directory: URL? = nil,
        clock: any WallClock = SystemClock(), certificateRoles: ClientCertificateRoles = .none,
        configure: (inout DiscfgServer.Configuration) -> Void = { _ in },
        serving: (SQLiteStore) -> any ConfigStore = { $0 }
    ) async throws -> LiveServer {
        let directory = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("discfg-api-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = try SQLiteStore(path: directory.appendingPathComponent("store.db").path, clock: clock)
        var configuration = DiscfgServer.Configuration()
        configuration.port = port
        configuration.clock = clock
        configure(&configuration)
        var logger = Logger(label: "discfg-test")
        logger.logLevel = .critical
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = DiscfgServer.makeApplication(
            store: serving(store), authenticator: Authenticator(mode: auth, store: store, cacheLifetime: tokenCacheLifetime, certificateRoles: certificateRoles),
            configuration: configuration, logger: logger, onServerRunning: { portContinuation.yield($0) }
        )
        let group = ServiceGroup(services: [app], logger: logger)
        // A server that cannot bind ends at once: end the wait for its port with it.
        let task = Task {
            defer { portContinuation.finish() }
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            var reason = "it stopped before listening"
            if case .failure(let error) = await task.result { reason = "\(error)" }
            throw DiscfgError(.unavailable, "the test server did not start on port \(configuration.port): \(reason)")
        }
        return LiveServer(port: port, store: store, directory: directory, group: group, task: task)
    }

    /// Stops the server and removes its files.
    public func stop() async {
        await halt()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Stops the server, keeping its store file for a restart.
    public func halt() async {
        try? await client.shutdown()
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }

    /// Sends one request and reads the whole reply.
    public func request(
        _ method: HTTPMethod, _ path: String, body: Data? = nil, headers: [(String, String)] = [], timeout: TimeAmount = .seconds(20)
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(request, timeout: timeout)
        let bytes = try await response.body.collect(upTo: 64 * 1024 * 1024)
        return Reply(status: Int(response.status.code), headers: response.headers, body: Data(bytes.readableBytesView))
    }

    public func put(_ path: String, _ text: String, headers: [(String, String)] = []) async throws -> Reply {
        try await request(.PUT, path, body: Data(text.utf8), headers: headers)
    }

    public func get(_ path: String, headers: [(String, String)] = []) async throws -> Reply {
        try await request(.GET, path, headers: headers)
    }
}
