import Crypto
import Foundation

/// A secret key that signs ``PublishedSnapshot`` documents with HMAC-SHA256, so that a
/// reader holding the same key takes only documents its writer made: the sha256 every
/// document carries tells a damaged file, but anyone can compute it for a forged one.
///
/// `discfg publish --snapshot-key-file` and `discfg agent --snapshot-key-file` derive one
/// from a shared key file; the agent's cache signs its copies with a key of its own that
/// it keeps beside them.
///
/// ```swift
/// let key = SnapshotKey.generate()
/// let signed = snapshot.encoded(signedWith: key)
/// let read = try PublishedSnapshot(decoding: signed, key: key)
/// ```
public struct SnapshotKey: Sendable {
    /// The number of bytes of a key.
    public static let byteCount = 32

    private let key: SymmetricKey

    /// A key of exactly ``byteCount`` bytes; nil for any other length.
    public init?(bytes: some ContiguousBytes) {
        let key = SymmetricKey(data: bytes)
        guard key.bitCount == Self.byteCount * 8 else { return nil }
        self.key = key
    }

    /// A key derived (HKDF-SHA256) from `secret` for signing snapshots alone, so the same
    /// secret can serve another purpose without its signatures meaning anything there.
    public init(deriving secret: SymmetricKey) {
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: secret, info: Data("discfg snapshot signature v1".utf8), outputByteCount: Self.byteCount
        )
    }

    /// A new random key.
    public static func generate() -> SnapshotKey {
        SnapshotKey(bytes: SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) })!
    }

    /// The key's bytes, to keep it in a file readable by its owner alone.
    public var bytes: Data { key.withUnsafeBytes { Data($0) } }

    /// The signature `snapshot` carries when encoded with this key (64 hex digits).
    public func signature(of snapshot: PublishedSnapshot) -> String {
        signature(of: PublishedSnapshot.body(of: snapshot))
    }

    /// A name this key stands for without telling it: the first 16 hex digits of the
    /// HMAC of `purpose`, such as an agent's instance id from its cache's key.
    public func derivedName(_ purpose: String) -> String {
        String(signature(of: Array(purpose.utf8)).prefix(16))
    }

    /// The signature of `body`: HMAC-SHA256 as 64 lowercase hex digits.
    func signature(of body: [UInt8]) -> String {
        HMAC<SHA256>.authenticationCode(for: body, using: key).map { String(format: "%02x", $0) }.joined()
    }

    /// Whether `signature` (64 lowercase hex digits) is `body`'s under this key, compared
    /// in constant time.
    func verifies(_ signature: String, of body: [UInt8]) -> Bool {
        guard let code = Self.bytes(hex: signature) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: body, using: key)
    }

    private static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count == 64 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for index in stride(from: 0, to: 64, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            out.append(high << 4 | low)
        }
        return out
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case 0x30...0x39: digit - 0x30
        case 0x61...0x66: digit - 0x61 + 10
        default: nil
        }
    }
}
