import ArgumentParser
import DiscfgCore
import DiscfgSecrets
import Foundation

extension DeployCommand {
    /// `discfg deploy start`: stages a candidate and records a deployment of it, in one change.
    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stage a candidate (a file, or another config's keys) and start deploying it.",
            usage: """
            discfg deploy start [<options>] <config> (-d <file> | --from <src>)
            """,
            discussion: """
            The candidate is a file as 'discfg import' reads it (-d FILE: JSON, YAML or \
            env, by its extension or --file-format), whose keys must be under --prefix, or \
            another config's keys under --prefix (--from SOURCE: a promotion through a \
            deployment, which implies --replace). With --replace, the live keys under \
            the prefix that the candidate lacks are removed when it completes; without \
            it they stay. Nothing live changes now: the candidate is staged, and the \
            share of entities that see it follows the strategy.

            Strategies: linear or exponential with --step PCT (the first step's share; \
            linear adds it each step, exponential doubles) and --interval DUR, and \
            optionally --bake DUR (default 0s); or one of AppConfig's predefined ones, \
            with or without 'AppConfig.': \(DeploymentStrategy.predefined.compactMap(\.name).joined(separator: ", ")). \
            Durations are 30s, 6m, 1h30m, 2d or seconds. --rollback-over DUR makes a \
            rollback walk the share back down over that time (default: at once).

            --rollback-on names what rolls the deployment back by itself while it \
            deploys or bakes (repeatable): alarm:NAME (a CloudWatch alarm in ALARM or \
            INSUFFICIENT_DATA), http:URL (a health URL answering other than 2xx), or \
            health (the candidate's error rate significantly worse than the stable \
            version's, as agents report it). A monitor watches them: 'discfg serve', or \
            the Lambda's scheduled rule on AWS.

            Examples:
              discfg deploy start app -d pool.json \\
                  --strategy Linear20PercentEvery6Minutes -m "raise the pool size"
              discfg deploy start app -d db.yaml --prefix /db/ \\
                  --strategy exponential --step 5 --interval 2m --bake 10m
              discfg deploy start prod --from staging --prefix /features/ \\
                  --strategy AppConfig.Canary10Percent20Minutes \\
                  --rollback-on alarm:checkout-5xx --rollback-on health

            Prints the deployment's id, the stable and candidate revisions and the \
            schedule; follow it with 'discfg deploy status CONFIG'. Refused (exit 4, \
            naming it) while another deployment runs on an overlapping prefix.
            """
        )

        @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
        @OptionGroup var reason: ChangeOptions

        @Option(name: .long, help: ArgumentHelp("The keys the deployment covers (default: the whole config).", valueName: "prefix"),
                transform: { try KeyPrefix($0) })
        var prefix: KeyPrefix?

        @Option(name: [.customShort("d"), .customLong("file")], help: ArgumentHelp("The candidate: a JSON, YAML or env file as 'discfg import' reads it ('-' for standard input).", valueName: "file"))
        var file: String?

        @Option(name: .customLong("file-format"), help: ArgumentHelp("-d's format: json, yaml or env. Default: from the file's extension.", valueName: "format"))
        var format: SnapshotFormat?

        @Option(name: .customLong("from"), help: ArgumentHelp("The candidate: this config's keys under --prefix (implies --replace).", valueName: "config"),
                completion: ShellCompletion.configs)
        var source: String?

        @Flag(name: .long, help: "Remove, on completion, the live keys under --prefix that the candidate lacks.")
        var replace = false

        @Option(name: .long, help: ArgumentHelp("linear, exponential, or a predefined strategy such as Linear20PercentEvery6Minutes.", valueName: "name"))
        var strategy: String

        @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("With linear or exponential: the first step's share in percent (0.01 to 100).", valueName: "pct"))
        var step: String?

        @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("With linear or exponential: the time between steps, such as 6m.", valueName: "dur"))
        var interval: String?

        @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("With linear or exponential: how long to stay at 100 % before COMPLETE (default 0s).", valueName: "dur"))
        var bake: String?

        @Option(name: [.customLong("rollback-over"), .customLong("rollback")], parsing: .unconditional,
                help: ArgumentHelp("How long a rollback takes to bring the share back to 0 (default 0s: at once).", valueName: "dur"))
        var rollbackOver: String?

        @Option(name: .customLong("rollback-on"), help: ArgumentHelp("What rolls it back by itself: alarm:NAME, http:URL or health (repeatable).", valueName: "signal"))
        var rollbackOn: [String] = []

        @Argument(help: PositionalArguments.help("[CONFIG]"), completion: ShellCompletion.configs) var arguments: [String] = []

        func run() async throws {
            try await reason.attributed {
                try await global.run("deploy-start") { output in
                    let config = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configOnly()
                    let strategy = try chosenStrategy()
                    let signals = try rollbackOn.map(DeploymentSignal.init)
                    let prefix = prefix ?? .root
                    guard (file == nil) != (source == nil) else {
                        throw usage("name the candidate once: -d FILE or --from CONFIG\(file == nil ? "" : ", not both")", field: file == nil ? "-d" : "--from")
                    }
                    let snapshot = try file.map { try ImportCommand.snapshot($0, format: format, formatFlag: "--file-format") }
                    if source != nil, format != nil { throw usage("--file-format applies to -d FILE", field: "--file-format") }
                    let store = try global.openStore()
                    _ = try await store.configInfo(config)
                    let entries = try await candidate(snapshot, into: config, under: prefix, store: store)
                    let plan = DeploymentPlan(
                        prefix: prefix, entries: entries, replace: replace || source != nil, strategy: strategy, signals: signals,
                        message: reason.message ?? snapshot?.message ?? ""
                    )
                    let outcome = try await store.changeDeployment(.start(plan), in: config)
                    let deployment = outcome.deployment
                    let now = DeployCommand.nowMilliseconds
                    let document = try DeployCommand.document("deploy-start", config: config, deployment, running: true, at: now, revision: outcome.revision)
                    FlagCommand.emit(output, document) {
                        var lines = [
                            "deployment \(deployment.id) started on config \(config) \(deployment.prefix): revision \(deployment.stableRevision) stable, revision \(deployment.candidateRevision) candidate",
                            "schedule: \(DeployCommand.schedule(deployment))",
                        ]
                        if !deployment.signals.isEmpty { lines.append("rolls back on: \(deployment.signals.map(\.text).joined(separator: ", "))") }
                        lines.append("follow it: discfg deploy status \(config)")
                        return lines.joined(separator: "\n")
                    }
                }
            }
        }

        /// The strategy the flags name, each bad flag refused in one sentence.
        private func chosenStrategy() throws -> DeploymentStrategy {
            let rollback = try rollbackOver.map {
                try DeploymentDuration.seconds($0, field: "--rollback-over", upTo: DeploymentStrategy.maxRollbackSeconds)
            } ?? 0
            guard let growth = DeploymentStrategy.Growth(rawValue: strategy.lowercased()) else {
                let named = try DeploymentStrategy.predefined(named: strategy)
                for (flag, value) in [("--step", step), ("--interval", interval), ("--bake", bake)] where value != nil {
                    throw usage("\(flag) goes with --strategy linear or exponential; \(named.name ?? strategy) is predefined with its own schedule", field: flag)
                }
                return try named.withRollbackSeconds(rollback)
            }
            guard let step else { throw usage("--strategy \(growth.rawValue) needs --step PCT, the first step's share, such as 20", field: "--step") }
            guard let interval else { throw usage("--strategy \(growth.rawValue) needs --interval DUR, the time between steps, such as 6m", field: "--interval") }
            return try DeploymentStrategy(
                growth: growth,
                stepBasisPoints: DeploymentStrategy.stepBasisPoints(percent: step),
                intervalSeconds: DeploymentDuration.seconds(interval, field: "--interval", upTo: DeploymentStrategy.maxIntervalSeconds),
                bakeSeconds: bake.map { try DeploymentDuration.seconds($0, field: "--bake", upTo: DeploymentStrategy.maxBakeSeconds) } ?? 0,
                rollbackSeconds: rollback
            )
        }

        /// The candidate's keys: the file's, or the source config's under `prefix`.
        private func candidate(_ snapshot: ConfigSnapshot?, into config: ConfigName, under prefix: KeyPrefix, store: any ConfigStore) async throws -> [ConfigSnapshot.Entry] {
            if let snapshot, let file {
                if let outside = snapshot.items.first(where: { !prefix.contains($0.key) }) {
                    throw usage("\(file): \(outside.key) is outside \(prefix), the prefix being deployed; nothing was staged", field: "-d")
                }
                return snapshot.items
            }
            let from = try ConfigName(source ?? "")
            guard from != config else { throw usage("--from names the config being deployed to, \(config); name another config", field: "--from") }
            let read = try await PromoteCommand.Source.read(from, prefix: prefix, in: store)
            guard !read.holdsSecrets else {
                throw usage("\(read.described) holds secrets, sealed with its own key; deploy them with -d from a file of opened values, or 'discfg promote'", field: "--from")
            }
            return read.snapshot.items.filter { !SchemaTarget.isReserved($0.key) }
        }
    }
}
