import Foundation

/// Credentials from `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`.
public struct EnvironmentCredentialProvider: CredentialProvider {
    /// The environment to read, injected so tests do not depend on the process environment.
    public let environment: [String: String]
    /// The name shown in error reports.
    public var name: String { "environment (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)" }

    /// Reads from `environment`.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    /// Returns the credentials in the environment, or explains which variable is missing.
    public func credentials() async throws -> AWSCredentials {
        let key = environment["AWS_ACCESS_KEY_ID"].flatMap(\.nonEmpty)
        let secret = environment["AWS_SECRET_ACCESS_KEY"].flatMap(\.nonEmpty)
        switch (key, secret) {
        case let (key?, secret?):
            return AWSCredentials(
                accessKeyID: key,
                secretAccessKey: secret,
                sessionToken: environment["AWS_SESSION_TOKEN"].flatMap(\.nonEmpty)
            )
        case (nil, nil):
            throw CredentialProviderError(.notConfigured, "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set")
        case (nil, _):
            throw CredentialProviderError(.failed, "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not")
        case (_, nil):
            throw CredentialProviderError(.failed, "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not")
        }
    }
}
