import DiscfgCore
import DiscfgJSON
import DiscfgSignals
import DiscfgWire
import Foundation
import Synchronization

extension DeployCommand {
    /// What `deploy status` reads beside the record for a running deployment: each
    /// signal's reading now (alarms and health URLs from this machine, as a monitor reads
    /// them) and the health agents and `serve` reported to the store. Reading never makes
    /// status fail: what cannot be read is shown as unknown, with why.
    struct Readings {
        /// How long the signals may take in all; the probe of a URL has its own, shorter, timeout.
        static let signalBound: Duration = .seconds(6)
        /// The probe's timeout for a health URL.
        static let probeTimeout: Duration = .seconds(4)
        /// How long `--watch` shows a reading of alarms and URLs before reading them again:
        /// a CloudWatch account's DescribeAlarms rate is shared with the monitors.
        static let rereadAfter: Duration = .seconds(10)

        /// The reading of each signal read here, in the record's order; nil when signals
        /// were not read (`--no-signals`, or the deployment has ended).
        var signals: [(signal: DeploymentSignal, reading: SignalReading)]?
        /// The alarms' and URLs' readings, and when they were taken.
        var outside: (at: ContinuousClock.Instant, readings: [DeploymentSignal: SignalReading])?
        /// The reports summed, or why they could not be read; nil when not asked (ended).
        var health: Result<DeploymentHealth, Unread>?

        /// Why something was not read, in one sentence.
        struct Unread: Error {
            let message: String
        }

        /// Nothing read: an ended deployment.
        static let none = Readings()

        /// Reads what a running `deployment` is watched with: the store's health reports,
        /// and with `signals` each of its signals (alarms and URLs through `reader`, made
        /// for the command when the deployment has any, unless `earlier` read them less than
        /// ``rereadAfter`` ago; `health` from the reports).
        static func read(
            _ deployment: Deployment, in config: ConfigName, store: any ConfigStore, signals: Bool, reader: SignalReader?, earlier: Readings? = nil
        ) async -> Readings {
            var readings = Readings()
            do {
                readings.health = .success(DeploymentHealth(try await store.healthReports(deployment: deployment.id, in: config)))
            } catch {
                readings.health = .failure(Unread(message: (error as? DiscfgError)?.message ?? "the store did not answer: \(error)"))
            }
            guard signals else { return readings }
            let watched = deployment.signals.filter { $0 != .health }
            var read: [DeploymentSignal: SignalReading] = [:]
            if let earlier = earlier?.outside, ContinuousClock.now - earlier.at < rereadAfter {
                read = earlier.readings
                readings.outside = earlier
            } else if let reader {
                // Alarms in one call, each URL on its own: a slow one leaves the others' readings.
                let alarms = watched.filter { if case .alarm = $0 { true } else { false } }
                let groups = (alarms.isEmpty ? [] : [alarms]) + watched.filter { !alarms.contains($0) }.map { [$0] }
                await withTaskGroup(of: [DeploymentSignal: SignalReading].self) { tasks in
                    for group in groups { tasks.addTask { await bounded(reader, group) } }
                    for await readings in tasks { read.merge(readings) { first, _ in first } }
                }
                readings.outside = (ContinuousClock.now, read)
            }
            readings.signals = deployment.signals.map { signal in
                if signal == .health { return (signal, readings.healthReading) }
                return (signal, read[signal] ?? .unknown("not read within \(DeploymentDuration.spelled(signalBound.components.seconds))"))
            }
            return readings
        }

        /// `reader.read(signals)`, or what it had not answered within ``signalBound``: a
        /// reading that hangs (an AWS endpoint that never answers past its retries) is left
        /// behind, cancelled, and status goes on.
        private static func bounded(_ reader: SignalReader, _ signals: [DeploymentSignal]) async -> [DeploymentSignal: SignalReading] {
            let race = Race()
            var tasks: [Task<Void, Never>] = []
            let value = await withCheckedContinuation { continuation in
                race.waiting.withLock { $0 = continuation }
                tasks.append(Task { race.finish(await reader.read(signals)) })
                tasks.append(Task {
                    try? await Task.sleep(for: signalBound)
                    race.finish([:])
                })
            }
            tasks.forEach { $0.cancel() }
            return value
        }

        /// The first of two answers resumes the wait; the other finds it gone.
        private final class Race: Sendable {
            let waiting = Mutex<CheckedContinuation<[DeploymentSignal: SignalReading], Never>?>(nil)

            func finish(_ value: [DeploymentSignal: SignalReading]) {
                waiting.withLock { $0.take() }?.resume(returning: value)
            }
        }

        /// The `health` signal as the store's reports say it: the health test's decision.
        var healthReading: SignalReading {
            switch health {
            case .success(let health):
                return SignalReading(health)
            case .failure(let error):
                return .unknown(error.message)
            case nil:
                return .unknown("not read")
            }
        }

        /// The rows the text status shows: a line per signal, the readers and the errors.
        func rows(at now: Int64) -> [(String, String)] {
            var rows: [(String, String)] = []
            if let signals, !signals.isEmpty {
                let width = signals.map(\.signal.text.count).max() ?? 0
                let lines = signals.map { "\($0.signal.text.padding(toLength: width + 2, withPad: " ", startingAt: 0))\(Self.words($0.signal, $0.reading))" }
                rows.append(("signals", lines.joined(separator: "\n")))
            }
            switch health {
            case nil:
                break
            case .failure(let error):
                rows.append(("readers", "unknown: \(error.message)"))
            case .success(let health) where health.reporters == 0:
                rows.append(("readers", "no reports yet (agents report within their refresh interval)"))
            case .success(let health):
                let reporters = "\(health.reporters) reporter\(health.reporters == 1 ? "" : "s")"
                let last = health.latest.map { ", last report \(DeployCommand.span(now - $0)) ago" } ?? ""
                rows.append(("readers", "stable \(health.stable.readers), candidate \(health.candidate.readers) (\(reporters)\(last))"))
                if health.stable.requests > 0 || health.candidate.requests > 0 {
                    let rate = { (counts: HealthReport.Counts) in
                        "\(counts.errors)/\(counts.requests) (\(counts.requests == 0 ? "-" : String(format: "%.2f %%", Double(counts.errors) * 100 / Double(counts.requests))))"
                    }
                    rows.append(("errors", "candidate \(rate(health.candidate)), stable \(rate(health.stable)) — health test: \(health.decision().rawValue)"))
                }
            }
            return rows
        }

        /// `OK` (an alarm) or `healthy`, `unhealthy: why` (`the alarm is in ALARM: …`, `the
        /// health URL … answered 503 Service Unavailable`), `unknown: why`.
        static func words(_ signal: DeploymentSignal, _ reading: SignalReading) -> String {
            switch reading {
            case .healthy: if case .alarm = signal { "OK" } else { "healthy" }
            case .unhealthy(let reason): "unhealthy: \(reason)"
            case .unknown(let reason): "unknown: \(reason)"
            }
        }

        /// The members `-f json` adds: `signals` (each signal, its reading and why) when
        /// they were read, `health` (the reports summed, ``HealthDocument``; null with none
        /// or when they could not be read, `healthError` then saying why) for a running one.
        func members() throws -> [(key: String, value: JSONValue)] {
            var members: [(key: String, value: JSONValue)] = []
            if let signals {
                members.append(("signals", .array(signals.map { signal, reading in
                    let kind = switch reading {
                    case .healthy: "healthy"
                    case .unhealthy: "unhealthy"
                    case .unknown: "unknown"
                    }
                    return .object(JSONObject([
                        ("signal", .string(signal.text)), ("reading", .string(kind)), ("reason", reading.reason.map(JSONValue.string) ?? .null),
                    ]))
                })))
            }
            switch health {
            case nil:
                break
            case .success(let health):
                let data = try JSONEncoder.discfg(pretty: false).encode(HealthDocument(health))
                members.append(("health", try JSONParser.parse(Array(data))))
            case .failure(let error):
                members += [("health", .null), ("healthError", .string(error.message))]
            }
            return members
        }
    }
}
