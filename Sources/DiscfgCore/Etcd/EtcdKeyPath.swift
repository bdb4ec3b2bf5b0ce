/// The escaping that keeps an etcd key (any bytes) in one discfg key segment, reversibly
/// and in the same order: the one spelling the etcd API's keys (`EtcdKeys` in DiscfgEtcd)
/// and prefix scopes written in etcd's key space (``AccessScope``) both use.
///
/// A key becomes `/` and then one token per byte, except a trailing run of zero bytes,
/// which becomes one token naming its length:
///
/// | bytes | token |
/// |---|---|
/// | `"` … `-`, `0` … `}` (printable ASCII but `!`, `.`, `/`, `~`) | the byte itself |
/// | `0x00` … `0x21` (control characters, space, `!`) | `!` and two hex digits |
/// | `.` and `/` | `.` and two hex digits |
/// | `0x7E` … `0xFF` | `~` and two hex digits |
/// | m ≥ 1 zero bytes ending the key | `!#`, the count of m's decimal digits, m's digits |
///
/// Each escape character sits where the bytes it stands for sort (`!` below every other
/// token, `.` between `-` and `0`, `~` above them all) and the hex digits sort as their
/// values, so two etcd keys compare as their paths compare.
///
/// The run token keeps etcd's binary keys short (`etcdctl check datascale` writes 512-byte
/// keys that are mostly trailing zeros): `a\0` is `/a!#11`, `a\0\0\0` is `/a!#13`, 512
/// zeros are `/!#3512`. Zeros followed by another byte stay `!00` each. It keeps the order:
/// for a prefix P not ending in zero, the bytes P·0^m sort after P, after P·0^k for k < m,
/// and before P·0^j·c for any j and any c ≠ 0; and their paths do too. Past P's tokens, P
/// has nothing (shorter sorts first); P·0^j·c has `!00` when j > 0, or c's token when j is
/// 0, which is `!` and a hex digit `0`…`2`, or a byte above `!`; `#` sorts below `0` and
/// `!` below every plain byte, so `!#` sorts below all of them. Between two runs, the digit
/// count comes first, so a longer number sorts higher, and numbers of one count compare
/// digit by digit. Every other comparison is decided by the first differing byte before
/// any trailing run, where the tokens are those of the table.
///
/// Two consequences. A run token ends its path, so a key with a trailing zero is a byte
/// prefix of longer keys (`a\0` of `a\0b`) but its path (`/a!#11`) is no string prefix of
/// theirs (`/a!00b`): a byte prefix P is the range of paths `[path(P), path(P + 1))`, as
/// etcd's own prefix range is, never a string prefix. And each etcd key has one path:
/// ``bytes(_:)`` refuses a path that ends in `!00` (the spelling of a trailing zero before
/// the run token), a `!00` before a run token, a count digit `0`, a leading zero, digits
/// that do not match their count, anything after the run, and a key past ``maxKeyBytes``.
///
/// The path holds no `/` after the first, so it is never an invalid discfg key, and is
/// printable ASCII (no normalization changes it). `app/db.host` becomes
/// `/app.2Fdb.2Ehost`.
public enum EtcdKeyPath {
    /// The longest etcd key a path stands for: no etcd request carries a longer one (a gRPC
    /// message is at most 4 MiB), so a path naming more is no etcd key's.
    public static let maxKeyBytes = 4 << 20

    /// The path of an etcd key. Inlinable, so the etcd API's hot paths get it specialized
    /// for their byte collections. Its length is counted first, so it is written once,
    /// straight into the string.
    @inlinable
    public static func path(_ key: some Collection<UInt8>) -> String {
        var length = 1
        var zeros = 0
        for byte in key {
            if byte == 0 {
                zeros += 1
                continue
            }
            length += 3 * zeros + (escape(byte) == nil ? 1 : 3)
            zeros = 0
        }
        // Ten digits or more cannot arrive: see `maxKeyBytes`.
        var runDigits = 0
        if zeros > 0 {
            var rest = zeros
            while rest > 0 { (runDigits, rest) = (runDigits + 1, rest / 10) }
            length += 3 + runDigits
        }
        return String(unsafeUninitializedCapacity: length) { buffer in
            buffer[0] = UInt8(ascii: "/")
            var at = 1
            var pending = 0
            for byte in key {
                if byte == 0 {
                    pending += 1
                    continue
                }
                for _ in 0..<pending { write(UInt8(ascii: "!"), 0, into: buffer, at: &at) }
                pending = 0
                if let mark = escape(byte) {
                    write(mark, byte, into: buffer, at: &at)
                } else {
                    buffer[at] = byte
                    at += 1
                }
            }
            if pending > 0 {
                buffer[at] = UInt8(ascii: "!")
                buffer[at + 1] = UInt8(ascii: "#")
                buffer[at + 2] = UInt8(ascii: "0") + UInt8(runDigits)
                var rest = pending
                for place in stride(from: at + 2 + runDigits, to: at + 2, by: -1) {
                    buffer[place] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                at += 3 + runDigits
            }
            return at
        }
    }

    /// The escape character of a byte that is not its own token, or nil for one that is.
    @inlinable
    static func escape(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x00...0x21: UInt8(ascii: "!")
        case 0x2E, 0x2F: UInt8(ascii: ".")
        case 0x7E...0xFF: UInt8(ascii: "~")
        default: nil
        }
    }

    /// Writes `mark` and the two hex digits of `byte` at `index`, and moves it past them.
    @inlinable
    static func write(_ mark: UInt8, _ byte: UInt8, into buffer: UnsafeMutableBufferPointer<UInt8>, at index: inout Int) {
        buffer[index] = mark
        buffer[index + 1] = digits[Int(byte >> 4)]
        buffer[index + 2] = digits[Int(byte & 0xF)]
        index += 3
    }

    /// The etcd key a path stands for, or nil for a path no etcd key makes (a key written
    /// to the config by other means, such as `/app/name`).
    public static func bytes(_ path: String) -> [UInt8]? {
        guard let (bytes, zeros) = decode(path) else { return nil }
        return bytes + [UInt8](repeating: 0, count: zeros)
    }

    /// Whether a path is an etcd key's, without building the key.
    public static func isKeyPath(_ path: String) -> Bool { decode(path) != nil }

    /// A path's key as the bytes before its trailing run of zeros and the run's length.
    private static func decode(_ path: String) -> (bytes: [UInt8], zeros: Int)? {
        let utf8 = Array(path.utf8)
        guard utf8.first == UInt8(ascii: "/") else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = 1
        while index < utf8.count {
            let byte = utf8[index]
            switch byte {
            case UInt8(ascii: "!") where index + 1 < utf8.count && utf8[index + 1] == UInt8(ascii: "#"):
                guard bytes.last != 0, let zeros = run(utf8[(index + 2)...]), bytes.count + zeros <= maxKeyBytes else { return nil }
                return (bytes, zeros)
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
        guard !bytes.isEmpty, bytes.last != 0 else { return nil }
        return (bytes, 0)
    }

    /// The length a run token's tail (after `!#`) names: one digit `1`…`9` counting the
    /// digits that follow, then that many digits without a leading zero, ending the path.
    private static func run(_ tail: ArraySlice<UInt8>) -> Int? {
        guard let count = tail.first, (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(count) else { return nil }
        let digits = tail.dropFirst()
        guard digits.count == Int(count - UInt8(ascii: "0")), digits.first != UInt8(ascii: "0"),
              digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    @usableFromInline static let digits = Array("0123456789ABCDEF".utf8)

    private static func unhex(_ high: UInt8, _ low: UInt8) -> UInt8? {
        guard let high = digits.firstIndex(of: high), let low = digits.firstIndex(of: low) else { return nil }
        return UInt8(high << 4 | low)
    }
}
