import AsyncHTTPClient
import Foundation
import NIOCore

/// Credentials from the ECS/EKS container credentials endpoint.
///
/// When discfg runs in a container with a task role, the agent publishes an endpoint through
/// `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` (on `169.254.170.2`) or
/// `AWS_CONTAINER_CREDENTIALS_FULL_URI`, optionally guarded by `AWS_CONTAINER_AUTHORIZATION_TOKEN`
/// (or a token file in `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE`).
public struct ContainerCredentialProvider: CredentialProvider {
    /// The environment naming the endpoint.
    public let environment: [String: String]
    let http: MetadataHTTP

    /// The name shown in error reports.
    public var name: String { "container credentials endpoint (ECS)" }

    /// Creates a provider.
    ///
    /// - Parameters:
    ///   - environment: Where the endpoint variables are read.
    ///   - httpClient: The client to use; the process-wide shared one by default.
    ///   - timeout: Deadline for the whole request.
    public init(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        httpClient: HTTPClient = .shared,
        timeout: TimeAmount = .seconds(2)
    ) {
        self.environment = environment
        self.http = MetadataHTTP(client: httpClient, timeout: timeout)
    }

    /// The endpoint URL the environment selects, or an error explaining why there is none.
    public static func endpoint(environment: [String: String]) throws -> URL {
        if let relative = environment["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"].flatMap(\.nonEmpty) {
            let path = relative.hasPrefix("/") ? relative : "/" + relative
            guard let url = URL(string: "http://169.254.170.2" + path) else {
                throw CredentialProviderError(.failed, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI '\(relative)' is not a valid path")
            }
            return url
        }
        guard let full = environment["AWS_CONTAINER_CREDENTIALS_FULL_URI"].flatMap(\.nonEmpty) else {
            throw CredentialProviderError(
                .notConfigured,
                "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and AWS_CONTAINER_CREDENTIALS_FULL_URI are not set"
            )
        }
        guard let url = URL(string: full), let scheme = url.scheme?.lowercased(), let host = url.host else {
            throw CredentialProviderError(.failed, "AWS_CONTAINER_CREDENTIALS_FULL_URI '\(full)' is not a valid URL")
        }
        // Plain HTTP is accepted only to hosts that cannot be on another machine, so the token
        // and the credentials never cross a network in clear text.
        guard scheme == "https" || (scheme == "http" && isAllowedPlainHTTPHost(host)) else {
            throw CredentialProviderError(
                .failed,
                "AWS_CONTAINER_CREDENTIALS_FULL_URI must use https or a loopback/ECS/EKS host, got '\(full)'"
            )
        }
        return url
    }

    static func isAllowedPlainHTTPHost(_ rawHost: String) -> Bool {
        let host = rawHost.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        if host == "localhost" || host == "::1" || host == "169.254.170.2" || host == "169.254.170.23"
            || host == "fd00:ec2::23" {
            return true
        }
        let octets = host.split(separator: ".")
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    /// The authorization header value, from the token variable or the token file.
    func authorizationToken() throws -> String? {
        if let file = environment["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"].flatMap(\.nonEmpty) {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw CredentialProviderError(.failed, "cannot read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE '\(file)'")
            }
            return String(decoding: data, as: UTF8.self).nonEmpty
        }
        return environment["AWS_CONTAINER_AUTHORIZATION_TOKEN"].flatMap(\.nonEmpty)
    }

    /// Fetches the role credentials from the endpoint.
    public func credentials() async throws -> AWSCredentials {
        let url = try Self.endpoint(environment: environment)
        var headers: [(String, String)] = []
        if let token = try authorizationToken() { headers.append(("Authorization", token)) }
        let response: MetadataHTTP.Response
        do {
            response = try await http.send(.GET, url.absoluteString, headers: headers)
        } catch {
            throw CredentialProviderError(.failed, "\(url.absoluteString): \(describeTransportError(error))")
        }
        guard response.status == 200 else {
            throw CredentialProviderError(.failed, "\(url.absoluteString) answered HTTP \(response.status)")
        }
        return try TemporaryCredentialsDocument.decode(response.body, source: url.absoluteString)
            .credentials(source: url.absoluteString)
    }
}
