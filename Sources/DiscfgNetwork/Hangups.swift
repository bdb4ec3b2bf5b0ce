import ServiceLifecycle
import UnixSignals

/// What a server does on SIGHUP, the signal operators send to have files read again: runs
/// `action` on each one until graceful shutdown. Each caller traps the signal with a
/// sequence of its own, and every sequence gets every signal, so the TLS reload and the
/// audit log's reopening both see one `kill -HUP`.
///
/// ```swift
/// await onEachHangup { try? sink.reopen() }
/// ```
public func onEachHangup(_ action: @escaping @Sendable () -> Void) async {
    let hangups = await UnixSignalsSequence(trapping: .sighup)
    await cancelWhenGracefulShutdown {
        for await _ in hangups { action() }
    }
}
