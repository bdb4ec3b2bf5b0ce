import DiscfgCore
import Hummingbird
import DiscfgNetwork
import NIOCore

/// Who is making a request and what they may do.
public struct Caller: Sendable, Hashable {
    /// How the caller is named in logs: `token:ab12…`, `iam:arn:…`, `anonymous`.
    public var name: String
    /// What the caller may do.
    public var role: Role
    /// Where the caller reaches (``AccessScope``); nil for every key of every config.
    public var scopes: [AccessScope]?
    /// Who the caller is, as every change it makes records it: resolved here, where the
    /// request was authenticated, never from what the request says.
    public var principal: Principal

    /// Creates a caller.
    /// - Parameter principal: who the caller is (a token, an IAM ARN, a certificate's
    ///   subject); by default an anonymous principal named `name`.
    public init(name: String, role: Role, scopes: [AccessScope]?, principal: Principal? = nil) {
        self.name = name
        self.role = role
        self.scopes = scopes
        self.principal = principal ?? Principal(kind: .anonymous, id: name)
    }

    /// Creates a caller over whole configs (nil for all).
    public init(name: String, role: Role, configs: [ConfigName]? = nil, principal: Principal? = nil) {
        self.init(name: name, role: role, scopes: configs?.map { AccessScope(config: $0) }, principal: principal)
    }

    /// The configs the caller reaches at all; nil for all.
    public var configs: [ConfigName]? { grant.configs }

    /// What the caller may do.
    public var grant: AccessGrant { AccessGrant(role: role, scopes: scopes) }

    /// A caller on a server without authentication: may do anything.
    public static let anonymous = Caller(name: "anonymous", role: .admin)

    /// Whoever calls a route open to everyone: not identified, so may read nothing.
    public static let unidentified = Caller(name: "unidentified", role: .read, configs: [])

    /// Whether the caller may act with `needed` on the whole of `config` (nil: the list
    /// of configs).
    public func allows(_ needed: Role, on config: ConfigName?) -> Bool {
        grant.allows(needed, on: config)
    }
}

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
