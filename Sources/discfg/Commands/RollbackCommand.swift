import ArgumentParser
import DiscfgCore
import DiscfgWire
import Foundation

struct RollbackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rollback",
        abstract: "Make a config (or a prefix of it) what it was at a past revision, as one new change.",
        usage: "discfg rollback [<options>] [<config>] --to-revision <n>",
        discussion: """
        The keys as they were at revision N are written back, and the keys made since \
        are deleted, as one new change: one revision, one 'discfg log' entry with its \
        message. History is kept: a rollback is undone by rolling back to the revision \
        before it. A whole config gets its schemas back as they were too; a prefix \
        leaves schemas alone. Revisions below the config's retained history \
        (compacted) cannot be rolled back to.

        Examples:
          discfg rollback myapp --to-revision 41 -m "undo the bad deploy"
          discfg rollback myapp --to-revision 41 --prefix /db/ --dry-run
          discfg rollback myapp --to-revision 41 --if-revision 57 -m "as planned"
        """
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
    @OptionGroup var reason: ChangeOptions
    @OptionGroup var plan: PlanOptions

    @Option(name: .customLong("to-revision"), help: ArgumentHelp("The revision to go back to.", valueName: "n"),
            transform: { Revision(UInt64(try NumberField.revision("--to-revision").parse($0))) })
    var toRevision: Revision

    @Option(name: .long, help: ArgumentHelp("Roll back only the keys under this prefix.", valueName: "prefix"),
            transform: { try KeyPrefix($0) })
    var prefix: KeyPrefix?

    @Argument(help: PositionalArguments.help("[CONFIG]"), completion: ShellCompletion.configs) var arguments: [String] = []

    func run() async throws {
        try await reason.attributed {
            try await global.run("rollback") { output in
                let config = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configOnly()
                let store = try global.openStore()
                let scope = prefix ?? .root
                let snapshot = try await Self.snapshot(of: config, at: toRevision, under: scope, in: store)
                let target = toRevision
                let described = prefix.map { " \($0)" } ?? ""
                try await plan.run(
                    snapshot, into: config, ImportOptions(replace: true, prefix: scope, replaceSchemas: scope == .root), store: store, output: output,
                    sealedFrom: (config, target, global),
                    what: "roll\(described) back to revision \(target)",
                    apply: "discfg rollback \(config) --to-revision \(target)" + (prefix.map { " --prefix \($0)" } ?? ""),
                    action: "rollback"
                ) { "rolled \(config)\(described) back to revision \(target): " + ChangePlan.tally($0) }
            }
        }
    }

    /// The keys under `prefix` as they were at `revision`, read as `export --revision`
    /// reads them; a compacted revision is refused naming the oldest one kept.
    static func snapshot(of config: ConfigName, at revision: Revision, under prefix: KeyPrefix, in store: any ConfigStore) async throws -> ConfigSnapshot {
        var items: [ConfigSnapshot.Entry] = []
        do {
            for try await page in try await store.exportPages(config, maxBytes: Limits.maxPageBytes, atRevision: revision) {
                items += page.filter { prefix.contains($0.key) }
            }
        } catch let error as DiscfgError where error.code == .compacted {
            throw DiscfgError(
                .compacted,
                "config \"\(config)\" no longer keeps revision \(revision) (its history was compacted), so it cannot be read as it was then: \(error.message)",
                field: "--to-revision"
            )
        }
        return ConfigSnapshot(items: items)
    }
}
