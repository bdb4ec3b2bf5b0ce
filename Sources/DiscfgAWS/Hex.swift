import Crypto
import Foundation

/// Hex and hashing helpers shared by the signer and the client; kept apart so both stay small.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Lowercase hex of `bytes`, the form SigV4 uses for hashes and signatures.
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Lowercase hex SHA-256 of `data`.
    public static func sha256<D: DataProtocol>(_ data: D) -> String {
        encode(SHA256.hash(data: data))
    }
}
