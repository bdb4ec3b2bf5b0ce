import DiscfgNetwork

extension EtcdServer {
    /// Why the etcd API does not start: it has no authentication yet, and would listen
    /// off loopback.
    public struct BindRefusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// The address it was to listen on.
        public let host: String

        public var description: String {
            "refusing to serve the etcd API on \(host): it has no authentication yet; use a loopback address, or let other machines in on purpose (openToRemotePeers)"
        }
    }

    /// Throws ``BindRefusal`` when `host` is not loopback, unless `openToRemotePeers`
    /// (`serve --insecure`). ``run()`` checks it before it listens.
    public static func checkBindSafety(host: String, openToRemotePeers: Bool) throws {
        guard Loopback.contains(host: host) || openToRemotePeers else { throw BindRefusal(host: host) }
    }
}
