import ArgumentParser
import DiscfgCore
import DiscfgDynamoDB
import DiscfgSecrets
import DiscfgWire
import Foundation

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
          discfg update myapp --publish s3://acme-config/prod  # after each change
          discfg update myapp --publish none           # stop publishing
          discfg update myapp \\
              --encryption file:///home/me/.config/discfg/keys/default.key
          discfg update myapp --encryption kms://us-east-1/alias/myapp  # keys to KMS

        Notifications are sent by the stream function of the AWS deployment \
        (deploy/README.md), once per target and in revision order. Webhooks carry \
        X-Discfg-Signature: sha256=HEX, the HMAC-SHA256 of \
        "<X-Discfg-Timestamp>.<body>".
        """
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
    @OptionGroup var settings: SettingsOptions
    @OptionGroup var capacity: CapacityOptions
    @Argument(help: PositionalArguments.help("[CONFIG] [SETTINGS-JSON]"), completion: ShellCompletion.configs) var arguments: [String] = []

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
                throw usage("nothing to update: pass --history, --description, --quota, --notify, --publish, --encryption, settings JSON or --read-capacity/--write-capacity")
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
                if patch.publish != nil { line += ", publish: " + (info.settings.publish?.description ?? "nowhere") }
                if patch.alarms != nil || patch.raiseAlarms != nil || patch.disarmAlarms != nil {
                    line += ", alarms: " + (info.settings.alarms.isEmpty ? "none" : info.settings.alarms.sorted().map(\.name).joined(separator: ", "))
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
