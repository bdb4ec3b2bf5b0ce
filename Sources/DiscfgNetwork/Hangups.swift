import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals

/// SIGHUP, the signal operators send to have files read again, trapped from the moment
/// this is made: make it before the server announces its port, so a `kill -HUP` sent as
/// soon as the port is known is handled instead of ending the process. Run it as a
/// service; until graceful shutdown, each signal runs every action given to ``onEach(_:)``,
/// in the order given (a signal that came before ``run()`` is kept and runs them then).
///
/// ```swift
/// let hangups = await Hangups()
/// hangups.onEach(tls.reloadOnHangup(logger: logger))
/// ServiceGroup(services: [server, hangups], ...)
/// ```
public final class Hangups: Service, Sendable {
    private let signals: UnixSignalsSequence
    private let actions = Mutex<[@Sendable () -> Void]>([])

    /// Traps SIGHUP now.
    public init() async {
        signals = await UnixSignalsSequence(trapping: .sighup)
    }

    /// Runs `action` on each SIGHUP, after the actions given before it.
    public func onEach(_ action: @escaping @Sendable () -> Void) {
        actions.withLock { $0.append(action) }
    }

    public func run() async {
        await cancelWhenGracefulShutdown {
            for await _ in self.signals {
                for action in self.actions.withLock({ $0 }) { action() }
            }
        }
    }
}

extension ServerTLS {
    /// What SIGHUP does to a server's certificate (``reload(now:)``): new connections get
    /// the new one, open ones keep theirs. Files that do not make a valid pair leave the
    /// previous certificate in use, and the log says why in one line.
    public func reloadOnHangup(logger: Logger) -> @Sendable () -> Void {
        { [self] in
            do {
                let loaded = try reload()
                logger.notice("TLS: read \(files.certificate) again on SIGHUP; new connections get \(ServerTLS.describe(loaded))")
            } catch {
                logger.error("TLS: kept the previous certificate on SIGHUP: \(String(describing: error))")
            }
        }
    }
}
