/// The escaping that keeps an etcd key (any bytes) in one discfg key segment, reversibly
/// and in the same order: the one spelling the etcd API's keys (`EtcdKeys` in DiscfgEtcd)
/// and prefix scopes written in etcd's key space (``AccessScope``) both use.
///
/// A key becomes `/` and then one token per byte:
///
/// | bytes | token |
/// |---|---|
/// | `"` … `-`, `0` … `}` (printable ASCII but `!`, `.`, `/`, `~`) | the byte itself |
/// | `0x00` … `0x21` (control characters, space, `!`) | `!` and two hex digits |
/// | `.` and `/` | `.` and two hex digits |
/// | `0x7E` … `0xFF` | `~` and two hex digits |
///
/// Each escape character sits where the bytes it stands for sort (`!` below every other
/// token, `.` between `-` and `0`, `~` above them all) and the hex digits sort as their
/// values, so two etcd keys compare as their paths compare. No token is the start of
/// another (a plain byte is never `!`, `.` or `~`), so one etcd key is a byte prefix of
/// another exactly when its path (without the leading `/`) is a string prefix of the
/// other's. The path holds no `/` after the first, so it is never an invalid discfg key,
/// and is printable ASCII (no normalization changes it). `app/db.host` becomes
/// `/app.2Fdb.2Ehost`.
public enum EtcdKeyPath {
    /// The path of an etcd key. Inlinable, so the etcd API's hot paths get it specialized
    /// for their byte collections.
    @inlinable
    public static func path(_ key: some Collection<UInt8>) -> String {
        var bytes: [UInt8] = [UInt8(ascii: "/")]
        bytes.reserveCapacity(key.count + 1)
        for byte in key {
            switch byte {
            case 0x00...0x21: bytes += [UInt8(ascii: "!")] + hex(byte)
            case 0x2E, 0x2F: bytes += [UInt8(ascii: ".")] + hex(byte)
            case 0x7E...0xFF: bytes += [UInt8(ascii: "~")] + hex(byte)
            default: bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The etcd key a path stands for, or nil for a path no etcd key makes (a key written
    /// to the config by other means, such as `/app/name`).
    public static func bytes(_ path: String) -> [UInt8]? {
        let utf8 = Array(path.utf8)
        guard utf8.first == UInt8(ascii: "/") else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = 1
        while index < utf8.count {
            let byte = utf8[index]
            switch byte {
            case UInt8(ascii: "!"), UInt8(ascii: "."), UInt8(ascii: "~"):
                guard index + 2 < utf8.count, let value = unhex(utf8[index + 1], utf8[index + 2]) else { return nil }
                let expected: ClosedRange<UInt8> = switch byte {
                case UInt8(ascii: "!"): 0x00...0x21
                case UInt8(ascii: "."): 0x2E...0x2F
                default: 0x7E...0xFF
                }
                guard expected.contains(value) else { return nil }
                bytes.append(value)
                index += 3
            case 0x22...0x2D, 0x30...0x7D:
                bytes.append(byte)
                index += 1
            default:
                return nil
            }
        }
        return bytes.isEmpty ? nil : bytes
    }

    @usableFromInline static let digits = Array("0123456789ABCDEF".utf8)

    @usableFromInline static func hex(_ byte: UInt8) -> [UInt8] { [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]] }

    private static func unhex(_ high: UInt8, _ low: UInt8) -> UInt8? {
        guard let high = digits.firstIndex(of: high), let low = digits.firstIndex(of: low) else { return nil }
        return UInt8(high << 4 | low)
    }
}
