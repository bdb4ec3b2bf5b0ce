import Foundation

/// How a config's secret values are encrypted: the key that wraps its data keys, and the
/// data keys themselves, wrapped.
///
/// Secrets use envelope encryption. Each value is sealed with AES-256-GCM under a data key
/// of its config; the data keys are stored here only wrapped (encrypted) by the key the
/// config names, an AWS KMS key or a local key file. Sealing and opening happen in the
/// client: a server stores these settings and the sealed values and never sees a key.
public struct EncryptionSettings: Hashable, Sendable, Codable {
    /// The key that wraps the data keys: `kms://REGION/alias/NAME`, `kms://REGION/KEY-ID`,
    /// a KMS key or alias ARN, or `file:///PATH` for a key made by `discfg key init`.
    public var key: String
    /// The id of the data key new values are sealed with.
    public var current: String
    /// Every data key a value may still be sealed with, oldest first.
    public var dataKeys: [WrappedDataKey]

    /// The most data keys a config keeps (each rotation adds one); with the longest
    /// wrapped keys, the settings stay well inside a request body and a DynamoDB item.
    public static let maxDataKeys = 32
    /// The longest key name.
    public static let maxKeyLength = 2048

    /// Creates encryption settings.
    public init(key: String, current: String, dataKeys: [WrappedDataKey]) {
        self.key = key
        self.current = current
        self.dataKeys = dataKeys
    }

    private enum CodingKeys: String, CodingKey { case key, current, dataKeys }

    /// Decodes and checks each field's form (``validateFields()``). A server stores these
    /// settings for its clients and never uses them, so whether they hang together (a
    /// current key among the data keys) is for the client that reads them to say.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        key = try container.decode(String.self, forKey: .key)
        current = try container.decode(String.self, forKey: .current)
        dataKeys = try container.decode([WrappedDataKey].self, forKey: .dataKeys)
        try validateFields()
    }

    /// Checks each field's form, as `docs/openapi.yaml` describes it: a key name of a known
    /// kind, 1 to 32 data keys, ids of 1 to 32 letters, digits, - or _, base64 wrapped keys.
    public func validateFields() throws {
        try Self.validate(keyName: key)
        try WrappedDataKey.validate(id: current)
        guard !dataKeys.isEmpty, dataKeys.count <= Self.maxDataKeys else {
            throw DiscfgError.invalid("encryption", "encryption needs 1 to \(Self.maxDataKeys) data keys; it has \(dataKeys.count)")
        }
        for dataKey in dataKeys { try dataKey.validate() }
    }

    /// The data key new values are sealed with.
    public var currentDataKey: WrappedDataKey? { dataKeys.first { $0.id == current } }

    /// The data key with this id.
    public func dataKey(_ id: String) -> WrappedDataKey? { dataKeys.first { $0.id == id } }

    /// Checks that `keyName` names a key discfg can use: `kms://…`, a KMS ARN or `file:///…`.
    public static func validate(keyName: String) throws {
        let known = keyName.hasPrefix("kms://") || keyName.hasPrefix("arn:aws:kms:") || keyName.hasPrefix("arn:aws-cn:kms:")
            || keyName.hasPrefix("arn:aws-us-gov:kms:") || keyName.hasPrefix("file:///")
        guard known, keyName.utf8.count <= maxKeyLength, keyName.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
            throw DiscfgError.invalid(
                "encryption",
                "encryption key \"\(keyName.debugEscaped)\" is not one of: kms://REGION/alias/NAME, kms://REGION/KEY-ID, a KMS key ARN, file:///PATH"
            )
        }
    }
}

/// A data key as stored: encrypted by the config's key, with the id values name it by.
public struct WrappedDataKey: Hashable, Sendable, Codable {
    /// Short and unique within the config: `1`, `2`, … in order of creation.
    public var id: String
    /// The data key encrypted by the config's key (a KMS ciphertext blob, or AES-GCM
    /// under the local key), base64.
    public var wrapped: String
    /// When it was made.
    public var created: Date?

    /// The longest wrapped key accepted, in base64 characters (a KMS blob for a 256-bit
    /// key is about 250, a local key's 80).
    public static let maxWrappedLength = 1024

    /// Creates a wrapped data key.
    public init(id: String, wrapped: Data, created: Date? = nil) {
        self.id = id
        self.wrapped = wrapped.base64EncodedString()
        self.created = created
    }

    /// The wrapped bytes; nil when `wrapped` is not base64.
    public var wrappedBytes: Data? { Data(base64Encoded: wrapped) }

    func validate() throws {
        try Self.validate(id: id)
        guard wrapped.utf8.count <= Self.maxWrappedLength, let bytes = wrappedBytes, !bytes.isEmpty else {
            throw DiscfgError.invalid("encryption", "data key \"\(id)\" is not a base64 wrapped key of at most \(Self.maxWrappedLength) characters")
        }
    }

    static func validate(id: String) throws {
        guard !id.isEmpty, id.utf8.count <= 32, id.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") }) else {
            throw DiscfgError.invalid("encryption", "data key id \"\(id.debugEscaped)\" is not 1 to 32 letters, digits, - or _")
        }
    }

    private enum CodingKeys: String, CodingKey { case id, wrapped, created }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        wrapped = try container.decode(String.self, forKey: .wrapped)
        if container.contains(.created) {
            // Present means a date-time: null is refused, as the document says.
            let text = try container.decode(String.self, forKey: .created)
            guard let date = TimestampFormat.date(from: text) else {
                throw DiscfgError.invalid("encryption", "data key \"\(id.debugEscaped)\" has a creation time \"\(text.debugEscaped)\" that is not an RFC 3339 date-time")
            }
            created = date
        } else {
            created = nil
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(wrapped, forKey: .wrapped)
        try container.encodeIfPresent(created.map(TimestampFormat.string(from:)), forKey: .created)
    }
}

/// How a sealed (secret) value is told apart: by its content type. Its real content type
/// travels inside the sealed bytes, so stores, the API and history need nothing new.
public enum SecretMarker {
    /// The content type of every sealed value.
    public static let contentType = "application/vnd.discfg.secret"
    /// What a secret shows as where it is not revealed.
    public static let masked = "(secret)"
}

extension Item {
    /// Whether the value is sealed (set with `--secret`).
    public var isSecret: Bool { contentType == SecretMarker.contentType }
}
