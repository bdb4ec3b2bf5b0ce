import DiscfgCore
import DiscfgNetwork

extension DiscfgServer {
    /// Why a server does not start: off loopback, it would carry bearer tokens in clear,
    /// or answer callers without a token.
    public struct BindRefusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// What would be unsafe.
        public enum Reason: Sendable, Equatable {
            /// No TLS: tokens and values would cross the network in clear.
            case plaintext
            /// Callers would get in without a token or a client certificate.
            case unauthenticated
        }

        /// The address it was to listen on.
        public let host: String
        /// What would be unsafe there.
        public let reason: Reason

        public var description: String {
            switch reason {
            case .plaintext:
                "refusing to serve on \(host) without TLS: bearer tokens and values would cross the network in clear; give the server a certificate (Configuration.tls), or allow plain HTTP on purpose (allowsPlaintextOffLoopback)"
            case .unauthenticated:
                "refusing to serve on \(host) without authentication: require bearer tokens (and create one) or client certificates, or let other machines in without one on purpose (the authenticator's openToRemotePeers)"
            }
        }
    }

    /// Throws ``BindRefusal`` when `configuration.host` is not loopback and the server
    /// would be unsafe there:
    /// - without TLS (``Configuration/tls``), unless told to serve plain HTTP off
    ///   loopback (``Configuration/allowsPlaintextOffLoopback``, `serve --insecure`);
    /// - answering without credentials (its authenticator is open, or open until a first
    ///   token is created and none has been), unless every connection must present a
    ///   client certificate, or the authenticator lets other machines in so on purpose
    ///   (``Authenticator/openToRemotePeers``, `serve --insecure`).
    ///
    /// Every application ``makeApplication(store:authenticator:configuration:logger:onServerRunning:services:)``
    /// makes checks it before it listens; a caller may check sooner.
    public static func checkBindSafety(_ configuration: Configuration, authenticator: Authenticator) async throws {
        let host = configuration.host
        guard !Loopback.contains(host: host) else { return }
        if configuration.tls == nil, !configuration.allowsPlaintextOffLoopback { throw BindRefusal(host: host, reason: .plaintext) }
        guard !authenticator.openToRemotePeers, configuration.tls?.requiresClientCertificates != true else { return }
        if try await authenticator.answersWithoutToken() { throw BindRefusal(host: host, reason: .unauthenticated) }
    }
}

extension Authenticator {
    /// Whether a caller on this machine gets in without a token now: the server is
    /// open, or open until a first token is created and none has been.
    public func answersWithoutToken() async throws -> Bool {
        do {
            _ = try await identify(authorization: nil, peerIsLoopback: true)
            return true
        } catch let error as DiscfgError where error.code == .unauthenticated {
            return false
        }
    }
}
