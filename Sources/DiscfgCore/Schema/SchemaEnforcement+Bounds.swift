import Foundation
import DiscfgJSON
import JSONSchema

extension LeaseRecord {
    /// The media type of the content type that attaches a key to an etcd lease
    /// (`application/vnd.discfg.etcd-lease; id=7; ttl=60`): when the lease ends, the key is
    /// deleted.
    public static let attachmentMediaType = "application/vnd.discfg.etcd-lease"

    /// Whether `contentType` attaches its key to an etcd lease.
    public static func isAttachment(_ contentType: String?) -> Bool {
        contentType?.hasPrefix(attachmentMediaType + ";") ?? false
    }
}

extension Item {
    /// Whether the key goes by itself: it has a TTL, or is attached to an etcd lease.
    public var goesByItself: Bool { expiresAt != nil || LeaseRecord.isAttachment(contentType) }
}

extension ChangeTransaction {
    /// Refuses to check a schema against the document of `prefix` when its live keys hold
    /// more than ``Limits/maxSchemaDocumentBytes`` of key paths and values. Counted one row
    /// at a time and only up to the limit, before any document is built, so a change
    /// under a prefix past it is refused in the time it takes to read the limit's bytes,
    /// holding one row at a time.
    /// - Throws: `tooLarge` naming the prefix and the limit its keys pass.
    func checkSchemaDocumentBudget(_ prefix: KeyPrefix) throws {
        var bytes = 0
        try forEachStoredItem(in: prefix.range) { item in
            guard !item.isExpired(at: now), !SchemaTarget.isReserved(item.key) else { return true }
            bytes += item.key.path.utf8.count + item.value.count
            return bytes <= Limits.maxSchemaDocumentBytes
        }
        guard bytes > Limits.maxSchemaDocumentBytes else { return }
        let limit = Limits.maxSchemaDocumentBytes
        throw DiscfgError(
            .tooLarge,
            "the schema on \(prefix) checks the document of the keys under it, and they hold more than \(ByteSize.text(limit)) (\(limit) bytes) of key paths and values, past the limit a schema checks, so nothing was changed: move keys out from under \(prefix), attach schemas to narrower prefixes, or remove this one (`discfg schema rm \(prefix)`)",
            field: "schema"
        )
    }

    /// What breaks the schema of `prefix` once the keys that go by themselves (a TTL, an
    /// etcd lease) are gone: each is told of as a key the schema requires, naming the keys
    /// this change gave a TTL or lease (or, when it gave none, every such key under the
    /// prefix). A key a schema requires may then not expire, so no expiry ever has to be
    /// judged, and no expiry can leave a config every later change is refused for.
    /// - Parameters:
    ///   - items: the live items under `prefix`, as this transaction has them.
    ///   - written: what the change wrote, by key.
    func violationsOnceGone(
        _ prefix: KeyPrefix, items: [Item], against validator: JSONSchemaValidator, written: [Key: Item?], parsed: [Key: JSONValue]
    ) -> [SchemaViolation] {
        let lasting = items.filter { !$0.goesByItself }
        guard lasting.count < items.count else { return [] }
        let going = items.filter(\.goesByItself).map(\.key)
        let writtenGoing = going.filter { written[$0] != nil }
        let named = writtenGoing.isEmpty ? going : writtenGoing
        let broken: [SchemaViolation]
        do {
            let document = try KeyDocument.read(lasting, under: prefix, parsed: parsed)
            broken = SchemaBook.violations(of: document, against: validator, target: .prefix(prefix), keys: Set(lasting.map(\.key)))
        } catch let error as DiscfgError {
            broken = [SchemaViolation(key: prefix.path, pointer: "", keyword: "document", message: error.message, schema: prefix.path)]
        } catch {
            return []
        }
        let others = named.dropFirst()
        let subject = others.isEmpty ? "it" : "it and \(Self.list(others.map(\.path)))"
        return broken.map { violation in
            let place = violation.pointer.isEmpty ? violation.key : "\(violation.key): \(violation.pointer)"
            return SchemaViolation(
                key: named[0].path, pointer: "", keyword: violation.keyword,
                message: "the schema on \(prefix) requires \(subject), and a TTL or an etcd lease would remove \(others.isEmpty ? "it" : "them"): without \(others.isEmpty ? "it" : "them"), \(place): \(violation.message); write \(others.isEmpty ? "it" : "them") without a TTL or lease"
            )
        }
    }

    /// `a, b, c` of up to three paths, then how many more.
    private static func list(_ paths: [String]) -> String {
        let shown = paths.prefix(3).joined(separator: ", ")
        return paths.count > 3 ? "\(shown) and \(paths.count - 3) more" : shown
    }
}
