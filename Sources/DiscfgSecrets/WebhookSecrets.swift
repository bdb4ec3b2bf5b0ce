import DiscfgCore
import Foundation

/// Webhook secrets kept encrypted at rest: sealed by the client with the config's KMS
/// key, opened by the stream function, which needs `kms:Decrypt` for that context only.
///
/// A sealed secret is `kms-sealed:` and the KMS blob in base64. Its encryption context,
/// `{discfg:config, discfg:webhook: URL}`, ties it to one config's webhook, and tells it
/// apart from the config's data keys, which the stream function cannot open.
public enum WebhookSecrets {
    /// What a sealed secret starts with.
    public static let prefix = "kms-sealed:"

    /// The encryption context of `url`'s secret in `config`.
    public static func context(config: ConfigName, url: String) -> [String: String] {
        ["discfg:config": config.rawValue, "discfg:webhook": url]
    }

    /// Whether `secret` is sealed.
    public static func isSealed(_ secret: String) -> Bool { secret.hasPrefix(prefix) }

    /// `targets` with every plain webhook secret sealed by `key`.
    public static func sealed(_ targets: [NotificationTarget], config: ConfigName, key: KMSKey) async throws -> [NotificationTarget] {
        var result: [NotificationTarget] = []
        for target in targets {
            guard case .webhook(let url, let secret?) = target, !isSealed(secret) else {
                result.append(target)
                continue
            }
            let blob = try await key.encrypt(Data(secret.utf8), context: context(config: config, url: url))
            result.append(.webhook(url: url, secret: prefix + blob.base64EncodedString()))
        }
        return result
    }

    /// The secret as set: `secret` itself when it is not sealed, else opened with the KMS
    /// key `encryption` names.
    ///
    /// - Throws: `invalidArgument` when the config has no KMS key or the blob is not
    ///   base64; KMS's refusal, naming the webhook.
    public static func open(_ secret: String, url: String, config: ConfigName, encryption: EncryptionSettings?, resolver: any KeyResolver) async throws -> String {
        guard isSealed(secret) else { return secret }
        guard let keyName = encryption?.key, KMSKey.parse(keyName) != nil, let key = try resolver.key(named: keyName) as? KMSKey else {
            throw DiscfgError.invalid("notify", "the secret of webhook \(url) is sealed, but config \"\(config)\" names no KMS key to open it")
        }
        guard let blob = Data(base64Encoded: String(secret.dropFirst(prefix.count))) else {
            throw DiscfgError.invalid("notify", "the sealed secret of webhook \(url) is not base64")
        }
        let plain = try await key.decrypt(blob, context: context(config: config, url: url), naming: "the secret of webhook \(url)")
        return String(decoding: plain, as: UTF8.self)
    }
}
