import DiscfgCore
import DiscfgService
import Hummingbird
import DiscfgNetwork
import NIOCore

/// A request context the API's routes run in.
///
/// The server uses ``APIRequestContext``; other faces (Lambda) bring their own, and may
/// report a caller their transport already authenticated, such as an IAM principal
/// behind API Gateway.
public protocol DiscfgRequestContext: RequestContext {
    /// A caller authenticated by the transport; nil to check the bearer token.
    var authenticatedCaller: Caller? { get }
    /// Whether a response may stream (Server-Sent Events); false behind API Gateway,
    /// which buffers whole responses.
    var supportsStreaming: Bool { get }
    /// When the transport gives up on the request (a Lambda invocation's deadline);
    /// long polls end before it.
    var deadline: ContinuousClock.Instant? { get }
    /// Whether the caller connected from this machine; nil when the transport cannot
    /// say (behind API Gateway, which authenticates callers itself).
    var peerIsLoopback: Bool? { get }
    /// The subject of the client certificate the caller's connection presented and the
    /// server's client CA verified (mutual TLS); nil without one.
    var peerCertificate: CertificateSubject? { get }
}

extension DiscfgRequestContext {
    public var authenticatedCaller: Caller? { nil }
    public var supportsStreaming: Bool { true }
    public var deadline: ContinuousClock.Instant? { nil }
    public var peerIsLoopback: Bool? { nil }
    public var peerCertificate: CertificateSubject? { nil }
}

/// The request context of `discfg serve`.
public struct APIRequestContext: DiscfgRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let peerIsLoopback: Bool?
    public let peerCertificate: CertificateSubject?

    public init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        peerIsLoopback = source.channel.remoteAddress.map(Loopback.contains)
        // Set only on servers that require client certificates.
        peerCertificate = ConnectionCertificate.peer?.current
    }
}
