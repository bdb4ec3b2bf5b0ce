import DiscfgCore
import Foundation
import NIOCore

/// Why `discfg agent` or its Lambda extension could not start serving, as one message
/// naming the address and the setting that chose the port (`--port`,
/// `DISCFG_AGENT_PORT`), in place of the socket call's own words.
enum AgentListenFailure {
    /// Whether `error` is a failure to listen: only binding fails with these.
    static func covers(_ error: IOError) -> Bool {
        [EADDRINUSE, EACCES, EADDRNOTAVAIL].contains(error.errnoCode)
    }

    /// `unavailable` (exit 1, as any start failure), naming the port and `field`.
    static func error(_ error: IOError, port: Int, field: String) -> DiscfgError {
        let reason = switch error.errnoCode {
        case EADDRINUSE: "the port is in use by another process; choose another with \(field)"
        case EACCES: "not permitted to listen on that port; choose one above 1023 with \(field)"
        default: String(cString: strerror(error.errnoCode))
        }
        return DiscfgError(.unavailable, "cannot serve on 127.0.0.1:\(port): \(reason)", field: field)
    }
}
