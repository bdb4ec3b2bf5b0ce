import DiscfgAWS
import DiscfgCore
import DiscfgSecrets
import Foundation

extension GlobalOptions {
    /// The keyring this command opens secrets with: local key files, and KMS through
    /// the AWS flags and credential chain.
    ///
    /// Every command that opens or seals a secret, or unwraps a data key, gets its keyring
    /// here, so this is where such a process stops being dumpable, before it holds any
    /// of them (``CoreDumps``).
    func keyring() throws -> SecretKeyring {
        CoreDumps.disable()
        return SecretKeyring(resolver: try keyResolver())
    }

    /// The secrets of `config` in `store`, sealed with this command's keyring.
    func secrets(_ store: any ConfigStore, _ config: ConfigName) throws -> ConfigSecrets {
        ConfigSecrets(store: store, config: config, keyring: try keyring())
    }

    /// Opens the secrets of `config` in `store`, reading its settings once; a value sealed
    /// in the first format is opened with a warning saying how to seal it again.
    func secretReader(_ store: any ConfigStore, _ config: ConfigName, output: Output) throws -> SecretReader {
        SecretReader(try secrets(store, config)) { output.warn($0) }
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

extension SecretReader {
    /// `event` with its secrets opened, for a history or a stream of many values: a
    /// secret that does not open for its own item (written back by someone without the
    /// key, or a seal whose predicted create revision another write took; see
    /// ``ConfigSecrets/set(_:to:options:)``) stays sealed, shown as `(secret)`, with a
    /// warning naming it, and does not end the listing. Anything else (no key, no
    /// permission) still fails the command.
    func revealedKeepingUnopened(_ event: Event, warn: @Sendable (String) -> Void) async throws -> Event {
        var open = event
        if let item = event.item { open.item = try await revealedKeepingUnopened(item, revision: event.revision, warn: warn) }
        if let previous = event.prevItem { open.prevItem = try await revealedKeepingUnopened(previous, revision: event.revision, warn: warn) }
        return open
    }

    private func revealedKeepingUnopened(_ item: Item, revision: Revision, warn: @Sendable (String) -> Void) async throws -> Item {
        do {
            return try await revealed(item)
        } catch let error as DiscfgError where error.code == .invalidArgument && error.field == "value" {
            warn("\(error.message) (revision \(revision); shown sealed)")
            return item
        }
    }
}
