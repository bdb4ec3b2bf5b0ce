/// Deterministic CBOR (RFC 8949 §4.2.1) of a targeting value: what the current generation of
/// flagd's `fractional` hashes.
///
/// Integers in their shortest head; floats in the shortest of half, single and double
/// precision that keeps the value, except that a float with no fraction that fits 64 bits is
/// written as the integer (flagd's number normalisation, so `10` and `10.0` bucket alike);
/// map keys ordered by their encoded bytes.
///
/// ```swift
/// CanonicalCBOR.encode(.array([.string("my-flag"), .string("user-123")]))
/// // 82 67 6d792d666c6167 68 757365722d313233
/// ```
enum CanonicalCBOR {
    /// The encoding of `value`.
    static func encode(_ value: LogicValue) -> [UInt8] {
        var out: [UInt8] = []
        write(value, into: &out)
        return out
    }

    private static func write(_ value: LogicValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(0xf6)
        case .bool(let b): out.append(b ? 0xf5 : 0xf4)
        case .int(let i): writeInteger(i, into: &out)
        case .float(let d):
            if d.isFinite, d == d.rounded(.towardZero), d >= -9_223_372_036_854_775_808.0, d < 18_446_744_073_709_551_616.0 {
                if d < 0 {
                    writeHead(1, UInt64(-d) - 1, into: &out)  // -d is exact; d + 1 would round near -2^63
                } else {
                    writeHead(0, UInt64(d), into: &out)
                }
            } else {
                writeFloat(d, into: &out)
            }
        case .string(let s):
            writeHead(3, UInt64(s.utf8.count), into: &out)
            out.append(contentsOf: s.utf8)
        case .array(let items):
            writeHead(4, UInt64(items.count), into: &out)
            for item in items { write(item, into: &out) }
        case .object(let object):
            writeHead(5, UInt64(object.count), into: &out)
            let entries = object.members.map { member -> (key: [UInt8], value: LogicValue) in
                (encode(.string(member.key)), member.value)
            }
            for entry in entries.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
                out.append(contentsOf: entry.key)
                write(entry.value, into: &out)
            }
        }
    }

    private static func writeInteger(_ i: Int, into out: inout [UInt8]) {
        if i >= 0 {
            writeHead(0, UInt64(i), into: &out)
        } else {
            writeHead(1, UInt64(-(i + 1)), into: &out)
        }
    }

    private static func writeHead(_ major: UInt8, _ argument: UInt64, into out: inout [UInt8]) {
        let type = major << 5
        switch argument {
        case 0..<24: out.append(type | UInt8(argument))
        case 24..<0x100: out += [type | 24, UInt8(argument)]
        case 0x100..<0x1_0000: out.append(type | 25); append(argument, bytes: 2, into: &out)
        case 0x1_0000..<0x1_0000_0000: out.append(type | 26); append(argument, bytes: 4, into: &out)
        default: out.append(type | 27); append(argument, bytes: 8, into: &out)
        }
    }

    private static func append(_ value: UInt64, bytes: Int, into out: inout [UInt8]) {
        for shift in stride(from: (bytes - 1) * 8, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    private static func writeFloat(_ d: Double, into out: inout [UInt8]) {
        if d.isNaN { out += [0xf9, 0x7e, 0x00]; return }
        if d.isInfinite { out += d > 0 ? [0xf9, 0x7c, 0x00] : [0xf9, 0xfc, 0x00]; return }
        let single = Float(d)
        guard Double(single) == d else {
            out.append(0xfb)
            append(d.bitPattern, bytes: 8, into: &out)
            return
        }
        if let half = halfBits(d) {
            out.append(0xf9)
            append(UInt64(half), bytes: 2, into: &out)
        } else {
            out.append(0xfa)
            append(UInt64(single.bitPattern), bytes: 4, into: &out)
        }
    }

    /// The IEEE half-precision bits of `d` when it holds `d` exactly (subnormals included).
    private static func halfBits(_ d: Double) -> UInt16? {
        let sign: UInt16 = d.sign == .minus ? 0x8000 : 0
        let magnitude = abs(d)
        if magnitude == 0 { return sign }
        // The largest finite half is 65504; the reference's packer refuses it and above.
        guard magnitude < 65504 else { return nil }
        let exponent = Int(magnitude.exponent)
        if exponent >= -14 {
            let significand = magnitude.significandBitPattern
            guard significand & ((1 << 42) - 1) == 0 else { return nil }
            return sign | UInt16(exponent + 15) << 10 | UInt16(significand >> 42)
        }
        let scaled = magnitude * 16_777_216  // 2^24: one unit of the smallest subnormal
        guard scaled == scaled.rounded(.towardZero), scaled < 1024 else { return nil }
        return sign | UInt16(scaled)
    }
}
