import Foundation

/// An absolute key path such as `/db/host`.
///
/// Keys are normalized on the way in: a missing leading slash is added (as the original
/// discfg did) and the text is put in Unicode NFC so that keys which look the same are
/// the same. A key is at most 1024 bytes of UTF-8, has no empty, `.` or `..` segment, no
/// control characters and no trailing slash; `/` alone is not a key.
///
/// Keys sort by their UTF-8 bytes, the order SQLite and DynamoDB use.
public struct Key: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    /// The longest key allowed, in bytes of UTF-8.
    public static let maxBytes = 1024

    /// The normalized path, always starting with `/`.
    public let path: String

    /// Normalizes and validates `raw` as a key.
    /// - Throws: ``DiscfgError`` with code `invalidArgument` naming what is wrong.
    public init(_ raw: String) throws {
        let path = try Self.normalize(raw, field: "key", what: "key")
        if path == "/" {
            throw DiscfgError.invalid("key", "\"/\" is not a key; name a key such as /app/name")
        }
        if path.hasSuffix("/") {
            throw DiscfgError.invalid("key", "key \"\(raw.debugEscaped)\" ends with '/'; a key names a value, not a directory")
        }
        self.path = path
    }

    /// A key read back from storage, which validated it when it was written.
    public init(stored path: String) {
        self.path = path
    }

    /// The path's segments, e.g. `["db", "host"]` for `/db/host`.
    public var segments: [Substring] { path.dropFirst().split(separator: "/", omittingEmptySubsequences: false) }

    public var description: String { path }

    public static func < (lhs: Key, rhs: Key) -> Bool { lhs.path.utf8.lexicographicallyPrecedes(rhs.path.utf8) }

    public init(from decoder: any Decoder) throws {
        try self.init(decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(path)
    }

    /// Adds the leading slash, applies NFC, and checks length, characters and segments.
    /// A trailing slash is allowed here; ``Key`` and ``KeyPrefix`` decide what it means.
    static func normalize(_ raw: String, field: String, what: String) throws -> String {
        if isPlain(raw) { return raw }
        // ASCII is already in NFC; only other text pays for Foundation's normalization.
        let isASCII = raw.utf8.allSatisfy { $0 < 0x80 }
        var path = isASCII ? raw : raw.precomposedStringWithCanonicalMapping
        if !path.hasPrefix("/") { path = "/" + path }
        guard path.utf8.count <= maxBytes else {
            throw DiscfgError.invalid(field, "\(what) is \(path.utf8.count) bytes; the limit is \(maxBytes)")
        }
        // In ASCII the control characters are the bytes below 0x20 and 0x7F.
        let hasControl = isASCII
            ? path.utf8.contains { $0 < 0x20 || $0 == 0x7F }
            : path.unicodeScalars.contains { $0.properties.generalCategory == .control }
        if hasControl, let bad = path.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            throw DiscfgError.invalid(field, "\(what) \"\(raw.debugEscaped)\" contains the control character U+\(String(format: "%04X", bad.value))")
        }
        var segments = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        if path.count > 1, path.hasSuffix("/") { segments.removeLast() }
        if path == "/" { segments = [] }
        for segment in segments {
            switch segment {
            case "": throw DiscfgError.invalid(field, "\(what) \"\(raw.debugEscaped)\" has an empty segment (\"//\")")
            case ".", "..": throw DiscfgError.invalid(field, "\(what) \"\(raw.debugEscaped)\" has a \"\(segment)\" segment")
            default: continue
            }
        }
        return path
    }

    /// Whether `raw` is already a normalized path, told in one pass over its bytes: ASCII
    /// (so in NFC), a leading `/`, at most ``maxBytes``, no control character, and no
    /// empty, `.` or `..` segment but a trailing slash's. Anything else takes the general
    /// path, which also words what is wrong.
    private static func isPlain(_ raw: String) -> Bool {
        var raw = raw
        return raw.withUTF8 { bytes in
            guard bytes.count <= maxBytes, bytes.first == UInt8(ascii: "/") else { return false }
            var segmentStart = 1
            var dots = 0
            for index in 1..<bytes.count {
                let byte = bytes[index]
                guard byte >= 0x20, byte < 0x7F else { return false }
                if byte == UInt8(ascii: "/") {
                    let length = index - segmentStart
                    if length == 0 || (length == dots && dots <= 2) { return false }
                    segmentStart = index + 1
                    dots = 0
                } else if byte == UInt8(ascii: ".") {
                    dots += 1
                }
            }
            // The last segment: empty only after a trailing slash (or for "/" alone).
            let length = bytes.count - segmentStart
            return length == 0 || !(length == dots && dots <= 2)
        }
    }
}

/// A directory of keys: `/` for all keys, or a path ending in `/` such as `/db/`.
///
/// `/db` and `/db/` name the same prefix, so a prefix never matches a sibling that only
/// shares leading characters (`/db/` does not match `/dbx`).
public struct KeyPrefix: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    /// Every key in a config.
    public static let root = KeyPrefix(validated: "/")

    /// The normalized path, always starting and ending with `/`.
    public let path: String

    /// Normalizes and validates `raw` as a prefix; `""` and `"/"` both mean the root.
    /// - Throws: ``DiscfgError`` with code `invalidArgument` naming what is wrong.
    public init(_ raw: String) throws {
        var path = try Key.normalize(raw, field: "prefix", what: "prefix")
        if !path.hasSuffix("/") { path += "/" }
        self.path = path
    }

    init(validated path: String) {
        self.path = path
    }

    /// Whether `key` lies under this prefix.
    public func contains(_ key: Key) -> Bool { key.path.hasPrefix(path) }

    /// The first path after every key under this prefix, for range scans: the prefix
    /// with its trailing `/` replaced by the next byte, `0`.
    public var upperBound: String { String(path.dropLast()) + "0" }

    public var description: String { path }

    public static func < (lhs: KeyPrefix, rhs: KeyPrefix) -> Bool { lhs.path.utf8.lexicographicallyPrecedes(rhs.path.utf8) }

    public init(from decoder: any Decoder) throws {
        try self.init(decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(path)
    }
}
