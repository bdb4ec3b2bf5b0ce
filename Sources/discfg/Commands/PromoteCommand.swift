import ArgumentParser
import DiscfgCore
import DiscfgWire
import Foundation

struct PromoteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "promote",
        abstract: "Make another config's keys (or a prefix of them) what this one's are, as one change.",
        usage: "discfg promote [<options>] <source> <destination>",
        discussion: """
        The destination's keys under --prefix (default: all of them) become the \
        source's as they are now: the source's keys are written, the destination's \
        keys the source lacks are deleted, in one change of the destination (one \
        revision, one 'discfg log' entry with its message). Schemas come along with \
        a whole config, and the destination's own are kept. Secrets are opened from \
        the source and sealed again for the destination, so this needs the keys of \
        both; the destination must have an encryption key of its own.

        Examples:
          discfg promote staging prod --dry-run
          discfg promote staging prod --if-revision 57 -m "release 4.2"
          discfg promote staging prod --prefix /features/ -m "turn the features on"
        """
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
    @OptionGroup var reason: ChangeOptions
    @OptionGroup var plan: PlanOptions

    @Option(name: .long, help: ArgumentHelp("Promote only the keys under this prefix.", valueName: "prefix"),
            transform: { try KeyPrefix($0) })
    var prefix: KeyPrefix?

    @Argument(help: "The config to copy from.", completion: ShellCompletion.configs) var source: String
    @Argument(help: "The config to change.", completion: ShellCompletion.configs) var destination: String

    func run() async throws {
        try await reason.attributed {
            try await global.run("promote") { output in
                let from = try ConfigName(source)
                let to = try ConfigName(destination)
                guard from != to else { throw usage("promote copies one config into another; \(from) was named twice", field: "destination") }
                let store = try global.openStore()
                let scope = prefix ?? .root
                // The source as it is now, read at one revision.
                let revision = try await store.configInfo(from).revision
                let snapshot = try await RollbackCommand.snapshot(of: from, at: revision, under: scope, in: store)
                _ = try await store.configInfo(to)
                let described = prefix.map { " \($0)" } ?? ""
                try await plan.run(
                    snapshot, into: to, ImportOptions(replace: true, prefix: scope), store: store, output: output,
                    sealedFrom: (from, revision, global),
                    what: "promote \(from)\(described) at revision \(revision)",
                    apply: "discfg promote \(from) \(to)" + (prefix.map { " --prefix \($0)" } ?? ""),
                    action: "promote"
                ) { "promoted \(from)\(described) (revision \(revision)) into \(to): " + ChangePlan.tally($0) }
            }
        }
    }
}
