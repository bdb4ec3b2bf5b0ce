import ArgumentParser
import DiscfgCore
import Foundation

extension DeployCommand {
    /// A transition a person records — pause, resume, rollback, revert — as one change
    /// conditioned on the record as it was read, so a monitor that moved it meanwhile makes
    /// the command fail (exit 4) instead of applying twice.
    struct Transition {
        let kind: DeploymentTransition.Kind
        let global: GlobalOptions
        let reason: ChangeOptions
        let arguments: [String]
        /// Whether the id must be given (a revert: the deployment has ended).
        var idRequired = false

        var action: String {
            switch kind {
            case .paused: "deploy-pause"
            case .resumed: "deploy-resume"
            case .rollingBack: "deploy-rollback"
            case .reverted: "deploy-revert"
            case .rolledBack, .complete: "deploy-record"
            }
        }

        func run() async throws {
            try await reason.attributed {
                try await global.run(action) { output in
                    let positional = try PositionalArguments(arguments: arguments, selected: global.selectedConfig())
                    let (config, id) = idRequired ? try positional.configAndTarget(what: "ID") : try positional.configAndOptionalTarget(what: "ID")
                    let store = try global.openStore()
                    let (read, _) = try await DeployCommand.chosen(id, in: config, store: store, runningOnly: !idRequired)
                    let outcome = try await store.changeDeployment(
                        .transition(id: read.id, kind, reason: reason.message ?? "", after: read.transitions.count), in: config
                    )
                    let deployment = outcome.deployment
                    let now = max(DeployCommand.nowMilliseconds, deployment.transitions.last?.at ?? 0)
                    let running = kind != .reverted && kind != .rolledBack && kind != .complete
                    let document = try DeployCommand.document(action, config: config, deployment, running: running, at: now, revision: outcome.revision)
                    FlagCommand.emit(output, document) {
                        let status = deployment.status(at: now)
                        let follow: String = switch kind {
                        case .paused: "; resume it with 'discfg deploy resume \(config)'"
                        case .resumed, .rollingBack: "; follow it with 'discfg deploy status \(config)'"
                        default: ""
                        }
                        return "deployment \(deployment.id) of config \(config) is \(status.state.rawValue) at \(DeployCommand.share(status)), revision \(outcome.revision)\(follow)"
                    }
                }
            }
        }

        static func usageLine(_ verb: String, idRequired: Bool = false) -> String {
            "discfg deploy \(verb) [<options>] <config> \(idRequired ? "<id>" : "[<id>]") [-m <text>]"
        }
    }

    struct Pause: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Hold a deploying or baking deployment's share where it is.",
            usage: Transition.usageLine("pause"),
            discussion: """
            The share stops growing and the schedule waits; 'resume' goes on from the \
            same step, the rest of the schedule shifted by the time spent paused. \
            Writes under the prefix stay refused while paused. Without an id, the \
            deployment running in the config. If the deployment changed since it was \
            read (a monitor rolled it back), nothing is written (exit 4).

            Examples:
              discfg deploy pause app -m "watching the error rate"
            """
        )

        @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
        @OptionGroup var reason: ChangeOptions
        @Argument(help: PositionalArguments.help("[CONFIG] [ID]"), completion: ShellCompletion.configs) var arguments: [String] = []

        func run() async throws {
            try await Transition(kind: .paused, global: global, reason: reason, arguments: arguments).run()
        }
    }

    struct Resume: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put a paused deployment back on its schedule.",
            usage: Transition.usageLine("resume"),
            discussion: """
            The schedule goes on from the step it was paused at, shifted by the time \
            spent paused. Without an id, the deployment running in the config.

            Examples:
              discfg deploy resume app -m "error rate is flat"
            """
        )

        @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
        @OptionGroup var reason: ChangeOptions
        @Argument(help: PositionalArguments.help("[CONFIG] [ID]"), completion: ShellCompletion.configs) var arguments: [String] = []

        func run() async throws {
            try await Transition(kind: .resumed, global: global, reason: reason, arguments: arguments).run()
        }
    }

    struct Rollback: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Take a running deployment's candidate back from everyone.",
            usage: Transition.usageLine("rollback"),
            discussion: """
            The share falls to 0 — at once, or over the strategy's --rollback-over \
            time, the entities that got the candidate last losing it first — and the \
            deployment is ROLLED_BACK: nothing live ever changed, and the staged \
            candidate is dropped. A DEPLOYING, BAKING or PAUSED deployment can be \
            rolled back; a COMPLETE one is reverted ('discfg deploy revert'). Without \
            an id, the deployment running in the config.

            Examples:
              discfg deploy rollback app -m "latency up on the candidate"
            """
        )

        @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
        @OptionGroup var reason: ChangeOptions
        @Argument(help: PositionalArguments.help("[CONFIG] [ID]"), completion: ShellCompletion.configs) var arguments: [String] = []

        func run() async throws {
            try await Transition(kind: .rollingBack, global: global, reason: reason, arguments: arguments).run()
        }
    }

    struct Revert: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put back the values a complete deployment replaced.",
            usage: Transition.usageLine("revert", idRequired: true),
            discussion: """
            The keys the deployment made live get the stable values back, in one \
            change; refused (exit 4, nothing written) when one of them changed after \
            the deployment completed, since a revert would undo that change too. \
            Only a COMPLETE deployment can be reverted; 'discfg deploy ls' gives ids.

            Examples:
              discfg deploy revert app 3f9c0a1b2c3d4e5f -m "the pool is too big"
            """
        )

        @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
        @OptionGroup var reason: ChangeOptions
        @Argument(help: PositionalArguments.help("[CONFIG] ID"), completion: ShellCompletion.configs) var arguments: [String] = []

        func run() async throws {
            try await Transition(kind: .reverted, global: global, reason: reason, arguments: arguments, idRequired: true).run()
        }
    }
}
