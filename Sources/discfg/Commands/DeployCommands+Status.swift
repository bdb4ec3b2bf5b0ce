import ArgumentParser
import DiscfgCore
import DiscfgJSON
import DiscfgSignals
import Foundation

extension DeployCommand {
    /// `discfg deploy status`: where one deployment stands now, computed from its record and the clock.
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a deployment's state, share, next step, bake, signals, readers and history.",
            usage: "discfg deploy status [<options>] <config> [<id>]",
            discussion: """
            Without an id, the deployment running in the config (with none running, \
            the one that ended last). The state and share are computed from the record \
            and this machine's clock, as every reader computes them: the share now, the \
            step it is at, when the next step comes (local time), the bake left, who \
            started it and why, when it completes (shifted by each pause; while \
            paused, how long after a resume), what rolls it back by itself, and every \
            transition (who, when, why).

            For a running deployment it reads each signal now, from this machine, as a \
            monitor does: alarm:NAME shows OK, ALARM: why, or unknown: why (no region, \
            credentials refused; the usual AWS settings, AWS_ENDPOINT_URL included); \
            http:URL shows healthy or unhealthy: what it answered (one GET, 4 s at \
            most); the signals take 6 s at most in all, and what is not read by then \
            shows unknown. --no-signals skips them (scripts, offline). It also shows \
            what agents and 'discfg serve' reported to the store: the readers on each \
            version, and when applications reported requests, the errors on each and \
            the health test's decision (undecided, healthy or rollback), which is the \
            health signal's reading.

            -f json prints the record as stored ("deployment"), the computed status \
            ("status": state, shareBasisPoints, step, stepCount, nextStepAt, \
            completesAt and at in unix milliseconds, bakeLeftMilliseconds, \
            scheduleLeftMilliseconds, pausedIn, running), and for a running deployment \
            "health" (reporters, latest, decision, stable and candidate requests, \
            errors and readers) and "signals" (each signal, its reading: healthy, \
            unhealthy or unknown, and the reason).

            When the clock has made a running deployment COMPLETE or ROLLED_BACK and \
            no monitor ('discfg serve') has recorded it yet, status (and ls) records \
            it, as the monitor would: the candidate becomes the live value (or the \
            staging is dropped) in one change, and writes under the prefix are taken \
            again. With a token that may only read, it is shown and left to the monitor.

            --watch shows it again every second until it has ended (COMPLETE, \
            ROLLED_BACK or REVERTED, recorded): on a terminal in place, piped one \
            after another; it reads alarms and health URLs again every 10 s.

            Examples:
              discfg deploy status app
              discfg deploy status app --watch
              discfg deploy status app --no-signals
              discfg deploy status app 3f9c0a1b2c3d4e5f -f json
            """
        )

        @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

        @Flag(name: .long, help: "Show it again every second until it ends (with -f json, one document a line).")
        var watch = false

        @Flag(name: .customLong("no-signals"), help: "Do not read the signals (alarms, health URLs) now; the store's health reports are shown all the same.")
        var noSignals = false

        @Argument(help: PositionalArguments.help("[CONFIG] [ID]"), completion: ShellCompletion.configs) var arguments: [String] = []

        func run() async throws {
            try await global.run("deploy-status") { output in
                let (config, id) = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configAndOptionalTarget(what: "ID")
                let store = try global.openStore()
                let (read, wasRunning) = try await DeployCommand.chosen(id, in: config, store: store)
                let (deployment, running) = await DeployCommand.settled(read, running: wasRunning, in: config, store: store)
                // Made once, only when there is something to read with it.
                let reader = running && !noSignals && deployment.signals.contains(where: { $0 != .health }) ? signalReader() : nil
                do {
                    try await show(deployment, running: running, in: config, store: store, reader: reader, output: output)
                } catch {
                    await reader?.shutdown()
                    throw error
                }
                await reader?.shutdown()
            }
        }

        /// Shows `deployment`, and with --watch again every second until it has ended.
        private func show(
            _ deployment: Deployment, running: Bool, in config: ConfigName, store: any ConfigStore, reader: SignalReader?, output: Output
        ) async throws {
            var (deployment, running) = (deployment, running)
            let clears = watch && output.format == .human && isatty(STDOUT_FILENO) == 1
            var readings = Readings.none
            while true {
                readings = running ? await Readings.read(deployment, in: config, store: store, signals: !noSignals, reader: reader, earlier: readings) : .none
                let now = DeployCommand.nowMilliseconds
                let document = try DeployCommand.document("deploy-status", config: config, deployment, running: running, at: now, extra: try readings.members())
                // On a terminal each refresh replaces the last; piped, they follow one another.
                if clears { output.raw(Data("\u{1B}[H\u{1B}[2J".utf8)) }
                FlagCommand.emit(output, document) {
                    Self.human(deployment, config: config, running: running, readings: readings, at: now) + (watch && !clears ? "\n" : "")
                }
                guard watch, running else { return }
                try await Task.sleep(for: .seconds(1))
                let again = try await store.deployment(deployment.id, in: config)
                (deployment, running) = await DeployCommand.settled(again.deployment, running: again.running, in: config, store: store)
            }
        }

        /// A reader of alarms and health URLs with the global AWS flags, as `serve`'s monitor makes one.
        func signalReader() -> SignalReader {
            SignalReader.standard(
                region: global.aws.region, profile: global.aws.credProfile, credentials: try? global.aws.explicitCredentials(),
                probe: .init(timeout: Readings.probeTimeout)
            )
        }

        /// The status as lines a person reads.
        static func human(_ deployment: Deployment, config: ConfigName, running: Bool, readings: Readings = .none, at now: Int64) -> String {
            let status = deployment.status(at: now)
            let nowDate = Date(timeIntervalSince1970: Double(now) / 1000)
            var state = status.state.rawValue
            if let pausedIn = status.pausedIn { state += " (while \(pausedIn.rawValue))" }
            if running, status.state == .complete || status.state == .rolledBack {
                state += " by the clock; not yet recorded (a monitor such as 'discfg serve' records it)"
            }
            var rows: [(String, String)] = [
                ("deployment", "\(deployment.id) of config \(config), prefix \(deployment.prefix)"),
                ("state", state),
                ("share", DeployCommand.share(status)),
            ]
            if let next = status.nextStepAt {
                rows.append(("next step", "\(DeployCommand.clock(next, now: nowDate)) (in \(DeployCommand.span(next - now)))"))
            }
            if let bake = status.bakeLeftMilliseconds { rows.append(("bake left", DeployCommand.span(bake))) }
            rows += [
                ("revisions", "\(deployment.stableRevision) stable, \(deployment.candidateRevision) candidate"),
                ("schedule", DeployCommand.schedule(deployment, at: now)),
                ("started", "\(DeployCommand.clock(deployment.startedAt, now: nowDate)) by \(deployment.startedBy)"),
                ("message", deployment.message.isEmpty ? "-" : deployment.message),
            ]
            let read = readings.rows(at: now)
            if !read.contains(where: { $0.0 == "signals" }) {
                rows.append(("signals", deployment.signals.isEmpty ? "none" : deployment.signals.map(\.text).joined(separator: ", ")))
            }
            rows += read
            let width = rows.map(\.0.count).max() ?? 0
            let indent = String(repeating: " ", count: width + 2)
            var lines = rows.map { name, value in
                // A value of several lines (a signal a line) continues under its first.
                "\((name + ":").padding(toLength: width + 2, withPad: " ", startingAt: 0))\(value.replacingOccurrences(of: "\n", with: "\n" + indent))"
            }
            lines.append(deployment.transitions.isEmpty ? "transitions: none" : "transitions:")
            for transition in deployment.transitions {
                let why = transition.reason.isEmpty ? "" : ": \(transition.reason)"
                lines.append("  \(DeployCommand.clock(transition.at, now: nowDate))  \(transition.state.rawValue) by \(transition.by)\(why)")
            }
            return lines.joined(separator: "\n")
        }
    }

    /// `discfg deploy ls`: a config's deployments, running first.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ls",
            abstract: "List a config's deployments, running first: id, prefix, state, share, start, who and why.",
            usage: "discfg deploy ls [<options>] <config>",
            discussion: """
            Running deployments come first, then those that ended, each group newest \
            first. -f json prints each one's record and computed status.

            Examples:
              discfg deploy ls app
              discfg deploy ls app -f json
            """
        )

        @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
        @Argument(help: PositionalArguments.help("[CONFIG]"), completion: ShellCompletion.configs) var arguments: [String] = []

        func run() async throws {
            try await global.run("deploy-ls") { output in
                let config = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configOnly()
                let store = try global.openStore()
                _ = try await store.configInfo(config)
                let listing = try await store.deployments(in: config)
                var running: [Deployment] = [], ended = listing.ended
                for deployment in listing.running {
                    let settled = await DeployCommand.settled(deployment, running: true, in: config, store: store)
                    if settled.running { running.append(settled.deployment) } else { ended.append(settled.deployment) }
                }
                let newestFirst = { (deployments: [Deployment]) in deployments.sorted { ($0.startedAt, $0.id) > ($1.startedAt, $1.id) } }
                let rows = newestFirst(running).map { ($0, true) } + newestFirst(ended).map { ($0, false) }
                let now = DeployCommand.nowMilliseconds
                let deployments: [JSONValue] = try rows.map { deployment, running in
                    .object(JSONObject([
                        ("deployment", try DeployCommand.recordJSON(deployment)),
                        ("status", DeployCommand.statusJSON(deployment, at: now, running: running)),
                    ]))
                }
                let document = JSONValue.object(JSONObject([
                    ("action", .string("deploy-ls")), ("config", .string(config.rawValue)),
                    ("revision", .number(JSONNumber(Int(listing.revision.rawValue)))), ("deployments", .array(deployments)),
                ]))
                FlagCommand.emit(output, document) {
                    guard !rows.isEmpty else { return "no deployments in config \(config); start one with 'discfg deploy start \(config)'" }
                    let nowDate = Date(timeIntervalSince1970: Double(now) / 1000)
                    let table = rows.map { deployment, _ in
                        let status = deployment.status(at: now)
                        return [
                            deployment.id, deployment.prefix.path, status.state.rawValue, DeploymentStrategy.percent(status.shareBasisPoints),
                            DeployCommand.clock(deployment.startedAt, now: nowDate), deployment.startedBy,
                            deployment.message.isEmpty ? "-" : Show.preview(Data(deployment.message.utf8), limit: 60),
                        ]
                    }
                    return Show.table(["ID", "PREFIX", "STATE", "SHARE", "STARTED", "BY", "MESSAGE"], table)
                }
            }
        }
    }
}
