import ArgumentParser
import DiscfgCore
import DiscfgSecrets
import DiscfgWire
import Foundation

struct KeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Make local encryption keys and rotate a config's data keys.",
        discussion: """
        Secrets (discfg set --secret) are sealed with a data key of their config, \
        which is stored only wrapped by the key the config names: a local key file \
        or an AWS KMS key.

        Examples:
          discfg key init          # writes ~/.config/discfg/keys/default.key
          discfg create myapp \\
              --encryption file://$HOME/.config/discfg/keys/default.key
          discfg create myapp-prod --encryption kms://us-east-1/alias/myapp
          discfg key rotate myapp  # new secrets use a new data key
        """,
        subcommands: [Init.self, Rotate.self]
    )

    struct Init: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "init",
            abstract: "Make a new 256-bit key file, readable by you alone (0600).",
            usage: "discfg key init [<options>] [<path>]",
            discussion: "It is never overwritten. Keep a copy: secrets sealed under it cannot be opened without it."
        )

        @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
        @Argument(help: "Where to write it. Default: $XDG_CONFIG_HOME/discfg/keys/default.key (~/.config/…).") var path: String?

        func run() async throws {
            try await global.run("key-init") { output in
                let target = try path.map { try KeyName.normalized("file://" + $0) }.map { String($0.dropFirst("file://".count)) } ?? Self.defaultPath(global.environment)
                let key = try FileKey.create(at: target)
                var envelope = Envelope(action: "key-init")
                envelope.encryptionKey = key.name
                output.emit(envelope) { "made key file \(target)\nuse it with: discfg create CONFIG --encryption \(key.name)" }
            }
        }

        static func defaultPath(_ environment: [String: String]) -> String {
            let base = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
                ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.config"
            return base + "/discfg/keys/default.key"
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate",
            abstract: "Give a config a new data key for the secrets set from now on.",
            usage: "discfg key rotate [<options>] [<name>]",
            discussion: """
            Older data keys are kept, so secrets sealed under them still open. \
            --reseal seals every secret again under the new data key, one \
            compare-and-swap per key: a secret someone changes meanwhile is left as \
            they set it.

            Each sealed value is bound to its key's create revision and version, so \
            a value written back from history (even after deleting the key) does not \
            open. Secrets sealed by discfg before that binding (the first format) \
            still open, with a warning, until --reseal seals them all again: from \
            then on the config refuses first-format values, and its data keys are \
            named b1, b2, …
            """
        )

        @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
        @OptionGroup var reason: ChangeOptions

        @Flag(name: .long, help: "Seal every secret again under the new data key.")
        var reseal = false

        @Argument(help: ArgumentHelp("The config (default: the selected one).", discussion: PositionalArguments.rule), completion: ShellCompletion.configs) var name: String?

        func run() async throws {
            try await reason.attributed {
                try await global.run("key-rotate") { output in
                    let name = try PositionalArguments(arguments: name.map { [$0] } ?? [], selected: global.selectedConfig()).configOnly()
                    let store = try global.openStore()
                    guard let encryption = try await store.configInfo(name).settings.encryption else {
                        throw usage("config \(name) has no encryption key to rotate: discfg update \(name) --encryption KEY", field: "config")
                    }
                    let keyring = try global.keyring()
                    // --reseal upgrades: values in the first format are sealed again, and the
                    // config refuses them from then on (DataKeyIDs).
                    let rotated = try await keyring.rotated(encryption, config: name, upgrading: reseal)
                    let info = try await store.updateConfig(name, ConfigSettingsPatch(encryption: rotated))
                    var lines = ["config \(name) seals new secrets with data key \(rotated.current) (\(rotated.dataKeys.count) kept)"]
                    if reseal {
                        let (resealed, left) = try await ConfigSecrets(store: store, config: name, keyring: keyring).resealAll()
                        lines.append("sealed \(resealed) secret\(resealed == 1 ? "" : "s") again" + (left > 0 ? "; \(left) changed meanwhile and left as set" : ""))
                    } else if DataKeyIDs.acceptsLegacySeals(rotated) {
                        output.note("config \(name) still opens secrets sealed in discfg's first format, which a writer without the key could roll back; discfg key rotate \(name) --reseal seals them all again and stops accepting that format")
                    }
                    var envelope = Envelope(action: "key-rotate")
                    envelope.config = name.rawValue
                    envelope.configInfo = ConfigDocument(info.redacted)
                    output.emit(envelope) { lines.joined(separator: "\n") }
                }
            }
        }
    }
}
