import DiscfgCore
import Foundation
import Testing

@Suite("Export written in chunks")
struct SnapshotChunksTests {
    static let snapshot = ConfigSnapshot(
        config: try? ConfigName("app"), revision: 42, exportedAt: Date(milliseconds: 1_767_225_600_123),
        items: [
            ConfigSnapshot.Entry(key: try! Key("/a"), value: Data("plain".utf8)),
            ConfigSnapshot.Entry(key: try! Key("/b/lines"), value: Data("one\ntwo\n  three\n".utf8), contentType: "text/plain"),
            ConfigSnapshot.Entry(key: try! Key("/b/binary"), value: Data([0, 255, 1, 254]), expiresAt: Date(milliseconds: 1_767_312_000_000)),
            ConfigSnapshot.Entry(key: try! Key("/c/quotes"), value: Data("say \"hi\" \\ / é ✓ {\"x\": [1]}".utf8), contentType: "application/json"),
            ConfigSnapshot.Entry(key: try! Key("/d/empty"), value: Data()),
        ] + (0..<200).map { ConfigSnapshot.Entry(key: try! Key("/many/k\($0)"), value: Data(String(repeating: "x", count: $0 * 7).utf8)) }
    )

    @Test("JSON and YAML in chunks are byte for byte what encode writes", arguments: [SnapshotFormat.json, .yaml])
    func chunksAreTheWholeDocument(format: SnapshotFormat) async throws {
        for snapshot in [Self.snapshot, ConfigSnapshot(items: []), ConfigSnapshot(items: Array(Self.snapshot.items.prefix(1)))] {
            var chunks: [Data] = []
            try await format.encode(snapshot, chunkBytes: 1024) { chunks.append($0) }
            let whole = try format.encode(snapshot)
            #expect(chunks.reduce(Data(), +) == whole, "\(format) with \(snapshot.items.count) items")
        }
    }

    @Test("a large document is written in many chunks, none much larger than asked", arguments: [SnapshotFormat.json, .yaml])
    func manyBoundedChunks(format: SnapshotFormat) async throws {
        var sizes: [Int] = []
        try await format.encode(Self.snapshot, chunkBytes: 4096) { sizes.append($0.count) }
        #expect(sizes.count > 10)
        // A chunk is sent once it reaches the size asked, so it passes it by at most one item.
        #expect(sizes.allSatisfy { $0 < 4096 + 4096 }, "\(sizes)")
    }
}
