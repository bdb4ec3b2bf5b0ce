import DiscfgAWS
import DiscfgCore
@testable import DiscfgDynamoDB
import DiscfgTestSupport
import Foundation

/// A store on a fresh table (not yet created unless `create`); its own metrics recorder,
/// so round-trip counts belong to this test alone.
func makeStore(create: Bool = true, clock: ManualClock = ManualClock(), configure: (inout DynamoDBStore.Configuration) -> Void = { _ in }) async throws -> DynamoDBStore {
    let shared = try await MotoDynamoDB.shared.client()
    let client = AWSJSONClient(configuration: shared.configuration, credentialProvider: shared.credentialProvider)
    MotoClientsKeepAlive.keep(client)
    var configuration = DynamoDBStore.Configuration(table: "ddb-\(UUID().uuidString.prefix(12))", pollInterval: .milliseconds(100))
    configure(&configuration)
    let store = DynamoDBStore(client: client, configuration: configuration, clock: clock)
    if create { try await store.table.ensure() }
    return store
}

/// Clients live as long as the test process (their HTTP clients are never released unshut).
enum MotoClientsKeepAlive {
    nonisolated(unsafe) private static var clients: [AWSJSONClient] = []
    private static let lock = NSLock()

    static func keep(_ client: AWSJSONClient) {
        lock.lock()
        clients.append(client)
        lock.unlock()
    }
}
