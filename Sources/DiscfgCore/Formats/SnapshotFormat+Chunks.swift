import Foundation
import Yams

extension SnapshotFormat {
    /// Writes `snapshot` in this format piece by piece, so the encoded document (several
    /// times the size of the values it holds) is never built whole: `write` receives
    /// chunks of about `chunkBytes` that together are exactly ``encode(_:)``'s output.
    ///
    /// JSON and YAML are written item by item. Env is written in one piece: whether it
    /// can be written at all (clashing names, binary values) is known only at the end.
    /// - Throws: what ``encode(_:)`` throws, before anything is written; what `write` throws.
    public func encode(_ snapshot: ConfigSnapshot, chunkBytes: Int, write: (Data) async throws -> Void) async throws {
        var header = snapshot
        header.items = []
        var pending: [ConfigSnapshot.Entry]? = snapshot.items
        _ = try await encode(header: header, chunkBytes: chunkBytes, nextPage: { defer { pending = nil }; return pending }, write: write)
    }

    /// Writes an export as its pages arrive, so neither the items nor the document are
    /// ever held whole (env excepted, as above): the output is exactly ``encode(_:)``'s
    /// for the snapshot the pages make up.
    /// - Returns: how many items were written.
    /// - Throws: what reading a page throws (the document is then unfinished); what
    ///   ``encode(_:)`` throws; what `write` throws.
    @discardableResult
    @concurrent public func encode(_ pages: SnapshotPages, chunkBytes: Int, write: @concurrent (Data) async throws -> Void) async throws -> Int {
        let header = ConfigSnapshot(config: pages.header.config, revision: pages.header.revision, exportedAt: pages.header.exportedAt, items: [])
        var iterator = pages.makeAsyncIterator()
        return try await encode(header: header, chunkBytes: chunkBytes, nextPage: { try await iterator.next() }, write: write)
    }

    /// The one writer behind both: `header` holds the document's fields but no items.
    /// Returns how many items were written.
    private func encode(
        header: ConfigSnapshot, chunkBytes: Int, nextPage: () async throws -> [ConfigSnapshot.Entry]?, write: (Data) async throws -> Void
    ) async throws -> Int {
        guard let frame = try? frame(for: header) else {
            var whole = header
            while let page = try await nextPage() { whole.items += page }
            try await write(encode(whole))
            return whole.items.count
        }
        var chunk = Data()
        var started = false
        var count = 0
        while let page = try await nextPage() {
            count += page.count
            for entry in page {
                chunk.append(contentsOf: (started ? frame.separator : frame.header).utf8)
                started = true
                chunk.append(contentsOf: try item(SnapshotDocument.Entry(entry)).utf8)
                if chunk.count >= chunkBytes {
                    try await write(chunk)
                    chunk = Data()
                }
            }
        }
        // An empty list is written differently from a list of items.
        guard started else {
            try await write(encode(header))
            return 0
        }
        chunk.append(contentsOf: frame.footer.utf8)
        try await write(chunk)
        return count
    }

    /// What surrounds the items, and what separates them, in this format; nil for env.
    /// Found by encoding a one-item document and cutting out the item, so the frame is
    /// the encoder's own; nil too should the item not be found as it stands alone.
    private func frame(for snapshot: ConfigSnapshot) throws -> (header: String, separator: String, footer: String)? {
        let sample = ConfigSnapshot.Entry(key: try Key("/sample"), value: Data())
        var framing = snapshot
        framing.items = [sample]
        let separator: String
        switch self {
        case .json: separator = ",\n"
        case .yaml: separator = ""
        case .env: return nil
        }
        let whole = String(decoding: try encode(framing), as: UTF8.self)
        let alone = try item(SnapshotDocument.Entry(sample))
        guard let range = whole.range(of: alone) else { return nil }
        return (String(whole[..<range.lowerBound]), separator, String(whole[range.upperBound...]))
    }

    /// One item as it appears in the document (JSON: indented as an element of `items`,
    /// with no separator; YAML: a block sequence entry).
    private func item(_ entry: SnapshotDocument.Entry) throws -> String {
        switch self {
        case .json:
            let text = String(decoding: try JSONEncoder.discfg().encode(entry), as: UTF8.self)
            return text.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }.joined(separator: "\n")
        case .yaml:
            return try Yams.serialize(node: .sequence(Node.Sequence([Self.yamlNode(entry)])), sortKeys: false)
        case .env:
            return ""
        }
    }
}

extension SnapshotDocument.Entry {
    /// The document form of one snapshot entry.
    init(_ entry: ConfigSnapshot.Entry) {
        let (value, encoding) = ValueEncoding.encode(entry.value)
        self.init(key: entry.key.path, value: value, encoding: encoding, contentType: entry.contentType, expiresAt: entry.expiresAt)
    }
}
