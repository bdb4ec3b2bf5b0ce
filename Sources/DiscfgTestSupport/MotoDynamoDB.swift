import DiscfgAWS
import Foundation

/// One DynamoDB client on the shared moto server for the whole test process (its HTTP
/// client lives as long as the process, so it never needs shutting down).
public actor MotoDynamoDB {
    public static let shared = MotoDynamoDB()
    private var made: Task<AWSJSONClient, any Error>?

    /// The client; concurrent first callers share one instead of racing.
    public func client() async throws -> AWSJSONClient {
        if let made { return try await made.value }
        let task = Task { () async throws -> AWSJSONClient in
            let moto = try await SharedMotoServer.shared.server()
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
