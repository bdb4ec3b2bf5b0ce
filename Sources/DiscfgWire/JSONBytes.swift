import DiscfgCore
import Foundation

/// JSON being written, into storage of its own: a byte written costs a store and a
/// count, where an array's append checks its uniqueness and its capacity for each one
/// (an envelope is hundreds of small writes). The envelope leaves it in one copy.
struct JSONBytes: ~Copyable {
    private var start: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int

    init(capacity: Int = 512) {
        self.capacity = capacity
        start = .allocate(capacity: capacity)
    }

    deinit {
        start.deallocate()
    }

    /// The bytes written so far.
    var bytes: [UInt8] { withBytes { Array($0) } }

    /// Runs `body` with the bytes written so far, where they lie.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: start, count: count))
    }

    @inline(__always)
    mutating func writeInteger(_ byte: UInt8) {
        if count == capacity { grow(toHold: 1) }
        start[count] = byte
        count += 1
    }

    mutating func write(_ source: UnsafeBufferPointer<UInt8>) {
        guard let base = source.baseAddress, !source.isEmpty else { return }
        if capacity - count < source.count { grow(toHold: source.count) }
        (start + count).initialize(from: base, count: source.count)
        count += source.count
    }

    mutating func writeStaticString(_ text: StaticString) {
        write(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func writeString(_ text: String) {
        var text = text
        text.withUTF8 { write($0) }
    }

    /// Room for `more` bytes past those written: at least twice the room it had.
    @inline(never)
    private mutating func grow(toHold more: Int) {
        let (needed, overflow) = count.addingReportingOverflow(more)
        precondition(!overflow, "JSON past the address space")
        let larger = max(needed, capacity * 2)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.initialize(from: start, count: count)
        start.deallocate()
        start = moved
        capacity = larger
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
                write(utf8)
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
            write(UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// Writes a time as ``TimestampFormat`` text in quotes, e.g. `"2026-01-31T12:00:00.000Z"`.
    mutating func writeJSONTimestamp(_ date: Date) {
        let parts = TimestampFormat.utcParts(date)
        guard (0...9999).contains(parts.year) else {
            // Out of four-digit years: the general formatter's padding rules apply.
            writeInteger(UInt8(ascii: "\""))
            writeString(TimestampFormat.string(from: date))
            writeInteger(UInt8(ascii: "\""))
            return
        }
        writeInteger(UInt8(ascii: "\""))
        writeDigits(parts.year, 4)
        writeInteger(UInt8(ascii: "-"))
        writeDigits(parts.month, 2)
        writeInteger(UInt8(ascii: "-"))
        writeDigits(parts.day, 2)
        writeInteger(UInt8(ascii: "T"))
        writeDigits(parts.hour, 2)
        writeInteger(UInt8(ascii: ":"))
        writeDigits(parts.minute, 2)
        writeInteger(UInt8(ascii: ":"))
        writeDigits(parts.second, 2)
        writeInteger(UInt8(ascii: "."))
        writeDigits(parts.millisecond, 3)
        writeInteger(UInt8(ascii: "Z"))
        writeInteger(UInt8(ascii: "\""))
    }

    /// Writes `value` (not negative, at most `width` digits) zero-padded to `width`: its
    /// digits from the last, straight into their places.
    @inline(__always)
    private mutating func writeDigits(_ value: Int, _ width: Int) {
        if capacity - count < width { grow(toHold: width) }
        var rest = value
        for index in stride(from: count + width - 1, through: count, by: -1) {
            start[index] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
        }
        count += width
    }
}

/// The commas and braces of one JSON object; its keys must be given in byte order.
struct JSONObjectWriter {
    private var isEmpty = true

    init(_ buffer: inout JSONBytes) {
        buffer.writeInteger(UInt8(ascii: "{"))
    }

    mutating func key(_ name: StaticString, _ buffer: inout JSONBytes) {
        if !isEmpty { buffer.writeInteger(UInt8(ascii: ",")) }
        isEmpty = false
        buffer.writeInteger(UInt8(ascii: "\""))
        buffer.writeStaticString(name)
        buffer.writeInteger(UInt8(ascii: "\""))
        buffer.writeInteger(UInt8(ascii: ":"))
    }

    func close(_ buffer: inout JSONBytes) {
        buffer.writeInteger(UInt8(ascii: "}"))
    }
}
