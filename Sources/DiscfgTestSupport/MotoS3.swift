import AsyncHTTPClient
import DiscfgAWS
import Foundation
import NIOCore
import NIOHTTP1

/// S3 on the shared moto server (moto serves S3 and DynamoDB on one port): a client, and
/// the bucket set-up calls discfg itself never makes.
public enum MotoS3 {
    /// Test credentials; moto does not check them.
    public static let credentials = StaticCredentialProvider(AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "discfg-test"))

    /// A client of `moto`'s S3 with quick retries.
    public static func client(_ moto: MotoServer, maxObjectBytes: Int = 64 << 20, timeout: Duration = .seconds(10)) -> S3Client {
        S3Client(
            configuration: .init(
                region: "us-east-1", endpoint: moto.endpoint, timeout: timeout,
                retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(2), maxDelay: .milliseconds(20)),
                maxObjectBytes: maxObjectBytes
            ),
            credentialProvider: credentials
        )
    }

    /// A fresh bucket name (S3's rules: lowercase, digits, hyphens, 3 to 63 characters).
    public static func uniqueBucket(_ stem: String = "discfg") -> String {
        "\(stem)-\(UUID().uuidString.lowercased().prefix(13))"
    }

    /// Creates `bucket` on `moto` (unsigned: moto does not check).
    public static func createBucket(_ bucket: String, on moto: MotoServer) async throws {
        try await call(.PUT, "\(moto.endpoint.absoluteString)/\(bucket)", body: Data())
    }

    /// Sets `bucket`'s policy to deny `action` (`s3:PutObject`) to everyone on its objects.
    public static func deny(_ action: String, on bucket: String, moto: MotoServer) async throws {
        let policy = """
            {"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"\(action)","Resource":"arn:aws:s3:::\(bucket)/*"}]}
            """
        try await call(.PUT, "\(moto.endpoint.absoluteString)/\(bucket)?policy", body: Data(policy.utf8))
    }

    private static func call(_ method: HTTPMethod, _ url: String, body: Data) async throws {
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let text = String(buffer: try await response.body.collect(upTo: 1 << 20))
        guard (200..<300).contains(response.status.code) else {
            throw MotoServer.StartError(description: "moto refused \(method) \(url): \(response.status) \(text)")
        }
    }
}
