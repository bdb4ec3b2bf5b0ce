import Foundation
import DiscfgJSON

extension ConfigStore {
    /// The keys under `prefix` as one JSON document (see ``KeyDocument``), now or at a past
    /// revision, with the revision it was read at.
    /// - Parameter maxBytes: the most bytes of keys and values the document may hold, and
    ///   the most bytes of its JSON text (default ``Limits/maxSnapshotBytes``, what an import
    ///   reads back); past it, `tooLarge` naming a narrower prefix as the way out.
    public func document(
        under prefix: KeyPrefix, in config: ConfigName, atRevision revision: Revision? = nil, maxBytes: Int = Limits.maxSnapshotBytes
    ) async throws -> (document: JSONValue, revision: Revision) {
        let (text, read) = try await documentText(under: prefix, in: config, atRevision: revision, maxBytes: maxBytes)
        do {
            return (try JSONParser.parse(text), read)
        } catch {
            throw DiscfgError(.notRepresentable, "the keys under \(prefix) are not one JSON document: \(error)", field: "document")
        }
    }

    /// The document of the keys under `prefix` as compact JSON text, now or at a past
    /// revision, with the revision it was read at: what `GET …?document` answers, built
    /// without ever holding the whole document parsed (see ``KeyDocument/text(_:under:maxBytes:tooLarge:)``).
    /// - Parameter maxBytes: the most bytes of keys and values the document may hold, and
    ///   the most bytes of its text (default ``Limits/maxSnapshotBytes``); past either,
    ///   `tooLarge` naming a narrower prefix as the way out.
    public func documentText(
        under prefix: KeyPrefix, in config: ConfigName, atRevision revision: Revision? = nil, maxBytes: Int = Limits.maxSnapshotBytes
    ) async throws -> (text: [UInt8], revision: Revision) {
        let tooLarge = DiscfgError(
            .tooLarge,
            "the keys under \(prefix) of config \"\(config)\" pass \(ByteSize.text(maxBytes)) as one document; read a narrower prefix",
            field: "document"
        )
        var items: [Item] = []
        var bytes = 0
        func keep(_ item: Item) throws {
            bytes += item.key.path.utf8.count + item.value.count
            guard bytes <= maxBytes else { throw tooLarge }
            items.append(item)
        }
        let read: Revision
        if let revision {
            let pages = try await exportPages(config, maxBytes: Limits.maxPageBytes, atRevision: revision)
            for try await page in pages {
                for entry in page where prefix.contains(entry.key) {
                    try keep(Item(key: entry.key, value: entry.value, contentType: entry.contentType, version: 1, createRevision: revision, modRevision: revision, modifiedAt: pages.header.exportedAt))
                }
            }
            read = pages.header.revision
        } else {
            var cursor: String?
            var first: Revision?
            repeat {
                let page = try await list(in: config, ListQuery(prefix: prefix, recursive: true, limit: Limits.maxPageSize, cursor: cursor))
                for item in page.items { try keep(item) }
                first = first ?? page.revision
                cursor = page.nextCursor
            } while cursor != nil
            read = first ?? .zero
        }
        return (try KeyDocument.text(items, under: prefix, maxBytes: maxBytes, tooLarge: tooLarge), read)
    }
}
