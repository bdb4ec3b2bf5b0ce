import DiscfgAWS
import DiscfgClient
import DiscfgConformance
import DiscfgCore
import DiscfgDynamoDB
import DiscfgSQLite
import DiscfgTestSupport
import Foundation

/// The stores discfg runs the conformance suite (`DiscfgConformance`) against. A new store
/// joins by adding a case here; every check then runs against it too.
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

    /// What this kind of store does beyond `ConfigStore`.
    var capabilities: StoreConformance.Capabilities {
        switch self {
        // The REST API takes a change of any size the store behind it holds.
        case .remote: [.largeChanges]
        default: .all
        }
    }

    /// The kinds of store that have `capability`.
    static func with(_ capability: StoreConformance.Capabilities) -> [StoreKind] {
        allCases.filter { $0.capabilities.contains(capability) }
    }

    /// The conformance suite over fresh stores of this kind.
    var conformance: StoreConformance { conformance(moto: .conformance, gate: MotoClient.gate) }

    /// The conformance suite for the watch checks: on DynamoDB, a moto server of their
    /// own, so no watch read queues behind the other checks' requests.
    var watchConformance: StoreConformance { conformance(moto: .watches, gate: MotoClient.watchGate) }

    private func conformance(moto: MotoDynamoDB, gate: TestGate) -> StoreConformance {
        StoreConformance(name: rawValue, capabilities: capabilities) { clock in
            // moto is one Python process: run only a few DynamoDB checks at once, so each
            // check's requests stay fast enough for the suite's watch deadlines.
            guard self == .dynamodb else { return try await make(clock: clock) }
            await gate.enter()
            do {
                var fixture = try await make(clock: clock, moto: moto)
                let cleanup = fixture.cleanup
                fixture.cleanup = {
                    await cleanup()
                    await gate.leave()
                }
                return fixture
            } catch {
                await gate.leave()
                throw error
            }
        }
    }

    /// A fresh, empty store that reads its time from `clock` (on DynamoDB, a table on `moto`).
    func make(clock: ManualClock, moto: MotoDynamoDB = .conformance) async throws -> StoreConformance.Fixture {
        switch self {
        case .memory:
            return StoreConformance.Fixture(store: MemoryStore(clock: clock))
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("discfg-conformance-\(UUID().uuidString)", isDirectory: true)
            let path = directory.appendingPathComponent("store.db").path
            let store = try SQLiteStore(path: path, clock: clock)
            return StoreConformance.Fixture(store: store, reopen: { try SQLiteStore(path: path, clock: clock) }) {
                try? FileManager.default.removeItem(at: directory)
            }
        case .dynamodb:
            let client = try await moto.client()
            let table = "conformance-\(UUID().uuidString.prefix(13))"
            // moto is one Python process serving the whole suite one request at a time, so
            // while tests run in parallel a change can lose the race on the meta item to a
            // test's own busy writer many times in a row (twelve, the default, has run out).
            let configuration = DynamoDBStore.Configuration(table: table, pollInterval: .milliseconds(200), maxChangeAttempts: 50)
            let store = DynamoDBStore(client: client, configuration: configuration, clock: clock)
            try await store.table.ensure()
            // A second store on the same table, as a second server is.
            return StoreConformance.Fixture(store: store, reopen: { DynamoDBStore(client: client, configuration: configuration, clock: clock) })
        case .remote:
            return try await RemoteFixture.start(clock: clock)
        }
    }
}

/// Bounds how many DynamoDB tests talk to moto at once.
enum MotoClient {
    static let gate = TestGate(limit: 4)
    /// The same for the watch checks' own server.
    static let watchGate = TestGate(limit: 4)
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
    static func start(clock: ManualClock) async throws -> StoreConformance.Fixture {
        let server = try await LiveServer.start(clock: clock) { configuration in
            // Sweeps happen when the suite asks (and while watching), not on the server's timer.
            configuration.sweepInterval = .seconds(3600)
            // The suite tests what stores keep; where webhooks may point is the API's policy.
            configuration.api.webhookPolicy = WebhookPolicy(allowHTTP: true, allowPrivate: true)
        }
        do {
            let store = try RemoteStore(url: URL(string: server.baseURL)!, token: nil)
            // The server records the caller it admitted, an open server's anonymous one.
            let url = URL(string: server.baseURL)!
            return StoreConformance.Fixture(
                store: store, recordedPrincipal: Principal(kind: .anonymous, id: "anonymous"), reopen: { try RemoteStore(url: url, token: nil) }
            ) { await server.stop() }
        } catch {
            await server.stop()
            throw error
        }
    }
}
