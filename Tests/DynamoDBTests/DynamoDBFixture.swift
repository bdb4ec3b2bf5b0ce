import DiscfgAWS
import DiscfgCore
@testable import DiscfgDynamoDB
import DiscfgTestSupport
import Foundation

/// One AWS client on the shared moto server for this test process.
actor MotoClients {
    static let shared = MotoClients()
    private var made: Task<AWSJSONClient, any Error>?

    func client() async throws -> AWSJSONClient {
        if let made { return try await made.value }
        let task = Task { () async throws -> AWSJSONClient in
            let moto = try await SharedMotoServer.shared.server()
            return AWSJSONClient(
                configuration: .dynamoDB(region: "us-east-1", endpoint: moto.endpoint, retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1), maxDelay: .milliseconds(5))),
                credentialProvider: StaticCredentialProvider(AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "discfg-test"))
            )
        }
        made = task
        return try await task.value
    }
}

/// A store on a fresh table (not yet created unless `create`); its own metrics recorder,
/// so round-trip counts belong to this test alone.
func makeStore(create: Bool = true, clock: ManualClock = ManualClock(), configure: (inout DynamoDBStore.Configuration) -> Void = { _ in }) async throws -> DynamoDBStore {
    let shared = try await MotoClients.shared.client()
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
