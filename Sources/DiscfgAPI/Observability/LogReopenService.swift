import DiscfgNetwork
import Logging
import ServiceLifecycle

/// Opens a log file again on every SIGHUP while the server runs (``LogSink/reopen()``),
/// so `logrotate` and its kin can move the file away and have the next lines start a new
/// one. A file that cannot be opened keeps the lines going to the old one, and the log
/// says why in one line.
///
/// ```swift
/// let audit = try LogSink(appendingTo: "/var/log/discfg/audit.log")
/// ServiceGroup(services: [server, LogReopenService(sink: audit, logger: logger)], ...)
/// ```
public struct LogReopenService: Service {
    /// The file's sink.
    public let sink: LogSink
    /// Where a failure to reopen is told.
    public let logger: Logger

    /// A service that reopens `sink`'s file on SIGHUP.
    public init(sink: LogSink, logger: Logger) {
        self.sink = sink
        self.logger = logger
    }

    public func run() async throws {
        await onEachHangup {
            do {
                try sink.reopen()
            } catch {
                logger.error("kept appending to the old audit log file on SIGHUP: \(error)")
            }
        }
    }
}
