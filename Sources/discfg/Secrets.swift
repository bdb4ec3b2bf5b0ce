import DiscfgAWS
import DiscfgCore
import DiscfgSecrets
import Foundation

extension GlobalOptions {
    /// The keyring this command opens secrets with: local key files, and KMS through
    /// the AWS flags and credential chain.
    func keyring() throws -> SecretKeyring {
        SecretKeyring(resolver: try keyResolver())
    }

    /// The secrets of `config` in `store`, sealed with this command's keyring.
    func secrets(_ store: any ConfigStore, _ config: ConfigName) throws -> ConfigSecrets {
        ConfigSecrets(store: store, config: config, keyring: try keyring())
    }

    /// Opens the secrets of `config` in `store`, reading its settings once.
    func secretReader(_ store: any ConfigStore, _ config: ConfigName) throws -> SecretReader {
        SecretReader(try secrets(store, config))
    }

    /// Local key files, and KMS keys through the AWS flags and credential chain.
    func keyResolver() throws -> StandardKeyResolver {
        let credentials = CredentialChain.standard(explicit: try aws.explicitCredentials(), environment: environment, profile: aws.credProfile)
        return StandardKeyResolver(environment: environment, credentials: credentials)
    }

    /// `patch` with its webhook secrets sealed when the config's key (the patch's, or
    /// `current`) is a KMS key; a note when a secret has to stay as given.
    func sealingWebhookSecrets(_ patch: ConfigSettingsPatch, config: ConfigName, current: EncryptionSettings?, output: Output) async throws -> ConfigSettingsPatch {
        guard let notify = patch.notify, notify.contains(where: UpdateCommand.hasPlainSecret) else {
            return patch
        }
        guard let keyName = (patch.encryption ?? current)?.key, KMSKey.parse(keyName) != nil,
              let key = try keyResolver().key(named: keyName) as? KMSKey
        else {
            output.note("the webhook secret is stored as given; with a KMS key (--encryption kms://…) it is kept encrypted at rest")
            return patch
        }
        var sealed = patch
        sealed.notify = try await WebhookSecrets.sealed(notify, config: config, key: key)
        return sealed
    }
}

/// Key names as people type them: a relative `file://` path is made absolute, so the
/// config names the same file from any directory.
enum KeyName {
    static func normalized(_ text: String) throws -> String {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("file://") else {
            try EncryptionSettings.validate(keyName: trimmed)
            return trimmed
        }
        var path = String(trimmed.dropFirst("file://".count))
        if path.hasPrefix("~/") { path = NSHomeDirectory() + path.dropFirst(1) }
        if !path.hasPrefix("/") { path = FileManager.default.currentDirectoryPath + "/" + path }
        let name = "file://" + (path as NSString).standardizingPath
        try EncryptionSettings.validate(keyName: name)
        return name
    }
}

extension Show {
    /// A value for a table cell or a line; a secret shows as `(secret)`.
    static func preview(_ item: Item, limit: Int) -> String {
        item.isSecret ? SecretMarker.masked : preview(item.value, limit: limit)
    }
}
