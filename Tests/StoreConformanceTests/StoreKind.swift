import DiscfgAPI
import DiscfgAWS
import DiscfgClient
import DiscfgCore
import DiscfgDynamoDB
import DiscfgSQLite
import DiscfgTestSupport
import Foundation
import Logging
import ServiceLifecycle

/// The stores the conformance suite runs against. A new store joins the suite by adding
/// a case here; every test then runs against it too.
enum StoreKind: String, CaseIterable, CustomStringConvertible, Sendable {
    case memory
    case sqlite
    /// DynamoDB, served by one `moto_server` shared by the test process; a fresh table per
    /// test keeps tests apart. A moto that cannot start fails the test.
    case dynamodb
    /// The HTTP store: `RemoteStore` talking to `discfg serve` (over SQLite) in this
    /// process on a free loopback port.
    case remote

    var description: String { rawValue }

    /// A fresh, empty store that reads its time from `clock`.
    func make(clock: ManualClock) async throws -> StoreFixture {
        switch self {
        case .memory:
            return StoreFixture(store: MemoryStore(clock: clock), clock: clock, cleanup: {})
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("discfg-conformance-\(UUID().uuidString)", isDirectory: true)
            let path = directory.appendingPathComponent("store.db").path
            let store = try SQLiteStore(path: path, clock: clock)
            return StoreFixture(store: store, clock: clock, cleanup: {
                try? FileManager.default.removeItem(at: directory)
            })
        case .dynamodb:
            let client = try await MotoDynamoDB.shared.client()
            let table = "conformance-\(UUID().uuidString.prefix(13))"
            // moto is one Python process serving the whole suite one request at a time, so
            // while tests run in parallel a change can lose the race on the meta item to a
            // test's own busy writer many times in a row (twelve, the default, has run out).
            let store = DynamoDBStore(
                client: client,
                configuration: DynamoDBStore.Configuration(table: table, pollInterval: .milliseconds(200), maxChangeAttempts: 50),
                clock: clock
            )
            try await store.table.ensure()
            return StoreFixture(store: store, clock: clock, cleanup: {})
        case .remote:
            return try await RemoteFixture.start(clock: clock)
        }
    }

    /// Runs `body` with a fresh store and a manual clock, then removes the store.
    func withStore<T>(
        _ body: (_ store: any ConfigStore, _ clock: ManualClock) async throws -> T
    ) async throws -> T {
        // moto is one Python process: run only a few DynamoDB tests at once, so each
        // test's requests stay fast enough for the suite's watch deadlines.
        if self == .dynamodb { await MotoClient.gate.enter() }
        defer { if self == .dynamodb { Task { await MotoClient.gate.leave() } } }
        let fixture = try await make(clock: ManualClock())
        defer { fixture.cleanup() }
        return try await body(fixture.store, fixture.clock)
    }
}

/// A store under test, the clock it reads, and how to remove what it left behind.
struct StoreFixture: Sendable {
    let store: any ConfigStore
    let clock: ManualClock
    let cleanup: @Sendable () -> Void
}

/// Bounds how many DynamoDB tests talk to moto at once.
enum MotoClient {
    static let gate = TestGate(limit: 4)
}

/// A counting semaphore for async tests.
actor TestGate {
    private let limit: Int
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(limit: Int) { self.limit = limit }

    func enter() async {
        if running < limit {
            running += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func leave() {
        if waiting.isEmpty {
            running -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}

/// `discfg serve` in this process over a fresh SQLite file, and a `RemoteStore` on it.
enum RemoteFixture {
    static func start(clock: ManualClock) async throws -> StoreFixture {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("discfg-remote-\(UUID().uuidString)", isDirectory: true)
        let backing = try SQLiteStore(path: directory.appendingPathComponent("store.db").path, clock: clock)
        var configuration = DiscfgServer.Configuration()
        configuration.port = 0
        // Sweeps happen when the suite asks (and while watching), not on the server's timer.
        configuration.sweepInterval = .seconds(3600)
        // The suite tests what stores keep; where webhooks may point is the API's policy.
        configuration.api.webhookPolicy = WebhookPolicy(allowHTTP: true, allowPrivate: true)
        var logger = Logger(label: "discfg-conformance")
        logger.logLevel = .critical
        let (ports, announce) = AsyncStream.makeStream(of: Int.self)
        let app = DiscfgServer.makeApplication(
            store: backing, authenticator: .open, configuration: configuration, logger: logger,
            onServerRunning: { announce.yield($0) }
        )
        let group = ServiceGroup(services: [app], logger: logger)
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw DiscfgError(.unavailable, "the test server did not start") }
        let store = try RemoteStore(url: URL(string: "http://127.0.0.1:\(port)")!, token: nil)
        return StoreFixture(store: store, clock: clock, cleanup: {
            Task {
                await group.triggerGracefulShutdown()
                _ = try? await running.value
                try? FileManager.default.removeItem(at: directory)
            }
        })
    }
}
