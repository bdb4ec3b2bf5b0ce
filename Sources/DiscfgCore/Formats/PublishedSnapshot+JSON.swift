import Foundation

/// The one writer and reader of the snapshot document's bytes.
extension PublishedSnapshot {
    /// The canonical body: every field but `sha256`, sorted, no spaces, items in key order.
    static func body(of snapshot: PublishedSnapshot) -> [UInt8] {
        var out = "{\"compactedRevision\":\(snapshot.compactedRevision.rawValue),\"config\":"
        out += quoted(snapshot.config.description)
        out += ",\"format\":\(quoted(format)),\"items\":["
        for (index, item) in snapshot.items.enumerated() {
            if index > 0 { out += "," }
            out += "{"
            if let contentType = item.contentType { out += "\"contentType\":\(quoted(contentType))," }
            out += "\"createRevision\":\(item.createRevision.rawValue),"
            if let expiresAt = item.expiresAt { out += "\"expiresAt\":\(quoted(timestamp(expiresAt)))," }
            out += "\"key\":\(quoted(item.key.path)),\"modRevision\":\(item.modRevision.rawValue),"
            out += "\"modifiedAt\":\(quoted(timestamp(item.modifiedAt))),\"value\":\(quoted(item.value.base64EncodedString())),"
            out += "\"version\":\(item.version)}"
        }
        out += "],\"revision\":\(snapshot.revision.rawValue)}"
        return Array(out.utf8)
    }

    /// A JSON string: only `"`, `\` and control characters escaped, so one text has one spelling.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// The latest time a document holds: the last millisecond of year 9999.
    static let maxMilliseconds: Int64 = 253_402_300_799_999

    /// `2026-11-26T22:45:41.123Z`: UTC, always three fraction digits.
    static func timestamp(_ date: Date) -> String {
        let ms = min(max(date.milliseconds, 0), maxMilliseconds)
        let seconds = Date(timeIntervalSince1970: Double(ms / 1000)).formatted(.iso8601)
        let fraction = String(ms % 1000)
        return seconds.dropLast() + "." + String(repeating: "0", count: 3 - fraction.count) + fraction + "Z"
    }

    static func parseTimestamp(_ text: String, field: String) throws -> Date {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard text.utf8.count == 24, parts.count == 2, parts[1].count == 4, parts[1].hasSuffix("Z"),
            let fraction = Int64(parts[1].dropLast()), fraction >= 0,
            let whole = try? Date(String(parts[0]) + "Z", strategy: .iso8601)
        else {
            throw refusal("\(field) \(quoted(String(text.prefix(40)))) is not a time like 2026-11-26T22:45:41.123Z")
        }
        return Date(milliseconds: Int64(whole.timeIntervalSince1970) * 1000 + fraction)
    }

    /// The document as JSON types; ``snapshot()`` checks every value.
    struct Document: Decodable {
        var compactedRevision: UInt64
        var config: String
        var format: String
        var items: [Entry]
        var revision: UInt64

        struct Entry: Decodable {
            var contentType: String?
            var createRevision: UInt64
            var expiresAt: String?
            var key: String
            var modRevision: UInt64
            var modifiedAt: String
            var value: String
            var version: UInt64
        }

        func snapshot() throws -> PublishedSnapshot {
            let name: ConfigName
            do { name = try ConfigName(config) } catch {
                throw refusal("config \(quoted(String(config.prefix(80)))) is not a config name")
            }
            var converted: [Item] = []
            converted.reserveCapacity(items.count)
            for entry in items {
                let key: Key
                do { key = try Key(entry.key) } catch {
                    throw refusal("key \(quoted(String(entry.key.prefix(80)))) is not a key")
                }
                guard let value = Data(base64Encoded: entry.value) else {
                    throw refusal("the value of \(key) is not base64")
                }
                try Limits.validateValue(value)
                if let contentType = entry.contentType { try Limits.validateContentType(contentType) }
                converted.append(
                    Item(
                        key: key, value: value, contentType: entry.contentType, version: entry.version,
                        createRevision: Revision(entry.createRevision), modRevision: Revision(entry.modRevision),
                        modifiedAt: try parseTimestamp(entry.modifiedAt, field: "modifiedAt of \(key)"),
                        expiresAt: try entry.expiresAt.map { try parseTimestamp($0, field: "expiresAt of \(key)") }
                    ))
            }
            for (earlier, later) in zip(converted, converted.dropFirst()) where earlier.key >= later.key {
                throw refusal(earlier.key == later.key ? "key \(later.key) appears more than once" : "keys are not in key order at \(later.key)")
            }
            return try PublishedSnapshot(
                config: name, revision: Revision(revision), compactedRevision: Revision(compactedRevision), items: converted)
        }
    }
}
