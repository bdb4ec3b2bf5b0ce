import Crypto
import Foundation

/// A config's whole state at one revision as one self-checking JSON document: what
/// `discfg publish` puts in S3 and what `discfg agent` keeps as its last known good copy.
///
/// The same state always gives the same bytes: fields in sorted order, items in key order,
/// times in whole milliseconds and no time of publishing, so a file's hash (or an S3 ETag)
/// stands for its revision. A `sha256` field covers every other byte; a truncated, edited
/// or foreign document fails ``init(decoding:maxBytes:key:)`` with one error naming the problem.
/// Anyone can compute a sha256, so it tells damage, not forgery: signed with a
/// ``SnapshotKey``, a last `signature` field (HMAC-SHA256 of the same bytes) follows it,
/// and a reader given the key takes no document without a valid one.
///
/// ```json
/// {"compactedRevision":0,"config":"myapp","format":"discfg-snapshot/1",
///  "items":[{"createRevision":1,"key":"/db/host","modRevision":3,
///            "modifiedAt":"2026-11-26T22:45:41.123Z","value":"ZGIx","version":2}],
///  "revision":3,"sha256":"…"}
/// ```
///
/// Sealed secrets are values like any other and stay sealed.
public struct PublishedSnapshot: Hashable, Sendable {
    /// The `format` field: names this layout and its version.
    public static let format = "discfg-snapshot/1"
    /// The largest document decoded by default: a config's live items at their limit,
    /// base64 and metadata included.
    public static let defaultMaxBytes = Limits.maxSnapshotBytes * 2

    /// The config it holds.
    public var config: ConfigName
    /// The revision its items are at.
    public var revision: Revision
    /// History at or below this revision was dropped in the source when it was read.
    public var compactedRevision: Revision
    /// The live items, in key order, one per key.
    public var items: [Item]

    /// Creates a snapshot; items are sorted by key and their times kept to the millisecond.
    ///
    /// - Throws: ``DiscfgError`` `invalidArgument` when a key appears twice or a revision
    ///   or version is past ``Revision/max``.
    public init(config: ConfigName, revision: Revision, compactedRevision: Revision = .zero, items: [Item]) throws {
        self.config = config
        self.revision = revision
        self.compactedRevision = compactedRevision
        self.items = items.sorted { $0.key < $1.key }.map(Self.normalized)
        try check()
    }

    /// The document's bytes: deterministic for the same state (and key), ending in a newline.
    /// - Parameter key: when given, a `signature` field follows `sha256`: HMAC-SHA256 of
    ///   the same bytes under the key, which only a holder of the key can make.
    public func encoded(signedWith key: SnapshotKey? = nil) -> Data {
        let body = Self.body(of: self)
        var document = body
        document.removeLast()  // the closing brace
        document.append(contentsOf: Array(",\"sha256\":\"\(Self.sha256(body))\"".utf8))
        if let key { document.append(contentsOf: Array(",\"signature\":\"\(key.signature(of: body))\"".utf8)) }
        document.append(contentsOf: Array("}\n".utf8))
        return Data(document)
    }

    /// Reads a document, refusing anything but an intact one.
    ///
    /// - Parameters:
    ///   - data: the bytes, from a file or the network.
    ///   - maxBytes: the most bytes read (``defaultMaxBytes`` unless told).
    ///   - key: when given, the document must carry a `signature` made with it; without
    ///     one, a signature is not checked (the sha256 tells damage, not forgery).
    /// - Throws: ``DiscfgError`` `invalidArgument` (field `snapshot`) naming what is wrong:
    ///   too large, not JSON, another format, a failed integrity check, a bad field, no
    ///   signature or one made with another key.
    public init(decoding data: Data, maxBytes: Int = PublishedSnapshot.defaultMaxBytes, key: SnapshotKey? = nil) throws {
        guard data.count <= maxBytes else {
            throw Self.refusal("it is \(ByteSize.text(data.count)), over the \(ByteSize.text(maxBytes)) a snapshot may be")
        }
        let (bytes, signature) = try Self.splitSignature([UInt8](data))
        let (body, digest) = try Self.split(bytes)
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: Data(body))
        } catch let error as DiscfgError {
            throw error
        } catch {
            throw Self.refusal("it is not a discfg snapshot document (\(Self.describe(error)))")
        }
        guard document.format == Self.format else {
            throw Self.refusal("its format is \"\(document.format.prefix(64))\"; this discfg reads \"\(Self.format)\"")
        }
        guard Self.sha256(body) == digest else {
            throw Self.refusal("its sha256 does not match its contents: the file was changed or cut short")
        }
        if let key {
            guard let signature else {
                throw Self.refusal("it is not signed, and only snapshots signed with the snapshot key are taken")
            }
            guard key.verifies(signature, of: body) else {
                throw Self.refusal("its signature does not match: it was not made with the snapshot key, or was changed")
            }
        }
        self = try document.snapshot()
        guard Self.body(of: self) == body else {
            throw Self.refusal("it is not in canonical form (fields, order or spelling were changed)")
        }
    }

    private func check() throws {
        guard revision <= .max, compactedRevision <= revision else {
            throw Self.refusal("revision \(revision.rawValue) with compacted revision \(compactedRevision.rawValue) is out of range")
        }
        var previous: Key?
        for item in items {
            if let previous, previous >= item.key {
                throw Self.refusal("key \(item.key) appears more than once")
            }
            guard item.version >= 1, item.version <= Revision.max.rawValue,
                item.createRevision <= item.modRevision, item.modRevision <= revision, item.createRevision >= Revision(1)
            else {
                throw Self.refusal("key \(item.key) has version \(item.version), revisions \(item.createRevision.rawValue)…\(item.modRevision.rawValue) out of range for revision \(revision.rawValue)")
            }
            previous = item.key
        }
    }

    /// The error for a document that is not read, naming `problem`.
    public static func refusal(_ problem: String) -> DiscfgError {
        DiscfgError.invalid("snapshot", "snapshot refused: \(problem)")
    }

    private static func normalized(_ item: Item) -> Item {
        var item = item
        item.modifiedAt = Date(milliseconds: item.modifiedAt.milliseconds)
        item.expiresAt = item.expiresAt.map { Date(milliseconds: $0.milliseconds) }
        return item
    }

    private static func sha256(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    /// Splits `…,"signature":"<64 hex>"}\n` into the document without it (`…}`) and the
    /// signature; a document without one is returned whole, with nil.
    private static func splitSignature(_ bytes: [UInt8]) throws -> (document: [UInt8], signature: String?) {
        let marker = Array(",\"signature\":\"".utf8)
        var end = bytes.count
        if end > 0, bytes[end - 1] == UInt8(ascii: "\n") { end -= 1 }
        let tail = marker.count + 64 + 2  // marker, signature, `"}`
        guard end >= tail + 2, bytes[end - 1] == UInt8(ascii: "}"), bytes[end - 2] == UInt8(ascii: "\""),
            Array(bytes[(end - tail)..<(end - tail + marker.count)]) == marker
        else { return (bytes, nil) }
        let signatureBytes = bytes[(end - 66)..<(end - 2)]
        guard signatureBytes.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw refusal("its signature is not 64 lowercase hex digits")
        }
        var document = Array(bytes[..<(end - tail)])
        document.append(UInt8(ascii: "}"))
        return (document, String(decoding: signatureBytes, as: UTF8.self))
    }

    /// Splits `…,"sha256":"<64 hex>"}\n` into the body it covers (`…}`) and the digest.
    private static func split(_ bytes: [UInt8]) throws -> (body: [UInt8], digest: String) {
        let marker = Array(",\"sha256\":\"".utf8)
        var end = bytes.count
        if end > 0, bytes[end - 1] == UInt8(ascii: "\n") { end -= 1 }
        let tail = marker.count + 64 + 2  // marker, digest, `"}`
        guard end >= tail + 2, bytes[end - 1] == UInt8(ascii: "}"), bytes[end - 2] == UInt8(ascii: "\""),
            Array(bytes[(end - tail)..<(end - tail + marker.count)]) == marker
        else {
            if bytes.first != UInt8(ascii: "{") {
                throw refusal("it is not a discfg snapshot document (no JSON object)")
            }
            throw refusal("it has no sha256 at its end: the file was cut short or is not a discfg snapshot")
        }
        let digestBytes = bytes[(end - 66)..<(end - 2)]
        guard digestBytes.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw refusal("its sha256 is not 64 lowercase hex digits")
        }
        var body = Array(bytes[..<(end - tail)])
        body.append(UInt8(ascii: "}"))
        return (body, String(decoding: digestBytes, as: UTF8.self))
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "field \(key.stringValue) is missing"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "field \(context.codingPath.map(\.stringValue).joined(separator: ".")) has the wrong type"
        case DecodingError.dataCorrupted(let context):
            context.codingPath.isEmpty ? "malformed JSON" : "field \(context.codingPath.map(\.stringValue).joined(separator: ".")) is out of range or malformed"
        default: "malformed JSON"
        }
    }
}
