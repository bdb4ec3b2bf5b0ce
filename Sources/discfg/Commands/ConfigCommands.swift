import ArgumentParser
import DiscfgCore
import DiscfgDynamoDB
import DiscfgSecrets
import DiscfgWire
import Foundation

struct CreateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create a config.",
        usage: "discfg create [<options>] <name> [<settings-json>]",
        discussion: """
        A config is a named set of keys, e.g. one per application and environment. \
        On a dynamodb:// store the table is created first if it is missing \
        (on-demand, or provisioned with --read-capacity and --write-capacity).

        --from SOURCE fills the new config with SOURCE's keys (or those under \
        --prefix) as they are now, as 'discfg promote' copies them: one change, \
        with its -m message; a whole config brings its schemas. Secrets are opened \
        from SOURCE and sealed again for the new config, which needs --encryption \
        for them. If the copy fails the new config is deleted again, so nothing is \
        left half made; a name already taken, or a SOURCE that does not exist, is \
        refused before anything is created.

        Examples:
          discfg create myapp-prod
          discfg create myapp-dev --history 7d --description "dev settings"
          discfg create myapp '{"history": "1000"}'
          discfg create myapp-prod --from myapp-staging -m "first release"
          discfg create features-copy --from myapp --prefix /features/
          discfg create myapp --store dynamodb://us-east-1/discfg \\
              --read-capacity 5 --write-capacity 5
        """
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
    @OptionGroup var settings: SettingsOptions
    @OptionGroup var capacity: CapacityOptions
    @OptionGroup var reason: ChangeOptions
    @Option(name: .long, help: ArgumentHelp("Fill the new config with this config's keys, as one change (see above).", valueName: "source"),
            completion: ShellCompletion.configs)
    var from: String?
    @Option(name: .long, help: ArgumentHelp("With --from: copy only the keys under this prefix.", valueName: "prefix"),
            transform: { try KeyPrefix($0) })
    var prefix: KeyPrefix?
    @Argument(help: "The config's name: letters, digits, '_', '.', '-'.") var name: String
    @Argument(help: "Settings as JSON, as the original discfg took them.") var settingsJSON: String?

    func run() async throws {
        try await reason.attributed {
            try await global.run("create") { output in
                let name = try ConfigName(name)
                if prefix != nil, from == nil { throw usage("--prefix applies to --from: it bounds the keys copied from the source", field: "--prefix") }
                if from == nil, reason.message != nil { throw usage("-m applies to --from: a config made empty records no change", field: "--message") }
                // Reads do not create a store: one made by create is one with no source in it.
                let store = try from == nil ? global.makeStore(tableCapacity: capacity.capacity()) : global.openStore()
                // The source is read, and what it needs checked, before anything is created.
                var source: PromoteCommand.Source?
                if let from { source = try await readSource(ConfigName(from), for: name, in: store) }
                var patch = try settings.patch(json: settingsJSON)
                settings.warnOfArgumentSecret(output)
                if let key = settings.encryption {
                    patch.encryption = try await global.keyring().newEncryption(keyName: KeyName.normalized(key), config: name)
                }
                if let source, source.holdsSecrets, patch.encryption == nil {
                    throw DiscfgError.invalid(
                        "--encryption",
                        "\(source.config)\(prefix.map { " \($0)" } ?? "") holds secrets, and config \(name) would have no encryption key to seal them with: add --encryption (the key \(source.config) uses, or another); nothing was created"
                    )
                }
                patch = try await global.sealingWebhookSecrets(patch, config: name, current: nil, output: output)
                let info = try await store.createConfig(name, settings: patch.applied(to: ConfigSettings()))
                let created = "created config \(name) (history: \(info.settings.history.text)" + (info.settings.quotaBytes.map { ", quota: \(ByteSize.text($0))" } ?? "") + ")"
                if let source {
                    try await copy(source, into: name, store: store, output: output, created: created)
                    return
                }
                var envelope = Envelope(action: "create")
                envelope.config = name.rawValue
                envelope.configInfo = ConfigDocument(info.redacted)
                output.emit(envelope) { created }
            }
        }
    }

    /// The source of `--from`, read now: refused when it names the config being made.
    private func readSource(_ source: ConfigName, for name: ConfigName, in store: any ConfigStore) async throws -> PromoteCommand.Source {
        guard source != name else { throw usage("create --from copies another config into the new one; \(name) was named twice", field: "--from") }
        return try await PromoteCommand.Source.read(source, prefix: prefix, in: store)
    }

    /// Copies `source` into the config just created, as `promote` does; when the copy
    /// fails, deletes the config again, so a failed `create --from` leaves nothing.
    private func copy(_ source: PromoteCommand.Source, into name: ConfigName, store: any ConfigStore, output: Output, created: String) async throws {
        do {
            try await source.promote(
                into: name, store: store, global: global, plan: PlanOptions.parse([]), output: output,
                apply: "discfg create \(name) --from \(source.config)", action: "create"
            ) { "\(created) from \(source.described): " + ChangePlan.tally($0) }
        } catch {
            let removed: Bool
            do {
                try await store.deleteConfig(name)
                removed = true
            } catch {
                removed = false
            }
            let failure = error as? DiscfgError ?? DiscfgError(.internal, String(describing: error))
            let outcome = removed ? "so it was deleted again; nothing was created" : "and deleting it again failed too: delete it with 'discfg delete-config \(name)'"
            throw DiscfgError(failure.code, "config \(name) was created, but copying \(source.config) into it failed (\(failure.message)), \(outcome)", field: failure.field)
        }
    }
}

struct DeleteConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete-config",
        abstract: "Delete a config with all its keys and history.",
        usage: "discfg delete-config [<options>] <name>",
        discussion: "Asks for confirmation unless --yes is given. This cannot be undone; 'discfg export' first to keep a copy."
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
    @Flag(name: [.short, .long], help: "Do not ask for confirmation.") var yes = false
    @Argument(help: "The config to delete.", completion: ShellCompletion.configs) var name: String

    func run() async throws {
        try await global.run("delete-config") { output in
            let name = try ConfigName(name)
            let store = try global.openStore()
            let info = try await store.configInfo(name)
            try Confirmation.require("delete config \(name) (revision \(info.revision)) with all its keys and history", yes: yes)
            try await store.deleteConfig(name)
            var envelope = Envelope(action: "delete-config")
            envelope.config = name.rawValue
            output.emit(envelope) { "deleted config \(name)" }
        }
    }
}

struct ConfigsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "configs", abstract: "List configs.", usage: "discfg configs [<options>]")

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

    func run() async throws {
        try await global.run("configs") { output in
            let configs = try await global.openStore().listConfigs()
            let selected = try? global.selectedConfig()
            var envelope = Envelope(action: "configs")
            envelope.configs = configs.map { ConfigDocument($0.redacted) }
            output.emit(envelope) {
                guard !configs.isEmpty else { return "no configs yet; create one with 'discfg create NAME'" }
                let now = Date()
                return Show.table(
                    ["", "NAME", "KEYS", "REVISION", "MODIFIED", "HISTORY"],
                    configs.map { info in
                        [info.name == selected?.name ? "*" : "", info.name.rawValue, info.keyCount.map(String.init) ?? "?", String(info.revision.rawValue),
                         Show.relative(info.modifiedAt, now: now), info.settings.history.text]
                    }
                )
            }
        }
    }
}

struct UseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "use",
        abstract: "Use a config for commands run in this directory (writes .discfg).",
        usage: "discfg use [<options>] <name>",
        discussion: "Then 'discfg set KEY VALUE' and 'discfg get KEY' need no config name here or in subdirectories."
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
    @Argument(help: "The config to use.", completion: ShellCompletion.configs) var name: String

    func run() async throws {
        try await global.run("use") { output in
            let name = try ConfigName(name)
            _ = try await global.openStore().configInfo(name)
            let path = try ConfigSelection.write(name)
            var envelope = Envelope(action: "use")
            envelope.currentDiscfg = name.rawValue
            output.emit(envelope) { "using config \(name) (saved in \(path))" }
        }
    }
}

struct WhichCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "which",
        abstract: "Show which config commands here use, and why.",
        usage: "discfg which [<options>]",
        discussion: "--config, then DISCFG_CONFIG, then the nearest .discfg file ('discfg use') in this directory or a parent; a context's config comes before .discfg when --context or DISCFG_CONTEXT names it, after it otherwise ('discfg context show')."
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

    func run() async throws {
        try await global.run("which") { output in
            guard let selection = try global.selectedConfig() else {
                throw DiscfgError(.configNotFound, "no config selected here; run 'discfg use NAME' or pass --config NAME", field: "config")
            }
            var envelope = Envelope(action: "which")
            envelope.currentDiscfg = selection.name.rawValue
            output.emit(envelope) { "\(selection.name) (from \(selection.source))" }
        }
    }
}

struct InfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show a config's revision, times and settings.",
        usage: "discfg info [<options>] [<name>]"
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
    @Argument(help: ArgumentHelp("The config (default: the selected one).", discussion: PositionalArguments.rule), completion: ShellCompletion.configs) var name: String?

    func run() async throws {
        try await global.run("info") { output in
            let name = try PositionalArguments(arguments: name.map { [$0] } ?? [], selected: global.selectedConfig()).configOnly()
            let store = try global.openStore()
            let info = try await store.configInfo(name)
            var envelope = Envelope(action: "info")
            envelope.config = name.rawValue
            envelope.revision = info.revision
            envelope.configInfo = ConfigDocument(info.redacted)
            if let dynamo = store as? DynamoDBStore { envelope.table = try await dynamo.table.describe().map(TableDocument.init) }
            let tableRows = envelope.table?.rows.map { ["table " + $0[0], $0[1]] } ?? []
            output.emit(envelope) {
                let now = Date()
                var rows: [[String]] = [
                    ["config", name.rawValue],
                    ["revision", String(info.revision.rawValue)],
                    ["keys", info.keyCount.map(String.init) ?? "not counted (a DynamoDB config from before discfg counted keys)"],
                    ["size", info.byteCount.map { "\(ByteSize.text($0)) of key paths and values" } ?? "not counted (a DynamoDB config from before discfg counted bytes; setting a quota counts it)"],
                    ["quota", info.settings.quotaBytes.map { quota in
                        ByteSize.text(quota) + (info.byteCount.map { " (\(Int((Double($0) / Double(quota) * 100).rounded()))% used)" } ?? "")
                    } ?? "none"],
                ]
                if !info.settings.alarms.isEmpty {
                    let names = info.settings.alarms.sorted().map(\.name).joined(separator: ", ")
                    rows.append(["alarms", "\(names) raised: keys are not written until disarmed ('discfg update \(name) '{\"alarms\": []}'')"])
                }
                rows += [
                    ["modified", "\(TimestampFormat.string(from: info.modifiedAt)) (\(Show.relative(info.modifiedAt, now: now)))"],
                    ["created", "\(TimestampFormat.string(from: info.createdAt)) (\(Show.relative(info.createdAt, now: now)))"],
                    ["history", info.settings.history.text + (info.compactedRevision > .zero ? " (kept after revision \(info.compactedRevision))" : "")],
                ]
                if let description = info.settings.description { rows.append(["description", description]) }
                for target in info.settings.notify { rows.append(["notify", target.description]) }
                if let encryption = info.settings.encryption {
                    rows.append(["encryption", "\(encryption.key) (data key \(encryption.current); \(encryption.dataKeys.count) kept)"])
                }
                rows += tableRows
                return rows.map { "\($0[0].padding(toLength: 15, withPad: " ", startingAt: 0))\($0[1])" }.joined(separator: "\n")
            }
        }
    }
}
