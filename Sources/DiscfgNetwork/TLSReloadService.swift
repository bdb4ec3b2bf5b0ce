import Logging
import ServiceLifecycle

/// Reads a server's certificate files again on every SIGHUP while the server runs
/// (``ServerTLS/reload(now:)``): new connections get the new certificate, open ones
/// keep theirs. Files that do not make a valid pair leave the previous certificate in
/// use, and the log says why in one line.
///
/// ```swift
/// ServiceGroup(services: [server, TLSReloadService(tls: tls, logger: logger)], ...)
/// ```
public struct TLSReloadService: Service {
    /// The TLS whose files are read again.
    public let tls: ServerTLS
    /// Where each reload is told.
    public let logger: Logger

    /// A service that reloads `tls` on SIGHUP.
    public init(tls: ServerTLS, logger: Logger) {
        self.tls = tls
        self.logger = logger
    }

    public func run() async throws {
        await onEachHangup {
            do {
                let loaded = try tls.reload()
                logger.notice("TLS: read \(tls.files.certificate) again on SIGHUP; new connections get \(ServerTLS.describe(loaded))")
            } catch {
                logger.error("TLS: kept the previous certificate on SIGHUP: \(String(describing: error))")
            }
        }
    }
}
