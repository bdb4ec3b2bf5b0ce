import Synchronization

/// Runs a store's expiry sweep now and then while anyone watches it, so a watcher sees
/// a key's `expire` event soon after its TTL runs out even when nothing else is written.
///
/// (Reads never need it: they hide expired items themselves.)
public final class ExpirySweeper: Sendable {
    private let running = Mutex(false)
    private let interval: Duration

    /// Creates a sweeper that sweeps every `interval` while there are watchers.
    public init(interval: Duration = .milliseconds(250)) {
        self.interval = interval
    }

    /// Starts sweeping unless it already runs; it stops by itself when `notifier` has no
    /// more subscribers. Call after subscribing a watcher.
    public func ensureRunning(while notifier: ChangeNotifier, sweep: @escaping @Sendable () async -> Void) {
        let start = running.withLock { running in
            defer { running = true }
            return !running
        }
        guard start else { return }
        let interval = interval
        Task { [weak self] in
            while true {
                await sweep()
                try? await Task.sleep(for: interval)
                guard let self else { return }
                // Decided under `running`, so a watcher that arrives now either sees the
                // sweeper still running or finds it stopped and starts a new one.
                let stop = self.running.withLock { running in
                    if notifier.subscriberCount == 0 { running = false }
                    return !running
                }
                if stop { return }
            }
        }
    }
}
