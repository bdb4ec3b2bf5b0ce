import DiscfgCore
import Foundation
import NIOCore
import ServiceLifecycle

/// Why `discfg serve`, `discfg agent` or the agent's Lambda extension could not start
/// listening, as one sentence naming the address and the setting that chose it (`--port`,
/// `--etcd`, `DISCFG_AGENT_PORT`), in place of the socket call's own words
/// (`bind(descriptor:ptr:bytes:): Address already in use) (errno: 98)`).
enum ListenFailure {
    /// Whether `error` is a failure to listen: only binding fails with these.
    static func covers(_ error: IOError) -> Bool {
        [EADDRINUSE, EACCES, EADDRNOTAVAIL].contains(error.errnoCode)
    }

    /// `unavailable` (exit 1, as any start failure), naming `host`, the port and `field`.
    static func error(_ error: IOError, host: String = "127.0.0.1", port: Int, field: String) -> DiscfgError {
        let reason = switch error.errnoCode {
        case EADDRINUSE: "the port is in use by another process; stop it, or choose another port with \(field)"
        case EACCES: "not permitted to listen on that port; choose one above 1023 with \(field)"
        case EADDRNOTAVAIL: "this machine has no interface with that address"
        default: String(cString: strerror(error.errnoCode))
        }
        let address = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        return DiscfgError(.unavailable, "cannot serve on \(address): \(reason)", field: field)
    }

    /// Binds `host:port` (as the servers do, with SO_REUSEADDR) and lets it go at once, so
    /// that a taken second port (`--etcd`) is told before the first starts serving; the
    /// server's own bind, through ``ListeningService``, still tells one taken meanwhile.
    /// Port 0 and a host that does not resolve are left to the server.
    static func check(host: String, port: Int, field: String) throws {
        guard port != 0 else { return }
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let address = found else { return }
        defer { freeaddrinfo(found) }
        let socket = Glibc.socket(address.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { return }
        defer { close(socket) }
        var one: Int32 = 1
        _ = setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if bind(socket, address.pointee.ai_addr, address.pointee.ai_addrlen) != 0 {
            let error = IOError(errnoCode: errno, reason: "bind")
            if covers(error) { throw Self.error(error, host: host, port: port, field: field) }
        }
    }
}

/// A service that listens, whose failure to bind is told as ``ListenFailure`` names it:
/// the etcd API beside the REST API, so the message says which address is taken.
struct ListeningService: Service {
    let base: any Service
    let host: String
    let port: Int
    let field: String

    init(_ base: any Service, host: String, port: Int, field: String) {
        self.base = base
        self.host = host
        self.port = port
        self.field = field
    }

    func run() async throws {
        do { try await base.run() } catch let error as IOError where ListenFailure.covers(error) {
            throw ListenFailure.error(error, host: host, port: port, field: field)
        }
    }
}
