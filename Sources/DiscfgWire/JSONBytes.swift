import DiscfgCore
import Foundation

/// JSON being written: bytes in an array, which grows more cheaply a byte at a time
/// than a `ByteBuffer`; the envelope goes into the caller's buffer in one copy.
struct JSONBytes {
    var bytes: [UInt8] = []

    init() {
        bytes.reserveCapacity(512)
    }

    mutating func writeInteger(_ byte: UInt8) {
        bytes.append(byte)
    }

    mutating func writeStaticString(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func writeString(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }
}

extension JSONBytes {
    /// Writes `text` as a JSON string, escaped as `JSONEncoder` does: `"` and `\`, and
    /// control characters below U+0020 (`\b \t \n \f \r` by name, others as `\u00xx`).
    mutating func writeJSONString(_ text: String) {
        writeInteger(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            let needsEscaping = utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
            if !needsEscaping {
                bytes.append(contentsOf: utf8)
            } else {
                for byte in utf8 { writeEscaped(byte) }
            }
        }
        writeInteger(UInt8(ascii: "\""))
    }

    private mutating func writeEscaped(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): writeStaticString(#"\""#)
        case UInt8(ascii: "\\"): writeStaticString(#"\\"#)
        case 0x08: writeStaticString(#"\b"#)
        case 0x09: writeStaticString(#"\t"#)
        case 0x0A: writeStaticString(#"\n"#)
        case 0x0C: writeStaticString(#"\f"#)
        case 0x0D: writeStaticString(#"\r"#)
        case ..<0x20:
            writeStaticString(#"\u00"#)
            writeInteger(Self.hexDigits[Int(byte >> 4)])
            writeInteger(Self.hexDigits[Int(byte & 0xF)])
        default: writeInteger(byte)
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Writes `true` or `false`.
    mutating func writeJSONBool(_ value: Bool) {
        if value { writeStaticString("true") } else { writeStaticString("false") }
    }

    /// Writes a whole number in decimal.
    mutating func writeJSONNumber(_ value: some BinaryInteger) {
        guard var rest = UInt64(exactly: value.magnitude) else {
            writeString(String(value))
            return
        }
        if value < 0 { writeInteger(UInt8(ascii: "-")) }
        // Digits from the last into scratch space on the stack, then appended at once.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// Writes a time as ``TimestampFormat`` text in quotes, e.g. `"2026-01-31T12:00:00.000Z"`.
    mutating func writeJSONTimestamp(_ date: Date) {
        let (parts, millis) = TimestampFormat.utcParts(date)
        let year = Int(parts.tm_year) + 1900
        guard (0...9999).contains(year) else {
            // Out of four-digit years: the general formatter's padding rules apply.
            writeInteger(UInt8(ascii: "\""))
            writeString(TimestampFormat.string(from: date))
            writeInteger(UInt8(ascii: "\""))
            return
        }
        writeInteger(UInt8(ascii: "\""))
        writeDigits(year, 4)
        writeInteger(UInt8(ascii: "-"))
        writeDigits(Int(parts.tm_mon) + 1, 2)
        writeInteger(UInt8(ascii: "-"))
        writeDigits(Int(parts.tm_mday), 2)
        writeInteger(UInt8(ascii: "T"))
        writeDigits(Int(parts.tm_hour), 2)
        writeInteger(UInt8(ascii: ":"))
        writeDigits(Int(parts.tm_min), 2)
        writeInteger(UInt8(ascii: ":"))
        writeDigits(Int(parts.tm_sec), 2)
        writeInteger(UInt8(ascii: "."))
        writeDigits(Int(millis), 3)
        writeInteger(UInt8(ascii: "Z"))
        writeInteger(UInt8(ascii: "\""))
    }

    /// Writes `value` (not negative, at most `width` digits) zero-padded to `width`.
    private mutating func writeDigits(_ value: Int, _ width: Int) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            writeInteger(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}
