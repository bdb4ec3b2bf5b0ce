import DiscfgNetwork

extension EtcdServer {
    /// Why the etcd API does not start: off loopback, it would carry calls in clear, or
    /// answer callers without credentials.
    public struct BindRefusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// What would be unsafe.
        public enum Reason: Sendable, Equatable {
            /// No TLS: calls and values would cross the network in clear.
            case plaintext
            /// Callers would get in unauthenticated: tokens are not required (so no call
            /// needs `Auth.Authenticate`), and no client certificates are.
            case unauthenticated
        }

        /// The address it was to listen on.
        public let host: String
        /// What would be unsafe there.
        public let reason: Reason

        public var description: String {
            switch reason {
            case .plaintext:
                "refusing to serve the etcd API on \(host) without TLS: calls and values would cross the network in clear; give it a certificate (tls), or allow plain HTTP/2 on purpose (allowsPlaintextOffLoopback)"
            case .unauthenticated:
                "refusing to serve the etcd API on \(host) without authentication: require tokens (access, and create one) or client certificates, use a loopback address, or let other machines in without credentials on purpose (openToRemotePeers)"
            }
        }
    }

    /// Throws ``BindRefusal`` when `host` is not loopback and the API would be unsafe
    /// there: without TLS unless `allowsPlaintext`, and, unless `openToRemotePeers` (both
    /// `serve --insecure`), answering calls without credentials: neither are tokens
    /// required now (`requiresTokens`: every call then needs an etcd token from
    /// `Auth.Authenticate`) nor client certificates. ``run()`` checks it before it listens.
    public static func checkBindSafety(host: String, tls: ServerTLS?, allowsPlaintext: Bool, openToRemotePeers: Bool, requiresTokens: Bool) throws {
        guard !Loopback.contains(host: host) else { return }
        if tls == nil, !allowsPlaintext { throw BindRefusal(host: host, reason: .plaintext) }
        if !requiresTokens, tls?.requiresClientCertificates != true, !openToRemotePeers { throw BindRefusal(host: host, reason: .unauthenticated) }
    }
}
