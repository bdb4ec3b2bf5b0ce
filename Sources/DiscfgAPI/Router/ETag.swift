import DiscfgCore
import Foundation

/// Entity tags: a key's modRevision, quoted; how `If-None-Match` lists are matched and
/// how `If-Match` values are read, for the router and the event loops alike.
enum ETag {
    static func value(_ revision: Revision) -> String { "\"\(revision.rawValue)\"" }

    /// Whether an `If-None-Match` list (`"a", W/"b"` or `*`) names `tag` (a quoted entity
    /// tag), compared weakly as RFC 9110 asks of `If-None-Match`: `W/` and the quotes
    /// aside, the same characters. Reads the bytes in place: the event loops ask this of
    /// every conditional read.
    static func listMatches(_ header: String, _ tag: String) -> Bool {
        var header = header
        var tag = tag
        return header.withUTF8 { list in
            tag.withUTF8 { tag in listMatches(list, opaque: opaque(tag, from: 0, to: tag.count)) }
        }
    }

    private static func listMatches(_ list: UnsafeBufferPointer<UInt8>, opaque wanted: UnsafeBufferPointer<UInt8>.SubSequence) -> Bool {
        var start = 0
        while start <= list.count {
            var end = start
            while end < list.count, list[end] != UInt8(ascii: ",") { end += 1 }
            var low = start
            var high = end
            while low < high, list[low] == UInt8(ascii: " ") || list[low] == UInt8(ascii: "\t") { low += 1 }
            while high > low, list[high - 1] == UInt8(ascii: " ") || list[high - 1] == UInt8(ascii: "\t") { high -= 1 }
            if high - low == 1, list[low] == UInt8(ascii: "*") { return true }
            if high > low, opaque(list, from: low, to: high).elementsEqual(wanted) { return true }
            start = end + 1
        }
        return false
    }

    /// An entity tag's bytes without `W/` and its quotes.
    private static func opaque(_ bytes: UnsafeBufferPointer<UInt8>, from low: Int, to high: Int) -> UnsafeBufferPointer<UInt8>.SubSequence {
        var low = low
        var high = high
        if high - low >= 2, bytes[low] == UInt8(ascii: "W"), bytes[low + 1] == UInt8(ascii: "/") { low += 2 }
        if high - low >= 2, bytes[low] == UInt8(ascii: "\""), bytes[high - 1] == UInt8(ascii: "\"") {
            low += 1
            high -= 1
        }
        return bytes[low..<high]
    }

    /// The revision in an `If-Match` / `If-None-Match` value such as `"12"`, `W/"12"` or `12`.
    static func revision(in text: Substring, header: String) throws -> Revision {
        var value = text.trimmingCharacters(in: .whitespaces)
        if value.hasPrefix("W/") { value.removeFirst(2) }
        if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
        do {
            return Revision(UInt64(try NumberField.revision(header).parse(value)))
        } catch {
            let shown = text.count > 40 ? String(text.prefix(40)) + "…" : String(text)
            throw DiscfgError(
                .invalidArgument,
                "\(header) must be * or a quoted revision from 0 to \(Revision.max) such as \"12\", got \(shown)", field: header
            )
        }
    }
}
