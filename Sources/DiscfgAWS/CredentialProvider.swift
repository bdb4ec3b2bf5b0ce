import Foundation

/// Something that can produce AWS credentials: a static pair, the environment, files, or an endpoint.
///
/// Providers report "not configured here" and real failures alike by throwing; the chain records the
/// reason of each and moves on, so the final error can explain every source that was tried.
public protocol CredentialProvider: Sendable {
    /// A short human name of the source, e.g. `environment` or `EC2 instance metadata (IMDSv2)`.
    var name: String { get }
    /// Fetches credentials, throwing ``CredentialProviderError`` with a reason when this source has none.
    func credentials() async throws -> AWSCredentials
    /// Forgets cached credentials, e.g. after AWS said they expired, so the next call fetches
    /// fresh ones; returns false when the provider keeps nothing to forget.
    func invalidate() async -> Bool
}

extension CredentialProvider {
    /// Providers that fetch on every call have nothing to forget.
    public func invalidate() async -> Bool { false }
}

/// Why one credential source produced nothing.
public struct CredentialProviderError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Whether the source was simply not set up (expected) or was set up but failed (worth attention).
    public enum Kind: Sendable, Hashable {
        /// Nothing configured this source, e.g. a variable is unset.
        case notConfigured
        /// The source was configured but fetching or parsing failed.
        case failed
    }

    /// Whether this source was absent or broken.
    public var kind: Kind
    /// A one-line explanation naming the setting or endpoint involved.
    public var reason: String

    /// Creates an error.
    public init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    /// The reason text.
    public var description: String { reason }
}

/// Credentials given explicitly, e.g. by command-line flags; they win over every other source.
public struct StaticCredentialProvider: CredentialProvider {
    /// The fixed credentials.
    public let fixed: AWSCredentials
    /// The name shown in error reports.
    public let name: String

    /// Wraps fixed credentials.
    public init(_ credentials: AWSCredentials, name: String = "explicit credentials") {
        self.fixed = credentials
        self.name = name
    }

    /// Returns the fixed credentials.
    public func credentials() async throws -> AWSCredentials { fixed }
}
