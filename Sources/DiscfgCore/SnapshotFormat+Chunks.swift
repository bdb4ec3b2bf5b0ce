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
        guard !snapshot.items.isEmpty, let frame = try? frame(for: snapshot) else {
            try await write(encode(snapshot))
            return
        }
        var chunk = Data(frame.header.utf8)
        for (index, entry) in snapshot.items.enumerated() {
            if index > 0 { chunk.append(contentsOf: frame.separator.utf8) }
            chunk.append(contentsOf: try item(SnapshotDocument.Entry(entry)).utf8)
            if chunk.count >= chunkBytes {
                try await write(chunk)
                chunk = Data()
            }
        }
        chunk.append(contentsOf: frame.footer.utf8)
        try await write(chunk)
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
