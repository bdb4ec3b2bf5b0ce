import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Credentials of the EC2 instance profile, read through IMDSv2.
///
/// IMDSv2 first asks for a session token with `PUT /latest/api/token`, then reads the role name
/// and its credentials with that token. Timeouts are short because on a laptop nothing listens
/// at the link-local address and discfg should not hang there.
public struct InstanceMetadataCredentialProvider: CredentialProvider {
    /// The environment with `AWS_EC2_METADATA_SERVICE_ENDPOINT` and `AWS_EC2_METADATA_DISABLED`.
    public let environment: [String: String]
    let http: MetadataHTTP

    /// The default IMDS address.
    public static let defaultEndpoint = "http://169.254.169.254"
    /// Lifetime requested for the IMDSv2 session token.
    static let tokenTTLSeconds = "21600"

    /// The name shown in error reports.
    public var name: String { "EC2 instance metadata (IMDSv2)" }

    /// Creates a provider.
    ///
    /// - Parameters:
    ///   - environment: Where the endpoint override and the disable switch are read.
    ///   - httpClient: The client to use; the process-wide shared one by default.
    ///   - timeout: Deadline for each of the three requests.
    public init(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        httpClient: HTTPClient = .shared,
        timeout: TimeAmount = .seconds(1)
    ) {
        self.environment = environment
        self.http = MetadataHTTP(client: httpClient, timeout: timeout)
    }

    /// The base URL without a trailing slash.
    var baseURL: String {
        var base = environment["AWS_EC2_METADATA_SERVICE_ENDPOINT"].flatMap(\.nonEmpty) ?? Self.defaultEndpoint
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }

    /// Runs the three IMDSv2 steps.
    public func credentials() async throws -> AWSCredentials {
        if environment["AWS_EC2_METADATA_DISABLED"]?.lowercased() == "true" {
            throw CredentialProviderError(.notConfigured, "disabled by AWS_EC2_METADATA_DISABLED=true")
        }
        let base = baseURL
        let token = try await step("session token", .PUT, base + "/latest/api/token",
                                   headers: [("X-aws-ec2-metadata-token-ttl-seconds", Self.tokenTTLSeconds)])
        let auth = [("X-aws-ec2-metadata-token", token)]
        let roles = try await step("role name", .GET, base + "/latest/meta-data/iam/security-credentials/", headers: auth)
        guard let role = roles.split(whereSeparator: \.isNewline).first.map(String.init)?.nonEmpty else {
            throw CredentialProviderError(.failed, "\(base) lists no IAM role for this instance")
        }
        let url = base + "/latest/meta-data/iam/security-credentials/" + role
        let document = try await step("credentials", .GET, url, headers: auth)
        return try TemporaryCredentialsDocument.decode(document, source: url).credentials(source: url)
    }

    private func step(_ what: String, _ method: HTTPMethod, _ url: String, headers: [(String, String)]) async throws -> String {
        let response: MetadataHTTP.Response
        do {
            response = try await http.send(method, url, headers: headers)
        } catch {
            throw CredentialProviderError(.failed, "\(what) request to \(url): \(describeTransportError(error))")
        }
        guard response.status == 200 else {
            let hint = response.status == 404 && what == "role name" ? " (no instance profile attached?)" : ""
            throw CredentialProviderError(.failed, "\(what) request to \(url) answered HTTP \(response.status)\(hint)")
        }
        return response.body
    }
}
