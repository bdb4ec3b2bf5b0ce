import Crypto
import DiscfgCore
import Foundation

/// A key that wraps a config's data keys: AWS KMS (``KMSKey``) or a local key file
/// (``FileKey``).
///
/// The encryption context names the config and the data key; wrapping and unwrapping must
/// be given the same context, so a wrapped data key cannot be moved to another config.
public protocol KeyEncryptionKey: Sendable {
    /// The key's name as configs store it (`kms://…`, an ARN, `file:///…`).
    var name: String { get }
    /// Makes a new 256-bit data key and returns it with its wrapped form.
    func generateDataKey(context: [String: String]) async throws -> (key: SymmetricKey, wrapped: Data)
    /// Wraps an existing data key (to move it under another key).
    func wrap(_ dataKey: SymmetricKey, context: [String: String]) async throws -> Data
    /// Recovers a data key from its wrapped form.
    ///
    /// - Throws: a ``DiscfgError`` naming the key when it cannot: the wrong key, a changed
    ///   blob, another context, or no permission.
    func unwrap(_ wrapped: Data, context: [String: String]) async throws -> SymmetricKey
}

/// The encryption context of one data key of one config.
public enum DataKeyContext {
    /// `{"discfg:config": CONFIG, "discfg:dataKey": ID}`.
    public static func of(config: ConfigName, dataKeyID: String) -> [String: String] {
        ["discfg:config": config.rawValue, "discfg:dataKey": dataKeyID]
    }

    /// The context as bytes, in key order: the associated data for a local key's wrapping.
    static func canonical(_ context: [String: String]) -> Data {
        Data(context.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "\u{0}").utf8)
    }
}

/// Opens the key a config names.
public protocol KeyResolver: Sendable {
    /// The key named `name` (`kms://…`, a KMS ARN, `file:///…`).
    func key(named name: String) throws -> any KeyEncryptionKey
}
