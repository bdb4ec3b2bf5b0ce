import DiscfgAWS
import Foundation

/// One DynamoDB client on a shared moto server for the whole test process (its HTTP
/// client lives as long as the process, so it never needs shutting down).
public actor MotoDynamoDB {
    /// On the server most tests share.
    public static let shared = MotoDynamoDB(server: .shared)
    /// On a server of its own, for the store conformance suite: its watch checks bound
    /// each read at 5 s, which a server queueing every other test's S3 and DynamoDB calls
    /// (moto answers one at a time) can exceed under load.
    public static let conformance = MotoDynamoDB(server: SharedMotoServer())
    /// On another server of its own, for the conformance suite's watch checks: a watch
    /// fails on a read that outlasts its bound, and behind the other checks' requests
    /// one did under CI's load.
    public static let watches = MotoDynamoDB(server: SharedMotoServer())

    private let server: SharedMotoServer
    private var made: Task<AWSJSONClient, any Error>?

    init(server: SharedMotoServer) { self.server = server }

    /// The client; concurrent first callers share one instead of racing.
    public func client() async throws -> AWSJSONClient {
        if let made { return try await made.value }
        let task = Task { () async throws -> AWSJSONClient in
            let moto = try await self.server.server()
            return AWSJSONClient(
                configuration: .dynamoDB(
                    region: "us-east-1", endpoint: moto.endpoint,
                    retryPolicy: RetryPolicy(maxAttempts: 4, baseDelay: .milliseconds(2), maxDelay: .milliseconds(50))
                ),
                credentialProvider: StaticCredentialProvider(AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "discfg-test"))
            )
        }
        made = task
        return try await task.value
    }
}
