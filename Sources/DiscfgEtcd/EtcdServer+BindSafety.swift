import DiscfgNetwork

extension EtcdServer {
    /// Why the etcd API does not start: off loopback, it would carry calls in clear, or
    /// answer callers it cannot authenticate.
    public struct BindRefusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// What would be unsafe.
        public enum Reason: Sendable, Equatable {
            /// No TLS: calls and values would cross the network in clear.
            case plaintext
            /// Callers would get in unauthenticated: the API has no authentication of its
            /// own yet, and no client certificates are required.
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
                "refusing to serve the etcd API on \(host): it has no authentication yet; use a loopback address, require client certificates, or let other machines in on purpose (openToRemotePeers)"
            }
        }
    }

    /// Throws ``BindRefusal`` when `host` is not loopback and the API would be unsafe
    /// there: without TLS unless `allowsPlaintext`, and without client certificates
    /// unless `openToRemotePeers` (both `serve --insecure`). ``run()`` checks it before
    /// it listens.
    public static func checkBindSafety(host: String, tls: ServerTLS?, allowsPlaintext: Bool, openToRemotePeers: Bool) throws {
        guard !Loopback.contains(host: host) else { return }
        if tls == nil, !allowsPlaintext { throw BindRefusal(host: host, reason: .plaintext) }
        if tls?.requiresClientCertificates != true, !openToRemotePeers { throw BindRefusal(host: host, reason: .unauthenticated) }
    }
}
