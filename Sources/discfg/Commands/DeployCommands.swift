import ArgumentParser
import DiscfgCore
import DiscfgJSON
import Foundation

/// `discfg deploy`: staged deployments — a candidate reaching a growing share of entities
/// on a schedule, paused, resumed, rolled back or reverted, each as one attributed change.
struct DeployCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deploy",
        abstract: "Roll a change out to a growing share of readers, and take it back.",
        discussion: """
        A deployment stages candidate values for the keys under a prefix (a file as \
        'discfg import' reads it, or another config's keys) without making them live, \
        and records how the share of entities that see them grows: steps every \
        interval, then a bake at 100 %, then COMPLETE, when the candidate becomes the \
        live value in one change. Nothing has to run for the share to grow: every \
        reader computes it from the record and the clock. See docs/cli.md.

        Examples:
          discfg deploy start app -d pool.json --strategy AllAtOnce -m "why"
          discfg deploy start prod --from staging --prefix /features/ \\
              --strategy linear --step 25 --interval 10m --bake 30m \\
              --rollback-on alarm:checkout-5xx -m "release 4.2"
          discfg deploy status app
          discfg deploy pause app -m "watching the error rate"
          discfg deploy rollback app -m "latency up"

        STATES:
          DEPLOYING     the share grows one step each interval
          BAKING        at 100 %, waiting out the bake
          COMPLETE      the candidate is the live value for everyone
          PAUSED        the share holds; the schedule waits for 'resume'
          ROLLING_BACK  the share falls, the last exposed entities first
          ROLLED_BACK   everyone is back on the stable values
          REVERTED      a complete deployment taken back

        While a deployment runs, a write of any key under its prefix is refused \
        (exit 4, naming the deployment) until it ends, and only one deployment runs on \
        a prefix at a time. A reader that names an entity (a Discfg-Entity header, \
        AppConfig's Entity-Id, an OFREP targetingKey, an agent's instance id) sees the \
        candidate once its bucket is inside the share; plain reads, 'get', 'ls', \
        'export' and watches see the stable values until the deployment completes.
        """,
        subcommands: [Start.self, Status.self, List.self, Pause.self, Resume.self, Rollback.self, Revert.self]
    )

    /// The deployment `id` of `config`, or without one the running deployment (with none
    /// running, the one that ended last).
    /// - Throws: `keyNotFound` when there is none; `invalidArgument` when several run and
    ///   none is named.
    static func chosen(_ id: String?, in config: ConfigName, store: any ConfigStore, runningOnly: Bool = false) async throws -> (deployment: Deployment, running: Bool) {
        if let id {
            guard id.utf8.count == 16, id.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
                throw usage("\"\(String(id.prefix(40)).debugEscaped)\" is not a deployment id (16 lowercase hexadecimal digits); `discfg deploy ls \(config)` lists them", field: "id")
            }
            return try await store.deployment(id, in: config)
        }
        _ = try await store.configInfo(config)
        let listing = try await store.deployments(in: config)
        if listing.running.count > 1 {
            let ids = listing.running.map { "\($0.id) (\($0.prefix))" }.joined(separator: ", ")
            throw usage("config \"\(config)\" has \(listing.running.count) deployments running: \(ids); name one", field: "id")
        }
        if let running = listing.running.first { return (running, true) }
        if !runningOnly, let last = listing.ended.max(by: { $0.startedAt < $1.startedAt }) { return (last, false) }
        let what = runningOnly && !listing.ended.isEmpty ? "no deployment running" : "no deployments"
        throw DiscfgError(.keyNotFound, "config \"\(config)\" has \(what); start one with `discfg deploy start \(config)`", field: "id")
    }

    /// `deployment` with what the clock has made true recorded: a running deployment that
    /// is COMPLETE (or ROLLED_BACK) by the clock is recorded so, as a monitor records it
    /// (`discfg serve`), so that the candidate becomes live (or its staging goes) and
    /// writes under the prefix are taken again without a server running. Conditioned on
    /// the record as read: when a monitor recorded it first, the record is read again.
    /// A store that refuses the write (a read-only token) leaves it to the monitor.
    static func settled(_ deployment: Deployment, running: Bool, in config: ConfigName, store: any ConfigStore) async -> (deployment: Deployment, running: Bool) {
        // What the clock alone has made due: the monitors' own decision, without signals.
        guard running, let due = deployment.due(at: nowMilliseconds, unhealthy: nil) else { return (deployment, running) }
        do {
            let outcome = try await Attribution(principal: .localUser(), message: "deployment \(deployment.id) \(due.kind.rawValue)").withValue {
                try await store.changeDeployment(.transition(id: deployment.id, due.kind, reason: due.reason, after: deployment.transitions.count), in: config)
            }
            return (outcome.deployment, false)
        } catch {
            return (try? await store.deployment(deployment.id, in: config)) ?? (deployment, running)
        }
    }

    /// The schedule in words at `now`: `20 % now, +20 % every 6m, 100 % at 24m, bake 30m,
    /// complete at 20:41:07`, the completion shifted by each pause (``Deployment/completesAt(after:)``);
    /// while paused `paused: completes 5m after resume`; rolling back or ended otherwise, none.
    static func schedule(_ deployment: Deployment, at now: Int64 = nowMilliseconds) -> String {
        let strategy = deployment.strategy
        let percent = DeploymentStrategy.percent
        let interval = DeploymentDuration.spelled(strategy.intervalSeconds)
        var parts = ["\(percent(strategy.shares[0])) now"]
        if strategy.stepCount > 1 {
            switch strategy.growth {
            case .linear: parts.append("+\(percent(strategy.stepBasisPoints)) every \(interval)")
            case .exponential: parts.append("doubling every \(interval) (\(strategy.shares.map(percent).joined(separator: ", ")))")
            }
            parts.append("100 % at \(DeploymentDuration.spelled(Int64(strategy.stepCount - 1) * strategy.intervalSeconds))")
        }
        if strategy.bakeSeconds > 0 { parts.append("bake \(DeploymentDuration.spelled(strategy.bakeSeconds))") }
        if let end = deployment.completesAt(after: now) {
            parts.append("complete at \(clock(end, now: Date(timeIntervalSince1970: Double(now) / 1000)))")
        } else if deployment.status(at: now).state == .paused, let left = deployment.scheduleLeft(at: now) {
            parts.append("paused: completes \(span(left)) after resume")
        }
        let name = strategy.name.map { "\($0): " } ?? ""
        let rollback = strategy.rollbackSeconds > 0 ? "; a rollback takes \(DeploymentDuration.spelled(strategy.rollbackSeconds))" : ""
        return name + parts.joined(separator: ", ") + rollback
    }

    /// A unix-milliseconds instant in local time: `20:41:07` today, else with its date.
    static func clock(_ milliseconds: Int64, now: Date = Date()) -> String {
        let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone.current
        formatter.dateFormat = "yyyy-MM-dd"
        let sameDay = formatter.string(from: date) == formatter.string(from: now)
        formatter.dateFormat = sameDay ? "HH:mm:ss" : "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: date)
    }

    /// Milliseconds as a duration a person reads, rounded up to the second: `2m10s`.
    static func span(_ milliseconds: Int64) -> String {
        DeploymentDuration.spelled((max(milliseconds, 0) + 999) / 1000)
    }

    /// The current time in unix milliseconds.
    static var nowMilliseconds: Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    /// The record as it is stored, as a JSON value.
    static func recordJSON(_ deployment: Deployment) throws -> JSONValue {
        let data = try JSONEncoder.discfg(pretty: false).encode(deployment)
        do {
            return try JSONParser.parse(Array(data))
        } catch {
            throw DiscfgError(.internal, "deployment \(deployment.id)'s record did not read back as JSON: \(error)")
        }
    }

    /// The status of `deployment` computed at `now`, as a JSON object.
    static func statusJSON(_ deployment: Deployment, at now: Int64, running: Bool) -> JSONValue {
        let status = deployment.status(at: now)
        let optional = { (value: Int64?) in value.map { JSONValue.number(JSONNumber(Int($0))) } ?? .null }
        return .object(JSONObject([
            ("at", .number(JSONNumber(Int(now)))), ("state", .string(status.state.rawValue)), ("running", .bool(running)),
            ("shareBasisPoints", .number(JSONNumber(status.shareBasisPoints))), ("share", .string(DeploymentStrategy.percent(status.shareBasisPoints))),
            ("step", .number(JSONNumber(status.step))), ("stepCount", .number(JSONNumber(status.stepCount))),
            ("nextStepAt", optional(status.nextStepAt)), ("bakeLeftMilliseconds", optional(status.bakeLeftMilliseconds)),
            ("pausedIn", status.pausedIn.map { .string($0.rawValue) } ?? .null),
            ("completesAt", optional(deployment.completesAt(after: now))), ("scheduleLeftMilliseconds", optional(deployment.scheduleLeft(at: now))),
        ]))
    }

    /// The document `-f json` prints for one deployment: the record and its status now,
    /// then `extra` members (what status read beside them).
    static func document(
        _ action: String, config: ConfigName, _ deployment: Deployment, running: Bool, at now: Int64, revision: Revision? = nil,
        extra: [(key: String, value: JSONValue)] = []
    ) throws -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [("action", .string(action)), ("config", .string(config.rawValue))]
        if let revision { members.append(("revision", .number(JSONNumber(Int(revision.rawValue))))) }
        members.append(("deployment", try recordJSON(deployment)))
        members.append(("status", statusJSON(deployment, at: now, running: running)))
        return .object(JSONObject(members + extra))
    }

    /// `40 % (step 2 of 5)`.
    static func share(_ status: DeploymentStatus) -> String {
        "\(DeploymentStrategy.percent(status.shareBasisPoints)) (step \(status.step) of \(status.stepCount))"
    }
}
