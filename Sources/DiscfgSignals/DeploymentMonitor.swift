import DiscfgCore
import Foundation

/// Moves running deployments along where a clock cannot: it records COMPLETE and
/// ROLLED_BACK when their time comes (the first makes the candidate live, the second drops
/// it), and rolls a deployment back when one of its signals reads unhealthy.
///
/// `serve` runs one in process (``run(every:report:)``); on AWS a scheduled rule invokes the
/// Lambda function, which makes one ``pass()``. Exposure never waits on a monitor: every
/// reader computes it from the record and its clock. Two monitors on one store never both
/// apply a transition: each writes with compare-and-swap on the record's transitions, and
/// the one that loses the race reads the record as it now is on its next pass.
///
/// ```swift
/// let monitor = DeploymentMonitor(store: store, signals: SignalReader.standard())
/// for action in await monitor.pass() { print(action) }
/// ```
public final class DeploymentMonitor: Sendable {
    /// What one pass did on one deployment.
    public struct Action: Sendable, Hashable, CustomStringConvertible {
        /// The config.
        public var config: ConfigName
        /// The deployment.
        public var id: String
        /// What was recorded, and why.
        public var due: Deployment.Due
        /// The revision of the change that recorded it, or nil when it was not recorded
        /// (`failure` says why: another monitor was first, the store refused).
        public var revision: Revision?
        /// Why it was not recorded.
        public var failure: String?

        public var description: String {
            let outcome = revision.map { "recorded at revision \($0)" } ?? "not recorded: \(failure ?? "")"
            return "deployment \(id) of config \"\(config)\": \(due.kind.rawValue) (\(due.reason)), \(outcome)"
        }
    }

    /// Who a monitor's transitions are attributed to in `discfg log`.
    public static let principal = Principal(kind: .system, id: "monitor", description: "deployment monitor")

    private let store: any ConfigStore
    private let signals: SignalReader?
    private let clock: any WallClock

    /// A monitor of every config of `store`, reading signals with `signals` (nil: signals
    /// are not read, and only the clock's transitions are recorded).
    public init(store: any ConfigStore, signals: SignalReader?, clock: any WallClock = SystemClock()) {
        self.store = store
        self.signals = signals
        self.clock = clock
    }

    /// One pass over every config's running deployments: what it recorded, or tried to.
    /// A config that cannot be read is skipped until the next pass.
    public func pass() async -> [Action] {
        guard let configs = try? await store.listConfigs() else { return [] }
        return await pass(over: configs.map(\.name))
    }

    /// One pass over the running deployments of `configs` alone: what the stream handler
    /// makes when health reports for them arrive.
    public func pass(over configs: [ConfigName]) async -> [Action] {
        var actions: [Action] = []
        for config in configs {
            guard let running = try? await store.runningDeployments(in: config) else { continue }
            for deployment in running {
                if let action = await check(deployment, in: config) { actions.append(action) }
            }
        }
        return actions
    }

    /// Passes every `period` until the task is cancelled, giving each pass's actions to `report`.
    public func run(every period: Duration, report: @Sendable ([Action]) -> Void) async {
        while !Task.isCancelled {
            let actions = await pass()
            if !actions.isEmpty { report(actions) }
            try? await Task.sleep(for: period)
        }
    }

    /// The `health` signal's reading: the sequential test (``HealthTest/standard``) over
    /// the reports agents and servers passed to the store.
    func health(of deployment: Deployment, in config: ConfigName) async -> SignalReading {
        let reports: [HealthReport]
        do {
            reports = try await store.healthReports(deployment: deployment.id, in: config)
        } catch {
            return .unknown("the health reports cannot be read: \((error as? DiscfgError)?.message ?? "\(error)")")
        }
        return SignalReading(DeploymentHealth(reports))
    }

    private func check(_ deployment: Deployment, in config: ConfigName) async -> Action? {
        var unhealthy: (signal: DeploymentSignal, reading: String)?
        let state = deployment.status(at: clock.now().milliseconds).state
        if !deployment.signals.isEmpty, [.deploying, .baking, .paused].contains(state) {
            var readings = await signals?.read(deployment.signals) ?? [:]
            if deployment.signals.contains(.health) { readings[.health] = await health(of: deployment, in: config) }
            for signal in deployment.signals {
                if case .unhealthy(let reason)? = readings[signal] {
                    unhealthy = (signal, reason)
                    break
                }
            }
        }
        guard let due = deployment.due(at: clock.now().milliseconds, unhealthy: unhealthy) else { return nil }
        let change = DeploymentChange.transition(id: deployment.id, due.kind, reason: due.reason, after: deployment.transitions.count)
        do {
            let outcome = try await Attribution(principal: Self.principal, message: due.reason).withValue {
                try await store.changeDeployment(change, in: config)
            }
            return Action(config: config, id: deployment.id, due: due, revision: outcome.revision)
        } catch let error as DiscfgError {
            return Action(config: config, id: deployment.id, due: due, revision: nil, failure: error.message)
        } catch {
            return Action(config: config, id: deployment.id, due: due, revision: nil, failure: "\(error)")
        }
    }
}
