import Foundation
import Synchronization

/// Where a config's snapshot is published: an S3 bucket and a key prefix, named
/// `s3://BUCKET/PREFIX`. Config `CONFIG` is the object `PREFIX/CONFIG.json` (`CONFIG.json`
/// with no prefix), one PublishedSnapshot document.
///
/// Set per config with `discfg update CONFIG --publish s3://BUCKET/PREFIX` (the stream
/// function publishes after each change), or used once by `discfg publish`.
public struct SnapshotDestination: Hashable, Sendable, CustomStringConvertible {
    /// The bucket: 3 to 63 lowercase letters, digits and hyphens, starting and ending
    /// with a letter or digit (S3's rules, less dots, which break HTTPS to a bucket's
    /// virtual host).
    public let bucket: String
    /// The key prefix without leading or trailing slashes; may be empty.
    public let prefix: String

    /// The longest location taken, leaving room in S3's 1024-byte keys for a config name.
    public static let maxPrefixBytes = 700

    /// The whole language of locations, as `docs/openapi.yaml` declares it (with
    /// ``maxPrefixBytes`` as its length): the bucket, then segments of letters, digits and
    /// `! - _ . * ' ( )`, none of them `.` or `..`, then any trailing slashes.
    /// ``pattern``, compiled once: settings holding a location are decoded on every read
    /// of a config's meta item.
    private static let compiled = Mutex(try! Regex(pattern))

    /// Whether `text` is in ``pattern``'s language.
    static func matches(_ text: String) -> Bool {
        compiled.withLock { (try? $0.wholeMatch(in: text)) != nil }
    }

    public static let pattern =
        #"^[sS]3://[a-z0-9][a-z0-9-]{1,61}[a-z0-9](/(?:[A-Za-z0-9!_*'()-][A-Za-z0-9!_.*'()-]*|\.[A-Za-z0-9!_*'()-][A-Za-z0-9!_.*'()-]*|\.\.[A-Za-z0-9!_.*'()-]+))*/*$"#

    /// Parses `s3://BUCKET` or `s3://BUCKET/PREFIX`.
    ///
    /// - Parameter field: the flag or field named in the error.
    /// - Throws: `invalidArgument` naming what is wrong: the scheme, a missing or bad
    ///   bucket, a prefix with control characters, `.`/`..` segments or too long.
    public init(parsing text: String, field: String = "publish") throws {
        guard text.lowercased().hasPrefix("s3://") else {
            throw DiscfgError.invalid(field, "\"\(text.debugEscaped)\" is not an S3 location: use s3://BUCKET/PREFIX")
        }
        let rest = text.dropFirst("s3://".count)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let bucket = String(rest[..<slash])
        guard !bucket.isEmpty else {
            throw DiscfgError.invalid(field, "\"\(text.debugEscaped)\" names no bucket: use s3://BUCKET/PREFIX")
        }
        try Self.check(bucket: bucket, field: field)
        var prefix = slash < rest.endIndex ? String(rest[rest.index(after: slash)...]) : ""
        while prefix.hasSuffix("/") { prefix.removeLast() }
        try Self.check(prefix: prefix, field: field)
        guard text.utf8.count <= Self.maxPrefixBytes, Self.matches(text) else {
            throw DiscfgError.invalid(
                field, "\"\(text.debugEscaped)\" is not an S3 location discfg takes: s3://BUCKET/PREFIX of at most \(Self.maxPrefixBytes) bytes, the prefix of letters, digits, / and ! - _ . * ' ( )"
            )
        }
        self.bucket = bucket
        self.prefix = prefix
    }

    /// The object key of `config`'s snapshot: `PREFIX/CONFIG.json`.
    public func key(for config: ConfigName) -> String {
        prefix.isEmpty ? "\(config.rawValue).json" : "\(prefix)/\(config.rawValue).json"
    }

    /// `s3://BUCKET/PREFIX`.
    public var description: String { prefix.isEmpty ? "s3://\(bucket)" : "s3://\(bucket)/\(prefix)" }

    /// The snapshot object's user metadata name holding its revision (`x-amz-meta-discfg-revision`).
    public static let revisionMetadata = "discfg-revision"

    private static func check(bucket: String, field: String) throws {
        let bytes = Array(bucket.utf8)
        func isAlphanumeric(_ byte: UInt8) -> Bool { (0x61...0x7a).contains(byte) || (0x30...0x39).contains(byte) }
        guard (3...63).contains(bytes.count),
              bytes.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: "-") }),
              isAlphanumeric(bytes[0]), isAlphanumeric(bytes[bytes.count - 1])
        else {
            throw DiscfgError.invalid(
                field, "\"\(bucket.debugEscaped)\" is not an S3 bucket name discfg takes: 3 to 63 lowercase letters, digits and hyphens, starting and ending with a letter or digit (no dots)"
            )
        }
    }

    private static func check(prefix: String, field: String) throws {
        guard prefix.utf8.count <= maxPrefixBytes else {
            throw DiscfgError.invalid(field, "the S3 prefix is \(prefix.utf8.count) bytes; at most \(maxPrefixBytes)")
        }
        guard !prefix.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) }) else {
            throw DiscfgError.invalid(field, "the S3 prefix \"\(prefix.debugEscaped)\" has control characters")
        }
        let segments = prefix.split(separator: "/", omittingEmptySubsequences: false)
        guard prefix.isEmpty || !segments.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
            throw DiscfgError.invalid(field, "the S3 prefix \"\(prefix.debugEscaped)\" has an empty, . or .. segment")
        }
    }
}

extension SnapshotDestination: Codable {
    public init(from decoder: any Decoder) throws {
        try self.init(parsing: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
