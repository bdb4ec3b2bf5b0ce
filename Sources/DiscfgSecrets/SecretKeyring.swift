import Crypto
import DiscfgAWS
import DiscfgCore
import Foundation

/// Seals and opens a config's secret values, unwrapping each data key once.
///
/// ```swift
/// let keyring = SecretKeyring(resolver: StandardKeyResolver(environment: environment))
/// let sealed = try await keyring.seal(value, contentType: nil, binding: binding, encryption: info.settings.encryption!)
/// let (value, type) = try await keyring.open(item, in: config, encryption: info.settings.encryption)
/// ```
public actor SecretKeyring {
    private let resolver: any KeyResolver
    private var unwrapped: [String: SymmetricKey] = [:]

    /// A keyring opening keys through `resolver`.
    public init(resolver: any KeyResolver) {
        self.resolver = resolver
    }

    /// Encryption settings for a new config, or one that had none: one data key, made by
    /// the key named `keyName`.
    public func newEncryption(keyName: String, config: ConfigName) async throws -> EncryptionSettings {
        try EncryptionSettings.validate(keyName: keyName)
        let key = try resolver.key(named: keyName)
        let id = DataKeyIDs.first
        let (dataKey, wrapped) = try await key.generateDataKey(context: DataKeyContext.of(config: config, dataKeyID: id))
        let settings = EncryptionSettings(key: keyName, current: id, dataKeys: [WrappedDataKey(id: id, wrapped: wrapped, created: Date())])
        unwrapped[Self.cacheID(config, settings.dataKeys[0], keyName)] = dataKey
        return settings
    }

    /// `encryption` with a new data key, made current; values sealed before stay readable
    /// with the older keys, which are kept.
    ///
    /// - Parameter upgrading: make the config refuse values sealed in the first format
    ///   from now on (``DataKeyIDs``), as `key rotate --reseal` does once it has sealed
    ///   them again; a config that already refuses them keeps refusing them.
    public func rotated(_ encryption: EncryptionSettings, config: ConfigName, upgrading: Bool = false) async throws -> EncryptionSettings {
        guard encryption.dataKeys.count < EncryptionSettings.maxDataKeys else {
            throw DiscfgError.invalid("encryption", "config \"\(config)\" already has \(EncryptionSettings.maxDataKeys) data keys")
        }
        let id = DataKeyIDs.next(after: encryption, bound: upgrading || !DataKeyIDs.acceptsLegacySeals(encryption))
        let key = try resolver.key(named: encryption.key)
        let (dataKey, wrapped) = try await key.generateDataKey(context: DataKeyContext.of(config: config, dataKeyID: id))
        var result = encryption
        let wrappedKey = WrappedDataKey(id: id, wrapped: wrapped, created: Date())
        result.dataKeys.append(wrappedKey)
        result.current = id
        unwrapped[Self.cacheID(config, wrappedKey, encryption.key)] = dataKey
        return result
    }

    /// `encryption` with every data key moved under the key named `keyName`: each is
    /// unwrapped with the old key and wrapped with the new one, so both must be at hand.
    public func rewrapped(_ encryption: EncryptionSettings, under keyName: String, config: ConfigName) async throws -> EncryptionSettings {
        try EncryptionSettings.validate(keyName: keyName)
        let newKey = try resolver.key(named: keyName)
        var result = encryption
        result.key = keyName
        result.dataKeys = []
        for dataKey in encryption.dataKeys {
            let plain = try await unwrap(dataKey, config: config, keyName: encryption.key)
            let context = DataKeyContext.of(config: config, dataKeyID: dataKey.id)
            result.dataKeys.append(WrappedDataKey(id: dataKey.id, wrapped: try await newKey.wrap(plain, context: context), created: dataKey.created))
        }
        return result
    }

    /// Seals `value` with the current data key of `encryption`.
    public func seal(_ value: Data, contentType: String?, binding: SecretBinding, encryption: EncryptionSettings) async throws -> Data {
        guard let current = encryption.currentDataKey else {
            throw DiscfgError.invalid("encryption", "config \"\(binding.config)\" names no current data key")
        }
        let dataKey = try await unwrap(current, config: binding.config, keyName: encryption.key)
        return try SecretBox.seal(value, contentType: contentType, binding: binding, dataKeyID: current.id, dataKey: dataKey)
    }

    /// Opens a secret item of `config`: its value and its own content type.
    ///
    /// The value must have been sealed for this very item: its config, key, the revision
    /// the key was created at and its version (``SecretBinding``). A value in the first
    /// format opens only while the config accepts them (``DataKeyIDs``), or with
    /// `allowingLegacy` (to seal it again).
    ///
    /// - Throws: `invalidArgument` naming the key when the config has no encryption, the
    ///   data key is gone, or the value does not open.
    public func open(
        _ item: Item, in config: ConfigName, encryption: EncryptionSettings?, allowingLegacy: Bool = false
    ) async throws -> (value: Data, contentType: String?) {
        let header = try SecretBox.header(of: item.value)
        guard let encryption else {
            throw DiscfgError.invalid("encryption", "secret \(item.key) cannot be opened: config \"\(config)\" has no encryption key")
        }
        guard let wrapped = encryption.dataKey(header.dataKeyID) else {
            throw DiscfgError.invalid("encryption", "secret \(item.key) was sealed with data key \"\(header.dataKeyID)\", which config \"\(config)\" no longer has")
        }
        let dataKey = try await unwrap(wrapped, config: config, keyName: encryption.key)
        return try SecretBox.open(
            item.value, binding: SecretBinding(item, in: config), dataKey: dataKey,
            acceptingLegacy: allowingLegacy || DataKeyIDs.acceptsLegacySeals(encryption)
        )
    }

    private func unwrap(_ wrapped: WrappedDataKey, config: ConfigName, keyName: String) async throws -> SymmetricKey {
        let id = Self.cacheID(config, wrapped, keyName)
        if let key = unwrapped[id] { return key }
        guard let bytes = wrapped.wrappedBytes else {
            throw DiscfgError.invalid("encryption", "data key \"\(wrapped.id)\" of config \"\(config)\" is not base64")
        }
        let key = try await resolver.key(named: keyName).unwrap(bytes, context: DataKeyContext.of(config: config, dataKeyID: wrapped.id))
        unwrapped[id] = key
        return key
    }

    private static func cacheID(_ config: ConfigName, _ wrapped: WrappedDataKey, _ keyName: String) -> String {
        "\(config.rawValue)\u{0}\(keyName)\u{0}\(wrapped.id)\u{0}\(wrapped.wrapped)"
    }
}

/// The ids of a config's data keys, and what they say about the sealed values it accepts.
///
/// Values sealed before seals were bound to their key's create revision (`DSE1`) can be
/// rolled back by a writer without the key, so a config stops accepting them once they
/// have all been sealed again. That state must live where a writer of keys cannot
/// change it, and a config's encryption settings are such a place: data keys made since
/// are named `b1`, `b2`, … ("bound"), and a config whose current data key is one of them
/// refuses first-format values. A config made from now on starts that way; an older one
/// keeps accepting them (with a note on each read) until `discfg key rotate --reseal`
/// seals every secret again under a new, bound, data key. The ids are bound into each
/// data key's wrapping context, so renaming one breaks it rather than changes the rule.
public enum DataKeyIDs {
    /// The id of a new config's first data key.
    public static let first = "b1"

    /// Whether the config still opens values sealed in the first format: its current data
    /// key was made before seals were bound (its id is a plain number).
    public static func acceptsLegacySeals(_ encryption: EncryptionSettings) -> Bool {
        !encryption.current.isEmpty && encryption.current.unicodeScalars.allSatisfy { ("0"..."9").contains($0) }
    }

    /// The id of the data key that follows the config's: one past the highest number,
    /// bound (`b3`) or, for a config that still accepts first-format values, plain (`3`).
    static func next(after encryption: EncryptionSettings, bound: Bool) -> String {
        let highest = encryption.dataKeys.compactMap { Int($0.id.hasPrefix("b") ? String($0.id.dropFirst()) : $0.id) }.max() ?? 0
        return (bound ? "b" : "") + String(highest + 1)
    }
}

/// Opens `file:///…` keys from disk and KMS keys with the AWS credential chain.
public struct StandardKeyResolver: KeyResolver {
    private let environment: [String: String]
    private let credentials: any CredentialProvider

    /// A resolver using `environment` for AWS credentials, profile and endpoints.
    public init(environment: [String: String], credentials: (any CredentialProvider)? = nil, profile: String? = nil) {
        self.environment = environment
        self.credentials = credentials ?? CredentialChain.standard(environment: environment, profile: profile)
    }

    public func key(named name: String) throws -> any KeyEncryptionKey {
        try EncryptionSettings.validate(keyName: name)
        if name.hasPrefix("file://") {
            return try FileKey(path: String(name.dropFirst("file://".count)))
        }
        return try KMSKey(name: name, credentials: credentials, environment: environment)
    }
}
