import DiscfgCore
import Foundation

/// One config's secrets as a client writes them: sealed in the client, never by a
/// server. The CLI's `set --secret` and `key rotate --reseal` go through it; reads open
/// secrets with a ``SecretReader``.
public struct ConfigSecrets: Sendable {
    /// The store the config lives in.
    public let store: any ConfigStore
    /// The config.
    public let config: ConfigName
    /// Where its data keys are unwrapped.
    public let keyring: SecretKeyring

    /// Secrets of `config` in `store`, opened with `keyring`.
    public init(store: any ConfigStore, config: ConfigName, keyring: SecretKeyring) {
        self.store = store
        self.config = config
        self.keyring = keyring
    }

    /// The most times a secret is re-sealed because its key changed between the read of
    /// its version and the write.
    static let attempts = 16

    /// Sets `key` to `value`, sealed for the version the write creates.
    ///
    /// The new version is the current one plus one, so the write is conditional on the
    /// current version; when another writer gets in between, the value is sealed again.
    /// The caller's own conditions are kept, and their failure is reported as usual.
    public func set(_ key: Key, to value: Data, options: SetOptions) async throws -> Event {
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

    /// Seals every secret of the config again under its current data key (after a
    /// rotation), one compare-and-swap each: a secret changed meanwhile is left as its
    /// writer set it. Returns how many were sealed again and how many were left.
    public func resealAll() async throws -> (resealed: Int, left: Int) {
        guard let current = try await store.configInfo(config).settings.encryption?.current else {
            throw DiscfgError.invalid("encryption", "config \"\(config)\" has no encryption key")
        }
        var resealed = 0
        var left = 0
        let reader = SecretReader(self)
        for item in try await store.items(in: config).items where item.isSecret {
            guard try SecretBox.header(of: item.value).dataKeyID != current else { continue }
            let (value, contentType) = try await reader.opened(item)
            let options = SetOptions(
                conditions: [.modRevision(item.modRevision)],
                ttlSeconds: item.expiresAt.map { max(1, Int64($0.timeIntervalSinceNow.rounded(.up))) },
                contentType: contentType
            )
            do {
                _ = try await set(item.key, to: value, options: options)
                resealed += 1
            } catch let error as DiscfgError where error.code == .conditionFailed {
                left += 1
            }
        }
        return (resealed, left)
    }
}

/// Opens the secrets of one config for a reader that runs for long (the Swift client,
/// the swift-configuration provider). The config's encryption settings are read with the
/// first secret, and again only when a secret names a data key they lack (the config's
/// key was rotated meanwhile); data keys are unwrapped once, by the keyring.
public actor SecretReader {
    private let secrets: ConfigSecrets
    private var encryption: EncryptionSettings?

    /// A reader of the secrets `secrets` can open.
    public init(_ secrets: ConfigSecrets) {
        self.secrets = secrets
    }

    /// The value of a secret item of this config, and its own content type.
    ///
    /// With `checkingVersion` false, the value is opened for the version it says it was
    /// sealed for (an export's entries carry no version).
    public func opened(_ item: Item, checkingVersion: Bool = true) async throws -> (value: Data, contentType: String?) {
        let dataKey = try SecretBox.header(of: item.value).dataKeyID
        if encryption?.dataKey(dataKey) == nil {
            encryption = try await secrets.store.configInfo(secrets.config).settings.encryption
        }
        return try await secrets.keyring.open(item, in: secrets.config, encryption: encryption, checkingVersion: checkingVersion)
    }

    /// `item` with its value opened and its own content type back, when it is a secret;
    /// any other item as it is.
    public func revealed(_ item: Item, checkingVersion: Bool = true) async throws -> Item {
        guard item.isSecret else { return item }
        var open = item
        (open.value, open.contentType) = try await opened(item, checkingVersion: checkingVersion)
        return open
    }

    /// `items` with every secret opened.
    public func revealed(_ items: [Item], checkingVersion: Bool = true) async throws -> [Item] {
        var result: [Item] = []
        result.reserveCapacity(items.count)
        for item in items { result.append(try await revealed(item, checkingVersion: checkingVersion)) }
        return result
    }

    /// `event` with its items' secrets opened.
    public func revealed(_ event: Event) async throws -> Event {
        var open = event
        if let item = event.item { open.item = try await revealed(item) }
        if let previous = event.prevItem { open.prevItem = try await revealed(previous) }
        return open
    }
}
