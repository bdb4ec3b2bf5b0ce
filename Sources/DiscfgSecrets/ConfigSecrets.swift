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

    /// Sets `key` to `value`, sealed for the item the write creates (``SecretBinding``).
    ///
    /// An existing key keeps its create revision and gets the next version, so the write
    /// is conditional on the current version; when another writer gets in between, the
    /// value is sealed again. A new key is created at the revision of the write, which
    /// the store assigns: the value is sealed for the config's next revision, written
    /// only if the key is still absent, and, should another change of the config have
    /// come first, sealed again at once for the revision the key was really created at
    /// (its version 2, on condition that nothing changed it meanwhile). The caller's own
    /// conditions are kept, and their failure is reported as usual.
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
            var binding = SecretBinding(config: config, key: key, createRevision: current?.createRevision ?? .zero, version: (current?.version ?? 0) + 1)
            if current == nil {
                // Created by this write, at the config's next revision unless another change comes first.
                binding.createRevision = try await store.configInfo(config).revision.next
            }
            var sealedOptions = options
            sealedOptions.contentType = SecretMarker.contentType
            sealedOptions.conditions.append(.version(current?.version ?? 0))
            let event: Event
            do {
                let sealed = try await keyring.seal(value, contentType: options.contentType, binding: binding, encryption: encryption)
                event = try await store.set(key, to: sealed, in: config, options: sealedOptions)
            } catch let error as DiscfgError where error.code == .conditionFailed {
                // Another change came first: retry only if the caller's conditions still hold.
                guard options.conditions.allSatisfy({ $0.holds(for: error.currentItem) }) else { throw error }
                continue
            }
            guard let item = event.item, SecretBinding(item, in: config) != binding else { return event }
            return try await sealedAgain(item, to: value, options: options, encryption: encryption)
        }
        throw DiscfgError(.unavailable, "secret \(key) kept changing while it was being sealed (\(Self.attempts) tries); try again")
    }

    /// Seals `value` again for the item the store really made (a new key created at
    /// another revision than the one predicted), as its next version.
    private func sealedAgain(_ item: Item, to value: Data, options: SetOptions, encryption: EncryptionSettings) async throws -> Event {
        let binding = SecretBinding(config: config, key: item.key, createRevision: item.createRevision, version: item.version + 1)
        var again = options
        again.contentType = SecretMarker.contentType
        again.conditions = [.modRevision(item.modRevision)]
        let sealed = try await keyring.seal(value, contentType: options.contentType, binding: binding, encryption: encryption)
        do {
            return try await store.set(item.key, to: sealed, in: config, options: again)
        } catch let error as DiscfgError where error.code == .conditionFailed {
            throw DiscfgError(
                .unavailable,
                "secret \(item.key) of config \"\(config)\" was changed by another writer right after it was created, before its value could be bound to the revision it was created at; check it with discfg get and set it again",
                field: "key"
            )
        }
    }

    /// Seals every secret of the config again under its current data key (after a
    /// rotation), one compare-and-swap each: a secret changed meanwhile is left as its
    /// writer set it. Values in the first format are sealed again too, in the current
    /// one, after the checks that format allows (its version). Returns how many were
    /// sealed again and how many were left.
    public func resealAll() async throws -> (resealed: Int, left: Int) {
        guard let current = try await store.configInfo(config).settings.encryption?.current else {
            throw DiscfgError.invalid("encryption", "config \"\(config)\" has no encryption key")
        }
        var resealed = 0
        var left = 0
        let reader = SecretReader(self)
        for item in try await store.items(in: config).items where item.isSecret {
            let header = try SecretBox.header(of: item.value)
            guard header.dataKeyID != current || header.isLegacy else { continue }
            let (value, contentType) = try await reader.opened(item, allowingLegacy: true)
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

/// Opens the secrets of one config: the one opener every reader uses (the CLI's get,
/// ls, history, watch, export and exec, the Swift client, the swift-configuration
/// provider). Each value opens only for the item it was sealed for (``SecretBinding``).
///
/// The config's encryption settings are read with the first secret, and again only when
/// a secret names a data key they lack (the config's key was rotated meanwhile); data
/// keys are unwrapped once, by the keyring.
public actor SecretReader {
    private let secrets: ConfigSecrets
    private var encryption: EncryptionSettings?
    private let notice: (@Sendable (String) -> Void)?
    private var noticed = false

    /// A reader of the secrets `secrets` can open.
    ///
    /// - Parameter notice: told once when a value sealed in the first format opens (one a
    ///   writer without the key could roll back), with what to do about it.
    public init(_ secrets: ConfigSecrets, notice: (@Sendable (String) -> Void)? = nil) {
        self.secrets = secrets
        self.notice = notice
    }

    /// The value of a secret item of this config, and its own content type.
    ///
    /// - Parameter allowingLegacy: open a first-format value even where the config no
    ///   longer accepts them (to seal it again).
    public func opened(_ item: Item, allowingLegacy: Bool = false) async throws -> (value: Data, contentType: String?) {
        let header = try SecretBox.header(of: item.value)
        if encryption?.dataKey(header.dataKeyID) == nil {
            encryption = try await secrets.store.configInfo(secrets.config).settings.encryption
        }
        let opened = try await secrets.keyring.open(item, in: secrets.config, encryption: encryption, allowingLegacy: allowingLegacy)
        if header.isLegacy, !noticed, let notice {
            noticed = true
            notice(
                "secret \(item.key) of config \"\(secrets.config)\" is sealed in discfg's first format, which someone who can write the config but not open it could roll back; seal every secret of it again with: discfg key rotate \(secrets.config) --reseal"
            )
        }
        return opened
    }

    /// `item` with its value opened and its own content type back, when it is a secret;
    /// any other item as it is.
    public func revealed(_ item: Item) async throws -> Item {
        guard item.isSecret else { return item }
        var open = item
        (open.value, open.contentType) = try await opened(item)
        return open
    }

    /// `items` with every secret opened.
    public func revealed(_ items: [Item]) async throws -> [Item] {
        var result: [Item] = []
        result.reserveCapacity(items.count)
        for item in items { result.append(try await revealed(item)) }
        return result
    }

    /// `event` with its items' secrets opened.
    public func revealed(_ event: Event) async throws -> Event {
        var open = event
        if let item = event.item { open.item = try await revealed(item) }
        if let previous = event.prevItem { open.prevItem = try await revealed(previous) }
        return open
    }

    /// Snapshot entries of this config at `revision` with every secret opened.
    ///
    /// An entry carries no version or create revision, so each secret's item is read at
    /// the snapshot's revision for them (a value is opened only for the item it was
    /// sealed for, as everywhere else); an item that is not the entry is refused.
    public func revealed(_ entries: [ConfigSnapshot.Entry], at revision: Revision) async throws -> [ConfigSnapshot.Entry] {
        var result: [ConfigSnapshot.Entry] = []
        result.reserveCapacity(entries.count)
        for entry in entries {
            guard entry.contentType == SecretMarker.contentType else {
                result.append(entry)
                continue
            }
            guard let item = try await secrets.store.get(entry.key, in: secrets.config, atRevision: revision), item.value == entry.value else {
                throw DiscfgError(.unavailable, "secret \(entry.key) of config \"\(secrets.config)\" could not be read again at revision \(revision) to be opened; try again", field: "key")
            }
            var open = entry
            (open.value, open.contentType) = try await opened(item)
            result.append(open)
        }
        return result
    }
}
