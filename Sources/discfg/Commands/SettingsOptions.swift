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

    @Option(name: .long, help: ArgumentHelp(
        "Publish the config's snapshot to s3://BUCKET/PREFIX after each change (on AWS, through the stream handler); 'none' stops.",
        valueName: "s3-url"
    ))
    var publish: String?

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
        if let publish {
            let trimmed = publish.trimmingCharacters(in: .whitespaces)
            patch.publish = trimmed.lowercased() == "none" ? "" : try SnapshotDestination(parsing: trimmed, field: "--publish").description
        }
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
