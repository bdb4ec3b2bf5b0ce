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
