import DiscfgCore
import Foundation
import Hummingbird

/// Writes the envelopes of the busy routes (items, events, errors, listings) as compact
/// JSON straight into a buffer, byte for byte what `JSONEncoder.discfg(pretty: false)`
/// writes: keys in byte order, absent fields left out, `/` unescaped, dates as
/// ``TimestampFormat`` text. Much cheaper than `Codable` on every response.
///
/// Envelopes carrying config documents or a table go through `JSONEncoder` instead
/// (``write(_:to:)`` returns false for them): those routes are rare and config settings
/// have more shapes than are worth repeating here.
///
/// ```swift
/// var buffer = ByteBuffer()
/// if !EnvelopeJSON.write(envelope, to: &buffer) { /* use JSONEncoder */ }
/// ```
enum EnvelopeJSON {
    /// Appends `envelope` as JSON; false, with nothing written, when it holds a part
    /// this writer leaves to `JSONEncoder`.
    static func write(_ envelope: Envelope, to buffer: inout ByteBuffer) -> Bool {
        guard envelope.configInfo == nil, envelope.configs == nil, envelope.table == nil else { return false }
        var object = JSONObjectWriter(&buffer)
        object.key("action", &buffer); buffer.writeJSONString(envelope.action)
        if let at = envelope.at { object.key("at", &buffer); buffer.writeJSONTimestamp(at) }
        if let compacted = envelope.compactedRevision { object.key("compactedRevision", &buffer); buffer.writeJSONNumber(compacted.rawValue) }
        if let config = envelope.config { object.key("config", &buffer); buffer.writeJSONString(config) }
        if let current = envelope.currentDiscfg { object.key("currentDiscfg", &buffer); buffer.writeJSONString(current) }
        if let cursor = envelope.cursor { object.key("cursor", &buffer); buffer.writeJSONString(cursor) }
        if let error = envelope.error { object.key("error", &buffer); write(error, to: &buffer) }
        if let event = envelope.event { object.key("event", &buffer); write(event, to: &buffer) }
        if let events = envelope.events { object.key("events", &buffer); writeArray(events, to: &buffer, write) }
        if let item = envelope.item { object.key("item", &buffer); write(item, to: &buffer) }
        if let items = envelope.items { object.key("items", &buffer); writeArray(items, to: &buffer, write) }
        if let message = envelope.message { object.key("message", &buffer); buffer.writeJSONString(message) }
        if let prefixes = envelope.prefixes { object.key("prefixes", &buffer); writeArray(prefixes, to: &buffer) { $1.writeJSONString($0) } }
        if let prevItem = envelope.prevItem { object.key("prevItem", &buffer); write(prevItem, to: &buffer) }
        if let revision = envelope.revision { object.key("revision", &buffer); buffer.writeJSONNumber(revision.rawValue) }
        if let unchanged = envelope.unchanged { object.key("unchanged", &buffer); buffer.writeJSONNumber(unchanged) }
        object.close(&buffer)
        return true
    }

    private static func write(_ item: ItemDocument, to buffer: inout ByteBuffer) {
        var object = JSONObjectWriter(&buffer)
        if let contentType = item.contentType { object.key("contentType", &buffer); buffer.writeJSONString(contentType) }
        object.key("createRevision", &buffer); buffer.writeJSONNumber(item.createRevision.rawValue)
        if let encoding = item.encoding { object.key("encoding", &buffer); buffer.writeJSONString(encoding) }
        if let expiresAt = item.expiresAt { object.key("expiresAt", &buffer); buffer.writeJSONTimestamp(expiresAt) }
        object.key("key", &buffer); buffer.writeJSONString(item.key)
        object.key("modRevision", &buffer); buffer.writeJSONNumber(item.modRevision.rawValue)
        object.key("modified", &buffer); buffer.writeJSONTimestamp(item.modified)
        object.key("value", &buffer); buffer.writeJSONString(item.value)
        object.key("version", &buffer); buffer.writeJSONNumber(item.version)
        object.close(&buffer)
    }

    private static func write(_ event: EventDocument, to buffer: inout ByteBuffer) {
        var object = JSONObjectWriter(&buffer)
        object.key("at", &buffer); buffer.writeJSONTimestamp(event.at)
        if let item = event.item { object.key("item", &buffer); write(item, to: &buffer) }
        object.key("key", &buffer); buffer.writeJSONString(event.key)
        if let prevItem = event.prevItem { object.key("prevItem", &buffer); write(prevItem, to: &buffer) }
        object.key("revision", &buffer); buffer.writeJSONNumber(event.revision.rawValue)
        object.key("type", &buffer); buffer.writeJSONString(event.type.rawValue)
        object.close(&buffer)
    }

    private static func write(_ error: ErrorDocument, to buffer: inout ByteBuffer) {
        var object = JSONObjectWriter(&buffer)
        object.key("code", &buffer); buffer.writeJSONString(error.code.rawValue)
        if let field = error.field { object.key("field", &buffer); buffer.writeJSONString(field) }
        object.key("message", &buffer); buffer.writeJSONString(error.message)
        object.close(&buffer)
    }

    private static func writeArray<Element>(_ elements: [Element], to buffer: inout ByteBuffer, _ write: (Element, inout ByteBuffer) -> Void) {
        buffer.writeInteger(UInt8(ascii: "["))
        for (index, element) in elements.enumerated() {
            if index > 0 { buffer.writeInteger(UInt8(ascii: ",")) }
            write(element, &buffer)
        }
        buffer.writeInteger(UInt8(ascii: "]"))
    }
}

/// The commas and braces of one JSON object; its keys must be given in byte order.
private struct JSONObjectWriter {
    private var isEmpty = true

    init(_ buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(ascii: "{"))
    }

    mutating func key(_ name: StaticString, _ buffer: inout ByteBuffer) {
        if !isEmpty { buffer.writeInteger(UInt8(ascii: ",")) }
        isEmpty = false
        buffer.writeInteger(UInt8(ascii: "\""))
        buffer.writeStaticString(name)
        buffer.writeInteger(UInt8(ascii: "\""))
        buffer.writeInteger(UInt8(ascii: ":"))
    }

    func close(_ buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(ascii: "}"))
    }
}

extension ByteBuffer {
    /// Writes `text` as a JSON string, escaped as `JSONEncoder` does: `"` and `\`, and
    /// control characters below U+0020 (`\b \t \n \f \r` by name, others as `\u00xx`).
    mutating func writeJSONString(_ text: String) {
        writeInteger(UInt8(ascii: "\""))
        let needsEscaping = text.utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
        if !needsEscaping {
            writeString(text)
        } else {
            for byte in text.utf8 {
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
        }
        writeInteger(UInt8(ascii: "\""))
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Writes a whole number in decimal.
    mutating func writeJSONNumber(_ value: some BinaryInteger) {
        writeString(String(value))
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
