import DiscfgAPI
import DiscfgSignals
import ServiceLifecycle

/// `serve`'s deployment monitor: a pass over every config's running deployments each
/// interval (``DeploymentMonitor``), each transition it records, or fails to, logged.
struct DeploymentMonitorService: Service {
    let monitor: DeploymentMonitor
    let signals: SignalReader
    let interval: Duration
    let log: ServeLog

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await monitor.run(every: interval) { actions in
                for action in actions { log.write(action.revision == nil ? .warning : .notice, action.description) }
            }
        }
        await signals.shutdown()
    }
}

/// Passes the readers and health counted by a server or an agent to the store each
/// interval (``HealthCounter``), and once more at shutdown.
struct HealthFlushService: Service {
    let counter: HealthCounter
    let interval: Duration

    func run() async throws {
        await cancelWhenGracefulShutdown { await counter.run(every: interval) }
    }
}
