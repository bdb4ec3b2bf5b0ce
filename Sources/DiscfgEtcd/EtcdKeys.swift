import DiscfgCore

/// etcd keys (any bytes) as discfg keys of one config, reversibly and in the same order.
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
/// values, so two etcd keys compare as their paths compare and an etcd range
/// `[key, range_end)` is the range of paths `[encode(key), encode(range_end))`. The path
/// holds no `/` after the first, so it is never an invalid discfg key (no empty, `.` or
/// `..` segment), and is printable ASCII (no normalization changes it). `app/db.host`
/// becomes `/app.2Fdb.2Ehost`.
public enum EtcdKeys {
    /// The longest etcd key whose path fits a discfg key when every byte is plain.
    public static let maxPlainBytes = Key.maxBytes - 1

    /// The path of an etcd key.
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

    /// The discfg key of an etcd key.
    /// - Throws: `invalidArgument` for an empty key (etcd's "key is not provided") and
    ///   `tooLarge` for one whose path passes ``Key/maxBytes``.
    public static func key(_ bytes: some Collection<UInt8>) throws -> Key {
        guard !bytes.isEmpty else { throw DiscfgError.invalid("key", "key is not provided") }
        let path = path(bytes)
        guard path.utf8.count <= Key.maxBytes else {
            throw DiscfgError(.tooLarge, "key is too large: \(bytes.count) bytes take \(path.utf8.count) bytes as a discfg key; the limit is \(Key.maxBytes)", field: "key")
        }
        return Key(stored: path)
    }

    /// The etcd key a path stands for, or nil for a path no etcd key makes (a key written
    /// to the config by other means).
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

    /// The keys an etcd key makes, as a transaction's ranges reach them: keys of the
    /// config written by other means are neither compared, read nor deleted.
    public static let filter = KeyFilter("etcd-encoded keys") { bytes($0.path) != nil }

    /// The paths of an etcd range: `key` alone when `rangeEnd` is empty, every key from
    /// `key` on when it is `\0`, else `[key, rangeEnd)`. A `key` of `\0` with a `rangeEnd`
    /// of `\0` is every key.
    public static func range(key: [UInt8], rangeEnd: [UInt8]) -> KeyRange {
        let lower = key == [0] ? "/" : path(key)
        if rangeEnd == [0] { return KeyRange(lower: lower, upper: nil) }
        return KeyRange(lower: lower, upper: path(rangeEnd))
    }

    private static let digits = Array("0123456789ABCDEF".utf8)

    private static func hex(_ byte: UInt8) -> [UInt8] { [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]] }

    private static func unhex(_ high: UInt8, _ low: UInt8) -> UInt8? {
        guard let high = digits.firstIndex(of: high), let low = digits.firstIndex(of: low) else { return nil }
        return UInt8(high << 4 | low)
    }
}
