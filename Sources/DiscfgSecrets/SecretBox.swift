import Crypto
import DiscfgCore
import Foundation

/// Where a sealed value belongs: its config, its key and the version it was written as.
///
/// The binding is the sealed value's associated data, so a value copied to another key or
/// config, or an older value put back in place of a newer one, does not open.
public struct SecretBinding: Hashable, Sendable {
    /// The config the value belongs to.
    public var config: ConfigName
    /// The key it is the value of.
    public var key: Key
    /// The version of the key this value was written as.
    public var version: UInt64

    /// Creates a binding.
    public init(config: ConfigName, key: Key, version: UInt64) {
        self.config = config
        self.key = key
        self.version = version
    }
}

/// A secret value as stored: AES-256-GCM under one of its config's data keys.
///
/// Layout: `DSE1`, the data key id (a length byte, then UTF-8), the value's own content
/// type (a length byte, then ASCII; empty for none), the version it was sealed for (8
/// bytes, big-endian), then AES-GCM's nonce (12 bytes), ciphertext and tag (16 bytes).
/// The associated data is the format, the binding, the data key id and the content type,
/// so none of them can be changed unnoticed; the version in the clear lets a value be
/// opened where only its config and key are known (an export) and is checked against
/// the item's version everywhere else.
public enum SecretBox {
    static let magic: [UInt8] = Array("DSE1".utf8)
    /// Bytes a sealed value adds beyond its data key id and content type.
    static let fixedOverhead = magic.count + 2 + 8 + 12 + 16

    /// The largest value that can be sealed with `dataKeyID` and `contentType` and still
    /// fit the store's value limit.
    public static func maxPlaintextBytes(dataKeyID: String, contentType: String?) -> Int {
        Limits.maxValueBytes - fixedOverhead - dataKeyID.utf8.count - (contentType?.utf8.count ?? 0)
    }

    /// Seals `value` for `binding` under data key `dataKeyID`.
    public static func seal(
        _ value: Data, contentType: String?, binding: SecretBinding, dataKeyID: String, dataKey: SymmetricKey
    ) throws -> Data {
        let limit = maxPlaintextBytes(dataKeyID: dataKeyID, contentType: contentType)
        guard value.count <= limit else {
            throw DiscfgError(.tooLarge, "secret value is \(value.count) bytes; sealed, a secret may hold at most \(limit) bytes", field: "value")
        }
        let type = contentType ?? ""
        guard dataKeyID.utf8.count <= 255, type.utf8.count <= 255 else {
            throw DiscfgError.invalid("contentType", "content type is too long to seal")
        }
        let sealed = try AES.GCM.seal(value, using: dataKey, authenticating: associatedData(binding, dataKeyID: dataKeyID, contentType: type))
        var out = Data(magic)
        out.append(UInt8(dataKeyID.utf8.count))
        out.append(contentsOf: dataKeyID.utf8)
        out.append(UInt8(type.utf8.count))
        out.append(contentsOf: type.utf8)
        withUnsafeBytes(of: binding.version.bigEndian) { out.append(contentsOf: $0) }
        out.append(sealed.combined!)
        return out
    }

    /// The parts of a sealed value, read without a key.
    public struct Header: Sendable, Equatable {
        /// The data key it was sealed with.
        public var dataKeyID: String
        /// The value's own content type.
        public var contentType: String?
        /// The version of its key it was sealed for.
        public var version: UInt64
        /// Where AES-GCM's nonce begins.
        var payloadOffset: Int
    }

    /// Reads the header of a sealed value.
    ///
    /// - Throws: `invalidArgument` when `sealed` is not a sealed value.
    public static func header(of sealed: Data) throws -> Header {
        let bytes = [UInt8](sealed)
        func malformed() -> DiscfgError {
            DiscfgError.invalid("value", "the value is marked secret but is not a sealed discfg secret (\(bytes.count) bytes)")
        }
        guard bytes.count >= fixedOverhead, Array(bytes[0..<4]) == magic else { throw malformed() }
        var offset = 4
        let idLength = Int(bytes[offset])
        offset += 1
        guard idLength > 0, offset + idLength < bytes.count else { throw malformed() }
        let id = String(decoding: bytes[offset..<offset + idLength], as: UTF8.self)
        offset += idLength
        let typeLength = Int(bytes[offset])
        offset += 1
        guard offset + typeLength + 8 + 28 <= bytes.count else { throw malformed() }
        let type = String(decoding: bytes[offset..<offset + typeLength], as: UTF8.self)
        offset += typeLength
        let version = bytes[offset..<offset + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        offset += 8
        return Header(dataKeyID: id, contentType: type.isEmpty ? nil : type, version: version, payloadOffset: offset)
    }

    /// Opens a sealed value with the data key its header names.
    ///
    /// - Throws: `invalidArgument` naming the key when the value was changed, belongs to
    ///   another key, config or version, or `dataKey` is not the key it was sealed with.
    public static func open(_ sealed: Data, binding: SecretBinding, dataKey: SymmetricKey) throws -> (value: Data, contentType: String?) {
        let header = try header(of: sealed)
        guard header.version == binding.version else {
            throw DiscfgError.invalid(
                "value",
                "secret \(binding.key) of config \"\(binding.config)\" is version \(binding.version) but holds the value sealed for version \(header.version): it was rolled back or restored from elsewhere; set it again"
            )
        }
        do {
            let box = try AES.GCM.SealedBox(combined: sealed.subdata(in: sealed.startIndex + header.payloadOffset..<sealed.endIndex))
            let associated = associatedData(binding, dataKeyID: header.dataKeyID, contentType: header.contentType ?? "")
            return (try AES.GCM.open(box, using: dataKey, authenticating: associated), header.contentType)
        } catch {
            throw DiscfgError.invalid(
                "value",
                "secret \(binding.key) of config \"\(binding.config)\" (version \(binding.version)) does not open with data key \"\(header.dataKeyID)\": it was changed, copied from another key or version, or sealed with another key"
            )
        }
    }

    static func associatedData(_ binding: SecretBinding, dataKeyID: String, contentType: String) -> Data {
        Data("discfg secret v1\u{0}\(binding.config.rawValue)\u{0}\(binding.key.path)\u{0}\(binding.version)\u{0}\(dataKeyID)\u{0}\(contentType)".utf8)
    }
}
