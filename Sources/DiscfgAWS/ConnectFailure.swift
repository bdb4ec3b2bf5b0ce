import Foundation
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An endpoint no connection could be made to, where that is certain: its host refused
/// the connection (nothing listens on the port) or its name does not resolve. Nothing of
/// the request was sent.
///
/// Such an endpoint rarely comes back within one request's deadline, so the AWS clients
/// try it only ``RetryPolicy/connectAttempts`` times, a fraction of a second in all, as
/// the AWS SDKs retry connection errors a few times; a throttled call, a 5xx, a reset
/// connection or one that timed out is still retried within the whole ``RetryPolicy``.
///
/// ```swift
/// if let failure = ConnectFailure(error, endpoint: url) { print(failure.sentence(service: "DynamoDB")) }
/// // the DynamoDB endpoint http://127.0.0.1:8000 refused the connection
/// ```
public struct ConnectFailure: Error, Sendable, Hashable {
    /// What kept the connection from being made.
    public enum Kind: Sendable, Hashable {
        /// The host answered that nothing listens on the port.
        case refused
        /// The host name has no address.
        case unresolved
    }

    /// What kept the connection from being made.
    public let kind: Kind
    /// The endpoint that could not be reached.
    public let endpoint: URL

    /// Creates a failure.
    public init(_ kind: Kind, endpoint: URL) {
        self.kind = kind
        self.endpoint = endpoint
    }

    /// The failure `error` is, when it is one; nil for any other transport error (a
    /// connection reset or closed mid-request, a timeout, a TLS failure), which may pass
    /// on another try.
    ///
    /// The HTTP client reports a refused connection to an IP address as the socket's
    /// `ECONNREFUSED`, and one to a host name as a `NIOConnectionError` listing each
    /// address tried, or the name's failed look-ups when it has no address.
    public init?(_ error: any Error, endpoint: URL) {
        switch error {
        case let error as IOError where error.errnoCode == ECONNREFUSED:
            self.init(.refused, endpoint: endpoint)
        case let error as NIOConnectionError where error.connectionErrors.isEmpty:
            guard error.dnsAError != nil || error.dnsAAAAError != nil else { return nil }
            self.init(.unresolved, endpoint: endpoint)
        case let error as NIOConnectionError:
            let refused = error.connectionErrors.allSatisfy { ($0.error as? IOError)?.errnoCode == ECONNREFUSED }
            guard refused else { return nil }
            self.init(.refused, endpoint: endpoint)
        default:
            return nil
        }
    }

    /// One sentence for a person, naming `service` and the endpoint, with none of the
    /// socket's or the libraries' words: "the DynamoDB endpoint http://127.0.0.1:8000
    /// refused the connection".
    public func sentence(service: String) -> String {
        switch kind {
        case .refused: "the \(service) endpoint \(endpoint.absoluteString) refused the connection"
        case .unresolved: "the \(service) endpoint \(endpoint.absoluteString) was not found: its host name does not resolve"
        }
    }

    /// A few words for a message that names the endpoint already: "connection refused".
    public var words: String {
        switch kind {
        case .refused: "connection refused"
        case .unresolved: "host name does not resolve"
        }
    }
}
