import ArgumentParser
import DiscfgCore
import DiscfgDynamoDB
import DiscfgSecrets
import Foundation

/// Settings flags shared by `create` and `update`.
struct SettingsOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("History to keep: Nd (days), N (last N changes) or forever. Default 30d.", valueName: "retention"))
    var history: String?

    @Option(name: .long, help: "What the config is for.")
    var description: String?

    @Option(name: .long, help: ArgumentHelp(
        "The most bytes of key paths and values the config may hold, such as 512MiB or 2GB (1 byte to 1 PiB); a change past it is refused and deletes always pass. History is not counted. 'none' removes it. Default: none.",
        valueName: "size"
    ))
    var quota: String?

    @Option(name: .long, help: ArgumentHelp(
        "Announce changes (on AWS, through the stream handler) to: eventbridge, eventbridge:BUS or an https:// webhook. Repeatable; 'none' clears.",
        valueName: "target"
    ))
    var notify: [String] = []

    @Option(name: .customLong("webhook-secret"), help: ArgumentHelp("Sign webhook deliveries with HMAC-SHA256 using this secret. Prefer --webhook-secret-file: any user of the machine can read a command line.", valueName: "secret"))
    var webhookSecret: String?

    @Option(name: .customLong("webhook-secret-file"), help: ArgumentHelp("Read the webhook secret from a file (first line).", valueName: "file"))
    var webhookSecretFile: String?

    @Option(name: .long, help: ArgumentHelp(
        "Encrypt secrets with this key: file:///PATH (discfg key init), kms://REGION/alias/NAME, kms://REGION/KEY-ID or a KMS key ARN.",
        valueName: "key"
    ))
    var encryption: String?

    @Flag(name: .customLong("allow-http-webhooks"), help: "Accept plain http:// webhooks (the function needs DISCFG_WEBHOOK_ALLOW=http too).")
    var allowHTTPWebhooks = false

    @Flag(name: .customLong("allow-private-webhooks"), help: "Accept webhooks on loopback, private or link-local addresses (DISCFG_WEBHOOK_ALLOW=private on the function).")
    var allowPrivateWebhooks = false

    /// The patch the flags and an optional JSON argument (`{"history": "7d"}`) describe.
    func patch(json: String?) throws -> ConfigSettingsPatch {
        var patch = ConfigSettingsPatch()
        if let json {
            do {
                patch = try JSONDecoder().decode(ConfigSettingsPatch.self, from: Data(json.utf8))
            } catch let error as DiscfgError {
                throw error
            } catch {
                throw usage("settings \"\(json)\" are not a JSON object such as {\"history\": \"7d\", \"description\": \"...\"}", field: "settings")
            }
        }
        // People type "30D" or " forever"; the API takes the exact form.
        if let history { patch.history = try HistoryRetention(parsing: history.trimmingCharacters(in: .whitespaces).lowercased()) }
        if let description { patch.description = description }
        if let quota {
            patch.quotaBytes = quota.trimmingCharacters(in: .whitespaces).lowercased() == "none"
                ? ConfigSettingsPatch.removeQuota
                : Int(try ByteSize.parse(quota.trimmingCharacters(in: .whitespaces), as: NumberField.quotaBytes.named("--quota")))
        }
        if let targets = try notificationTargets() { patch.notify = targets }
        try patch.check(WebhookPolicy(allowHTTP: allowHTTPWebhooks, allowPrivate: allowPrivateWebhooks))
        return patch
    }

    /// The targets `--notify` names, or nil when it is not given.
    private func notificationTargets() throws -> [NotificationTarget]? {
        let secret = try self.secret()
        guard !notify.isEmpty else {
            if secret != nil { throw usage("--webhook-secret needs a webhook: --notify https://…", field: "--webhook-secret") }
            return nil
        }
        if notify.map({ $0.lowercased() }) == ["none"] { return [] }
        let targets = try notify.map { text -> NotificationTarget in
            guard text.lowercased() != "none" else { throw usage("--notify none clears the targets and cannot be combined with others", field: "--notify") }
            return try NotificationTarget(parsing: text, secret: secret)
        }
        if secret != nil, !targets.contains(where: { if case .webhook = $0 { true } else { false } }) {
            throw usage("--webhook-secret needs a webhook: --notify https://…", field: "--webhook-secret")
        }
        guard Set(targets).count == targets.count else { throw usage("a --notify target is named twice", field: "--notify") }
        return targets
    }

    /// The warning for a webhook secret given as an argument (``ArgumentSecrets``).
    func warnOfArgumentSecret(_ output: Output) {
        if webhookSecret != nil {
            ArgumentSecrets.warn("--webhook-secret", instead: "give it with --webhook-secret-file FILE instead", output: output)
        }
    }

    private func secret() throws -> String? {
        switch (webhookSecret, webhookSecretFile) {
        case (nil, nil): return nil
        case (let secret?, nil): return secret
        case (nil, let path?):
            let data: Data
            do {
                data = try ValueInput.readFile(path, field: "--webhook-secret-file", limit: 64 * 1024)
            } catch let error as DiscfgError {
                throw DiscfgError(error.code, "the webhook secret file: \(error.message)", field: error.field)
            }
            let line = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
            guard !line.isEmpty else { throw usage("the webhook secret file \(path) is empty", field: "--webhook-secret-file") }
            return line
        default: throw usage("give --webhook-secret or --webhook-secret-file, not both", field: "--webhook-secret")
        }
    }
}

struct CreateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create a config.",
        usage: "discfg create [<options>] <name> [<settings-json>]",
        discussion: """
        A config is a named set of keys, e.g. one per application and environment. \
        On a dynamodb:// store the table is created first if it is missing \
        (on-demand, or provisioned with --read-capacity and --write-capacity).

        Examples:
          discfg create myapp-prod
          discfg create myapp-dev --history 7d --description "dev settings"
          discfg create myapp '{"history": "1000"}'
          discfg create myapp --store dynamodb://us-east-1/discfg \\
              --read-capacity 5 --write-capacity 5
        """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var settings: SettingsOptions
    @OptionGroup var capacity: CapacityOptions
    @Argument(help: "The config's name: letters, digits, '_', '.', '-'.") var name: String
    @Argument(help: "Settings as JSON, as the original discfg took them.") var settingsJSON: String?

    func run() async throws {
        try await global.run("create") { output in
            let name = try ConfigName(name)
            var patch = try settings.patch(json: settingsJSON)
            settings.warnOfArgumentSecret(output)
            if let key = settings.encryption {
                patch.encryption = try await global.keyring().newEncryption(keyName: KeyName.normalized(key), config: name)
            }
            patch = try await global.sealingWebhookSecrets(patch, config: name, current: nil, output: output)
            let info = try await global.openStore(tableCapacity: capacity.capacity()).createConfig(name, settings: patch.applied(to: ConfigSettings()))
            var envelope = Envelope(action: "create")
            envelope.config = name.rawValue
            envelope.configInfo = ConfigDocument(info.redacted)
            output.emit(envelope) {
                "created config \(name) (history: \(info.settings.history.text)" + (info.settings.quotaBytes.map { ", quota: \(ByteSize.text($0))" } ?? "") + ")"
            }
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

    @OptionGroup var global: GlobalOptions
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

    @OptionGroup var global: GlobalOptions

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

    @OptionGroup var global: GlobalOptions
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
        discussion: "--config, then DISCFG_CONFIG, then the nearest .discfg file ('discfg use') in this directory or a parent."
    )

    @OptionGroup var global: GlobalOptions

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

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The config (default: the selected one).", completion: ShellCompletion.configs) var name: String?

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

struct UpdateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Change a config's settings.",
        usage: "discfg update [<options>] [<config>] [<settings-json>]",
        discussion: """
        Examples:
          discfg update myapp --history 90d
          discfg update --description "payments service"  # the selected config
          discfg update myapp '{"history": "forever"}'
          discfg update --read-capacity 10 --write-capacity 5  # a dynamodb:// table
          discfg update myapp --notify eventbridge     # to the default event bus
          discfg update myapp --notify https://hooks.example.com/discfg \\
              --webhook-secret-file hook.key
          discfg update myapp --notify none            # stop notifying
          discfg update myapp \\
              --encryption file:///home/me/.config/discfg/keys/default.key
          discfg update myapp --encryption kms://us-east-1/alias/myapp  # keys to KMS

        Notifications are sent by the stream function of the AWS deployment \
        (deploy/README.md), once per target and in revision order. Webhooks carry \
        X-Discfg-Signature: sha256=HEX, the HMAC-SHA256 of \
        "<X-Discfg-Timestamp>.<body>".
        """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var settings: SettingsOptions
    @OptionGroup var capacity: CapacityOptions
    @Argument(help: "[CONFIG] [SETTINGS-JSON]", completion: ShellCompletion.configs) var arguments: [String] = []

    func run() async throws {
        try await global.run("update") { output in
            var arguments = arguments
            var json: String?
            if let last = arguments.last, last.hasPrefix("{") { json = arguments.removeLast() }
            let name = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configOnly()
            var patch = try settings.patch(json: json)
            settings.warnOfArgumentSecret(output)
            let capacity = try capacity.capacity()
            guard !patch.isEmpty || capacity != nil || settings.encryption != nil else {
                throw usage("nothing to update: pass --history, --description, --quota, --notify, --encryption, settings JSON or --read-capacity/--write-capacity")
            }
            let store = try global.openStore(tableCapacity: capacity)
            let needsCurrent = settings.encryption != nil || patch.notify?.isEmpty == false
            let currentSettings = needsCurrent ? try await store.configInfo(name).settings : nil
            let current = currentSettings?.encryption
            if let key = settings.encryption {
                let keyName = try KeyName.normalized(key)
                let keyring = try global.keyring()
                if let existing = current {
                    guard existing.key != keyName else { throw usage("config \(name) already encrypts with \(keyName)", field: "--encryption") }
                    patch.encryption = try await keyring.rewrapped(existing, under: keyName, config: name)
                } else {
                    patch.encryption = try await keyring.newEncryption(keyName: keyName, config: name)
                }
            }
            // A config given a key seals the webhook secrets it already had, too.
            if patch.encryption != nil, patch.notify == nil, let targets = currentSettings?.notify, targets.contains(where: Self.hasPlainSecret) {
                patch.notify = targets
            }
            patch = try await global.sealingWebhookSecrets(patch, config: name, current: current, output: output)
            var envelope = Envelope(action: "update")
            envelope.config = name.rawValue
            var lines: [String] = []
            if let capacity, let dynamo = store as? DynamoDBStore {
                _ = try await dynamo.configInfo(name)
                try await dynamo.table.updateCapacity(capacity, progress: dynamo.configuration.progress)
                envelope.table = try await dynamo.table.describe().map(TableDocument.init)
                lines.append("table \(dynamo.table.name) is now \(capacity)")
            }
            if !patch.isEmpty {
                let info = try await store.updateConfig(name, patch)
                envelope.configInfo = ConfigDocument(info.redacted)
                var line = "updated config \(name) (history: \(info.settings.history.text)"
                if patch.quotaBytes != nil { line += ", quota: " + (info.settings.quotaBytes.map(ByteSize.text) ?? "none") }
                if patch.notify != nil {
                    line += info.settings.notify.isEmpty ? ", notify: nobody" : ", notify: " + info.settings.notify.map(\.description).joined(separator: ", ")
                }
                if let encryption = patch.encryption { line += ", encryption: \(encryption.key)" }
                lines.append(line + ")")
            }
            output.emit(envelope) { lines.joined(separator: "\n") }
        }
    }
}

extension UpdateCommand {
    /// A webhook whose secret is stored as given (not sealed, not hidden from this caller).
    static func hasPlainSecret(_ target: NotificationTarget) -> Bool {
        guard case .webhook(_, let secret?) = target else { return false }
        return !WebhookSecrets.isSealed(secret) && secret != NotificationTarget.redactedSecret
    }
}

struct VersionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Print discfg's version, and the commit and time a release was built from.",
        usage: "discfg version [<options>]",
        discussion: """
        Prints what 'discfg --version' prints. A release (scripts/release) names the \
        commit and the time it was built from; a build from a work tree says so:
          discfg v0.1.0 (commit 0123456789ab, built 2026-11-26T06:00:00Z)
          discfg v0.1.0 (development build)

        With -f json: action, version, commit (the full hash), built and message; \
        commit and built are null in a development build.
        """
    )

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await global.run("version") { output in
            guard output.format == .json else {
                var envelope = Envelope(action: "version")
                envelope.message = BuildInfo.line
                output.emit(envelope) { BuildInfo.line }
                return
            }
            output.raw(try VersionDocument().json())
        }
    }
}
