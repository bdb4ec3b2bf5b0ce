import Crypto
import DiscfgCore
import Foundation

/// Where a sealed value belongs: its config, its key, the revision that key was created
/// at, and the version it was written as.
///
/// The binding is the sealed value's associated data, so a value copied to another key or
/// config, or an older value put back in place of a newer one, does not open.
///
/// Why the create revision: a key's version alone is reused. Deleting a key and writing
/// it again starts its versions at 1, so someone who can write the config but has no key
/// could put a sealed value from the key's history back and bring its version up to the
/// one it was sealed for. The revision a key is created at is never reused within a
/// config (revisions only grow, and a key created again is created at a new one), so
/// (create revision, version) names one value of the key once. It is the store's own
/// metadata, on every item, in history and in events, so nothing new is stored; the
/// sealer learns it from the key's current item, or, for a new key, predicts it as the
/// config's next revision and seals again at once should the write land elsewhere
/// (``ConfigSecrets/set(_:to:options:)``).
public struct SecretBinding: Hashable, Sendable {
    /// The config the value belongs to.
    public var config: ConfigName
    /// The key it is the value of.
    public var key: Key
    /// The revision at which this incarnation of the key was created.
    public var createRevision: Revision
    /// The version of the key this value was written as.
    public var version: UInt64

    /// Creates a binding.
    public init(config: ConfigName, key: Key, createRevision: Revision, version: UInt64) {
        self.config = config
        self.key = key
        self.createRevision = createRevision
        self.version = version
    }

    /// The binding a stored item of `config` must have been sealed for.
    public init(_ item: Item, in config: ConfigName) {
        self.init(config: config, key: item.key, createRevision: item.createRevision, version: item.version)
    }

    var described: String { "version \(version) of the key created at revision \(createRevision)" }
}

/// A secret value as stored: AES-256-GCM under one of its config's data keys.
///
/// Layout: `DSE2`, the data key id (a length byte, then UTF-8), the value's own content
/// type (a length byte, then ASCII; empty for none), the key's create revision and the
/// version it was sealed for (8 bytes each, big-endian), then AES-GCM's nonce (12
/// bytes), ciphertext and tag (16 bytes). The associated data is the format, the
/// binding, the data key id and the content type, so none of them can be changed
/// unnoticed; the binding in the clear lets a refusal say what the value was sealed for.
///
/// Values sealed before the create revision was bound (`DSE1`: no create revision, and
/// `discfg secret v1` associated data) still open where their config allows it (see
/// ``SecretKeyring/open(_:in:encryption:allowingLegacy:)``).
public enum SecretBox {
    static let magic: [UInt8] = Array("DSE2".utf8)
    static let legacyMagic: [UInt8] = Array("DSE1".utf8)
    /// Bytes a sealed value adds beyond its data key id and content type.
    static let fixedOverhead = magic.count + 2 + 8 + 8 + 12 + 16

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
        let associated = associatedData(binding, legacy: false, dataKeyID: dataKeyID, contentType: type)
        let sealed = try AES.GCM.seal(value, using: dataKey, authenticating: associated)
        var out = Data(magic)
        out.append(UInt8(dataKeyID.utf8.count))
        out.append(contentsOf: dataKeyID.utf8)
        out.append(UInt8(type.utf8.count))
        out.append(contentsOf: type.utf8)
        withUnsafeBytes(of: binding.createRevision.rawValue.bigEndian) { out.append(contentsOf: $0) }
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
        /// The create revision of the key it was sealed for; nil for a value sealed in
        /// the first format (`DSE1`), which did not bind it.
        public var createRevision: Revision?
        /// The version of its key it was sealed for.
        public var version: UInt64
        /// Where AES-GCM's nonce begins.
        var payloadOffset: Int

        /// Whether the value was sealed in the first format, bound to its version alone.
        public var isLegacy: Bool { createRevision == nil }
    }

    /// Reads the header of a sealed value.
    ///
    /// - Throws: `invalidArgument` when `sealed` is not a sealed value.
    public static func header(of sealed: Data) throws -> Header {
        let bytes = [UInt8](sealed)
        func malformed() -> DiscfgError {
            DiscfgError.invalid("value", "the value is marked secret but is not a sealed discfg secret (\(bytes.count) bytes)")
        }
        guard bytes.count >= 4 else { throw malformed() }
        let legacy: Bool
        switch Array(bytes[0..<4]) {
        case magic: legacy = false
        case legacyMagic: legacy = true
        default: throw malformed()
        }
        let bindingBytes = legacy ? 8 : 16
        guard bytes.count >= 4 + 2 + bindingBytes + 28 else { throw malformed() }
        var offset = 4
        let idLength = Int(bytes[offset])
        offset += 1
        guard idLength > 0, offset + idLength < bytes.count else { throw malformed() }
        let id = String(decoding: bytes[offset..<offset + idLength], as: UTF8.self)
        offset += idLength
        let typeLength = Int(bytes[offset])
        offset += 1
        guard offset + typeLength + bindingBytes + 28 <= bytes.count else { throw malformed() }
        let type = String(decoding: bytes[offset..<offset + typeLength], as: UTF8.self)
        offset += typeLength
        func word() -> UInt64 {
            defer { offset += 8 }
            return bytes[offset..<offset + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }
        let createRevision = legacy ? nil : Revision(word())
        let version = word()
        return Header(dataKeyID: id, contentType: type.isEmpty ? nil : type, createRevision: createRevision, version: version, payloadOffset: offset)
    }

    /// Opens a sealed value with the data key its header names.
    ///
    /// - Parameter acceptingLegacy: whether a value in the first format (bound to its
    ///   version, not to its key's create revision) may open; it is then checked against
    ///   the version alone.
    /// - Throws: `invalidArgument` naming the key when the value was changed, belongs to
    ///   another key, config, incarnation or version, or `dataKey` is not the key it was
    ///   sealed with.
    public static func open(
        _ sealed: Data, binding: SecretBinding, dataKey: SymmetricKey, acceptingLegacy: Bool = false
    ) throws -> (value: Data, contentType: String?) {
        let header = try header(of: sealed)
        let name = "secret \(binding.key) of config \"\(binding.config)\""
        if header.isLegacy, !acceptingLegacy {
            throw DiscfgError.invalid(
                "value",
                "\(name) holds a value sealed in discfg's first format, which this config no longer accepts (its data keys were renewed with key rotate --reseal): someone who cannot open it wrote an old value back; set it again"
            )
        }
        guard header.version == binding.version, header.createRevision.map({ $0 == binding.createRevision }) ?? true else {
            let sealedFor = header.createRevision.map { "version \(header.version) of the key created at revision \($0)" } ?? "version \(header.version)"
            throw DiscfgError.invalid(
                "value",
                "\(name) is \(binding.described) but holds the value sealed for \(sealedFor): it was rolled back or restored from elsewhere by someone who cannot open it; set it again"
            )
        }
        do {
            let box = try AES.GCM.SealedBox(combined: sealed.subdata(in: sealed.startIndex + header.payloadOffset..<sealed.endIndex))
            let associated = associatedData(binding, legacy: header.isLegacy, dataKeyID: header.dataKeyID, contentType: header.contentType ?? "")
            return (try AES.GCM.open(box, using: dataKey, authenticating: associated), header.contentType)
        } catch {
            throw DiscfgError.invalid(
                "value",
                "\(name) (\(binding.described)) does not open with data key \"\(header.dataKeyID)\": it was changed, copied from another key or version, or sealed with another key"
            )
        }
    }

    static func associatedData(_ binding: SecretBinding, legacy: Bool, dataKeyID: String, contentType: String) -> Data {
        if legacy {
            return Data("discfg secret v1\u{0}\(binding.config.rawValue)\u{0}\(binding.key.path)\u{0}\(binding.version)\u{0}\(dataKeyID)\u{0}\(contentType)".utf8)
        }
        return Data(
            "discfg secret v2\u{0}\(binding.config.rawValue)\u{0}\(binding.key.path)\u{0}\(binding.createRevision.rawValue)\u{0}\(binding.version)\u{0}\(dataKeyID)\u{0}\(contentType)".utf8
        )
    }

    /// Seals in the first format, for tests of how such values are still read.
    static func sealLegacy(_ value: Data, contentType: String?, binding: SecretBinding, dataKeyID: String, dataKey: SymmetricKey) throws -> Data {
        let type = contentType ?? ""
        let sealed = try AES.GCM.seal(value, using: dataKey, authenticating: associatedData(binding, legacy: true, dataKeyID: dataKeyID, contentType: type))
        var out = Data(legacyMagic)
        out.append(UInt8(dataKeyID.utf8.count))
        out.append(contentsOf: dataKeyID.utf8)
        out.append(UInt8(type.utf8.count))
        out.append(contentsOf: type.utf8)
        withUnsafeBytes(of: binding.version.bigEndian) { out.append(contentsOf: $0) }
        out.append(sealed.combined!)
        return out
    }
}
