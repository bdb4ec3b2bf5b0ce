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
        both; the destination must have an encryption key of its own. To make a new \
        config from another, use 'discfg create NEW --from SOURCE'.

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
                let read = try await Self.Source.read(from, prefix: prefix, in: store)
                _ = try await store.configInfo(to)
                try await read.promote(
                    into: to, store: store, global: global, plan: plan, output: output,
                    apply: "discfg promote \(from) \(to)" + (prefix.map { " --prefix \($0)" } ?? ""), action: "promote"
                ) { "promoted \(read.described) into \(to): " + ChangePlan.tally($0) }
            }
        }
    }
}

extension PromoteCommand {
    /// The keys a promotion copies: a config's keys under a prefix, read at one revision.
    /// `promote` and `create --from` both copy through it.
    struct Source {
        let config: ConfigName
        let revision: Revision
        let prefix: KeyPrefix?
        let snapshot: ConfigSnapshot

        /// `config`'s keys under `prefix` (all of them for nil) as they are now.
        /// - Throws: `configNotFound` when there is no such config.
        static func read(_ config: ConfigName, prefix: KeyPrefix?, in store: any ConfigStore) async throws -> Source {
            let revision = try await store.configInfo(config).revision
            let snapshot = try await RollbackCommand.snapshot(of: config, at: revision, under: prefix ?? .root, in: store)
            return Source(config: config, revision: revision, prefix: prefix, snapshot: snapshot)
        }

        /// `staging /features/ at revision 12`, for plans and the line a change prints.
        var described: String { "\(config)\(prefix.map { " \($0)" } ?? "") (revision \(revision))" }

        /// Whether the copy holds a secret, which the destination needs a key of its own to take.
        var holdsSecrets: Bool { snapshot.items.contains { $0.contentType == SecretMarker.contentType } }

        /// Makes `destination`'s keys under the prefix these, as one change of it (or
        /// prints the plan, with `plan`'s --dry-run); secrets are opened from the source and
        /// sealed again for the destination.
        func promote(
            into destination: ConfigName, store: any ConfigStore, global: GlobalOptions, plan: PlanOptions, output: Output,
            apply: String, action: String, done: @escaping @Sendable (ImportResult) -> String
        ) async throws {
            try await plan.run(
                snapshot, into: destination, ImportOptions(replace: true, prefix: prefix ?? .root), store: store, output: output,
                sealedFrom: (config, revision, global),
                what: "promote \(config)\(prefix.map { " \($0)" } ?? "") at revision \(revision)",
                apply: apply, action: action, done: done
            )
        }
    }
}
