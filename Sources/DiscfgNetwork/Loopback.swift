import NIOCore

/// Whether an address is this machine only: the one rule behind the Host check, the
/// refusal to serve without authentication off loopback, and the loopback caller's
/// privileges, for the REST API and the etcd API alike.
public enum Loopback {
    /// Whether a bind address or host name is loopback: `localhost`, `::1` (bracketed
    /// or not) or 127.0.0.0/8.
    public static func contains(host: String) -> Bool {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104, or a Unix socket.
    public static func contains(_ address: SocketAddress) -> Bool {
        switch address {
        case .v4(let v4): return (UInt32(bigEndian: v4.address.sin_addr.s_addr) >> 24) == 127
        case .v6(let v6):
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
            return bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
        case .unixDomainSocket: return true
        }
    }
}
