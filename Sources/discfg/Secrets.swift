import DiscfgAWS
import DiscfgCore
import DiscfgSecrets
import Foundation

extension GlobalOptions {
    /// The keyring this command opens secrets with: local key files, and KMS through
    /// the AWS flags and credential chain.
    func keyring() throws -> SecretKeyring {
        let credentials = CredentialChain.standard(explicit: try aws.explicitCredentials(), environment: environment, profile: aws.credProfile)
        return SecretKeyring(resolver: StandardKeyResolver(environment: environment, credentials: credentials))
    }
}

/// One config's secrets as the CLI writes and reads them: sealed here, never by a server.
struct ConfigSecrets {
    let store: any ConfigStore
    let config: ConfigName
    let keyring: SecretKeyring

    /// The most times a secret is re-sealed because its key changed between the read of
    /// its version and the write.
    static let attempts = 16

    /// Sets `key` to `value`, sealed for the version the write creates.
    ///
    /// The new version is the current one plus one, so the write is conditional on the
    /// current version; when another writer gets in between, the value is sealed again.
    /// The caller's own conditions are kept, and their failure is reported as usual.
    func set(_ key: Key, to value: Data, options: SetOptions) async throws -> Event {
        let info = try await store.configInfo(config)
        guard let encryption = info.settings.encryption else {
            throw DiscfgError.invalid(
                "secret",
                "config \"\(config)\" has no encryption key: give it one with discfg update \(config) --encryption file:///PATH (discfg key init) or kms://REGION/alias/NAME"
            )
        }
        for _ in 1...Self.attempts {
            let current = try await store.get(key, in: config)
            let version = current?.version ?? 0
            let sealed = try await keyring.seal(
                value, contentType: options.contentType,
                binding: SecretBinding(config: config, key: key, version: version + 1), encryption: encryption
            )
            var sealedOptions = options
            sealedOptions.contentType = SecretMarker.contentType
            sealedOptions.conditions.append(.version(version))
            do {
                return try await store.set(key, to: sealed, in: config, options: sealedOptions)
            } catch let error as DiscfgError where error.code == .conditionFailed {
                // Another change came first: retry only if the caller's conditions still hold.
                guard options.conditions.allSatisfy({ $0.holds(for: error.currentItem) }) else { throw error }
            }
        }
        throw DiscfgError(.unavailable, "secret \(key) kept changing while it was being sealed (\(Self.attempts) tries); try again")
    }

    /// The value of a secret item of this config, and its own content type.
    func open(_ item: Item, checkingVersion: Bool = true) async throws -> (value: Data, contentType: String?) {
        let info = try await store.configInfo(config)
        return try await keyring.open(item, in: config, encryption: info.settings.encryption, checkingVersion: checkingVersion)
    }

    /// `item` with its value opened when it is a secret.
    func revealed(_ item: Item) async throws -> Item {
        try await revealed([item])[0]
    }

    /// `items` with every secret opened; the config's settings are read once.
    func revealed(_ items: [Item], checkingVersion: Bool = true) async throws -> [Item] {
        guard items.contains(where: \.isSecret) else { return items }
        let encryption = try await store.configInfo(config).settings.encryption
        var result: [Item] = []
        result.reserveCapacity(items.count)
        for item in items {
            guard item.isSecret else {
                result.append(item)
                continue
            }
            var open = item
            (open.value, open.contentType) = try await keyring.open(item, in: config, encryption: encryption, checkingVersion: checkingVersion)
            result.append(open)
        }
        return result
    }

    /// `event` with its items' secrets opened.
    func revealed(_ event: Event) async throws -> Event {
        var open = event
        if let item = event.item { open.item = try await revealed(item) }
        if let previous = event.prevItem { open.prevItem = try await revealed(previous) }
        return open
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
