import ArgumentParser
import DiscfgCore
import DiscfgWire
import Foundation

struct DeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete a key, or every key under a prefix.",
        usage: "discfg delete [<options>] [<config>] <key>",
        discussion: """
        With --prefix the target is a directory such as /db/, and every key under \
        it is deleted in one step, after a confirmation unless --yes is given.

        Examples:
          discfg delete mykey
          discfg delete mykey --if-version 3
          discfg delete --prefix /feature-flags/ --yes
          discfg delete --prefix /feature-flags/ --dry-run
          discfg delete --prefix /feature-flags/ --if-revision 41 --yes

        \(ExitStatus.help)
        """
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
    @OptionGroup var reason: ChangeOptions
    @OptionGroup var condition: ConditionOptions
    @OptionGroup var plan: PlanOptions

    @Flag(name: .long, help: "Delete every key under the prefix (a directory such as /db/).")
    var prefix = false

    @Flag(name: [.short, .long], help: "With --prefix: do not ask for confirmation.")
    var yes = false

    @Argument(help: PositionalArguments.help("[CONFIG] KEY (or PREFIX with --prefix)"), completion: ShellCompletion.configOrKey) var arguments: [String] = []

    func run() async throws {
        try await reason.attributed {
            try await global.run("delete") { output in
                let (config, target) = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configAndTarget(what: prefix ? "PREFIX" : "KEY")
                let store = try global.openStore()
                if prefix {
                    let conditions = try condition.conditions()
                    guard conditions.isEmpty else { throw usage("conditions apply to one key; they cannot be used with --prefix", field: "--prefix") }
                    let keyPrefix = try KeyPrefix(target)
                    if plan.dryRun || plan.ifRevision != nil {
                        // The plan and its revision: the prefix replaced by nothing, as one change.
                        if !plan.dryRun { try Confirmation.require("delete every key under \(keyPrefix) in config \(config)", yes: yes) }
                        try await plan.run(
                            ConfigSnapshot(items: []), into: config, ImportOptions(replace: true, prefix: keyPrefix), store: store, output: output,
                            what: "delete every key under \(keyPrefix)", apply: "discfg delete \(config) \(keyPrefix) --prefix --yes", action: "delete"
                        ) { result in "deleted \(result.events.count) key\(result.events.count == 1 ? "" : "s") under \(keyPrefix) (revision \(result.revision))" }
                        return
                    }
                    let count = try await Self.count(under: keyPrefix, in: config, store: store)
                    guard count > 0 else { throw DiscfgError(.keyNotFound, "no keys under \(keyPrefix) in config \(config)", field: "prefix") }
                    try Confirmation.require("delete \(count) key\(count == 1 ? "" : "s") under \(keyPrefix) in config \(config)", yes: yes)
                    let events = try await store.deletePrefix(keyPrefix, in: config)
                    var envelope = Envelope(action: "delete")
                    envelope.config = config.rawValue
                    envelope.events = events.map(EventDocument.init)
                    envelope.revision = events.last?.revision
                    output.emit(envelope) { "deleted \(events.count) key\(events.count == 1 ? "" : "s") under \(keyPrefix)" + (events.last.map { " (revision \($0.revision))" } ?? "") }
                } else {
                    guard !plan.dryRun, plan.ifRevision == nil else {
                        throw usage("--dry-run and --if-revision plan a delete of a prefix (with --prefix); one key's delete is guarded by --if-version or --if-mod-revision", field: "--dry-run")
                    }
                    let key = try Key(target)
                    let change = try await store.delete(key, in: config, conditions: condition.conditions())
                    output.emit(Envelope(action: "delete", config: config, change: change)) { "deleted \(key) (revision \(change.revision))" }
                }
            }
        }
    }

    private static func count(under prefix: KeyPrefix, in config: ConfigName, store: any ConfigStore) async throws -> Int {
        var count = 0
        var cursor: String?
        repeat {
            let page = try await store.list(in: config, ListQuery(prefix: prefix, recursive: true, limit: Limits.maxPageSize, cursor: cursor))
            count += page.items.count
            cursor = page.nextCursor
        } while cursor != nil
        return count
    }
}
