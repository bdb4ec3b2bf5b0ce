import Crypto
import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

/// The snapshot document is read from files and the network: only an intact one is read,
/// and the same state always has the same bytes.
@Suite("PublishedSnapshot: deterministic bytes, integrity, bounded decoding")
struct PublishedSnapshotTests {
    static let app = try! ConfigName("app")

    static func sample() throws -> PublishedSnapshot {
        let at = Date(milliseconds: 1_767_225_600_123)
        return try PublishedSnapshot(
            config: app, revision: 7, compactedRevision: 2,
            items: [
                Item(key: try Key("/z"), value: Data([0, 255, 10]), version: 3, createRevision: 1, modRevision: 7, modifiedAt: at),
                Item(
                    key: try Key("/a/\"quoted\""), value: Data("v\n".utf8), contentType: "application/json", version: 1,
                    createRevision: 4, modRevision: 4, modifiedAt: at, expiresAt: at.addingTimeInterval(60)),
            ])
    }

    /// Rewrites a document's body and signs it again, as a forger with the format would.
    static func resigned(_ body: String) -> Data {
        let digest = SHA256.hash(data: Array(body.utf8)).map { String(format: "%02x", $0) }.joined()
        return Data((body.dropLast() + ",\"sha256\":\"\(digest)\"}\n").utf8)
    }

    static func body(_ data: Data) -> String {
        let text = String(decoding: data, as: UTF8.self)
        return String(text[..<text.range(of: ",\"sha256\"")!.lowerBound]) + "}"
    }

    @Test("round trip: decode(encode(s)) == s, and items come out in key order")
    func roundTrip() throws {
        let snapshot = try Self.sample()
        let decoded = try PublishedSnapshot(decoding: snapshot.encoded())
        #expect(decoded == snapshot)
        #expect(decoded.items.map(\.key.path) == ["/a/\"quoted\"", "/z"])
        #expect(decoded.items[0].expiresAt == Date(milliseconds: 1_767_225_660_123))
    }

    @Test("the same state gives the same bytes, whatever order the items came in")
    func deterministic() throws {
        let one = try Self.sample()
        let two = try PublishedSnapshot(config: one.config, revision: one.revision, compactedRevision: one.compactedRevision, items: one.items.reversed())
        #expect(one.encoded() == two.encoded())
        let text = String(decoding: one.encoded(), as: UTF8.self)
        #expect(text.hasPrefix("{\"compactedRevision\":2,\"config\":\"app\",\"format\":\"discfg-snapshot/1\",\"items\":[{\"contentType\""))
        #expect(text.contains("\"modifiedAt\":\"2026-01-01T00:00:00.123Z\""))
        #expect(text.hasSuffix("}\n"))
    }

    @Test("every flipped byte is refused, never read as another state")
    func flippedBytes() throws {
        let data = try Self.sample().encoded()
        for index in stride(from: 0, to: data.count - 1, by: 1) {
            var bad = data
            bad[index] ^= 0x01
            #expect(throws: DiscfgError.self) { try PublishedSnapshot(decoding: bad) }
        }
    }

    @Test("every truncation is refused with one clear message")
    func truncated() throws {
        let data = try Self.sample().encoded()
        for length in 0..<(data.count - 1) {
            try expectError(.invalidArgument, field: "snapshot", mentioning: ["snapshot refused"]) {
                try PublishedSnapshot(decoding: data.prefix(length))
            }
        }
        try expectError(.invalidArgument, field: "snapshot", mentioning: ["cut short"]) {
            try PublishedSnapshot(decoding: data.prefix(data.count / 2))
        }
    }

    @Test("an edited value fails the integrity check")
    func edited() throws {
        let data = try Self.sample().encoded()
        let text = String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\"revision\":7", with: "\"revision\":8")
        try expectError(.invalidArgument, field: "snapshot", mentioning: ["sha256 does not match"]) {
            try PublishedSnapshot(decoding: Data(text.utf8))
        }
    }

    @Test("another format, foreign JSON and non-JSON are refused by name")
    func foreign() throws {
        let body = Self.body(try Self.sample().encoded())
        try expectError(.invalidArgument, field: "snapshot", mentioning: ["discfg-snapshot/2", "reads \"discfg-snapshot/1\""]) {
            try PublishedSnapshot(decoding: Self.resigned(body.replacingOccurrences(of: "discfg-snapshot/1", with: "discfg-snapshot/2")))
        }
        try expectError(.invalidArgument, field: "snapshot", mentioning: ["not a discfg snapshot"]) {
            try PublishedSnapshot(decoding: Data("{\"hello\":1}".utf8))
        }
        try expectError(.invalidArgument, field: "snapshot", mentioning: ["no JSON object"]) {
            try PublishedSnapshot(decoding: Data("PK\u{3}\u{4} zip file".utf8))
        }
        try expectError(.invalidArgument, field: "snapshot", mentioning: ["field format is missing"]) {
            try PublishedSnapshot(decoding: Self.resigned(body.replacingOccurrences(of: "\"format\"", with: "\"formal\"")))
        }
    }

    @Test("a duplicated key or out-of-order items are refused even when signed")
    func duplicates() throws {
        let one = try PublishedSnapshot(
            config: Self.app, revision: 2,
            items: [Item(key: try Key("/k"), value: Data("x".utf8), version: 1, createRevision: 1, modRevision: 1, modifiedAt: Date(milliseconds: 0))])
        let body = Self.body(one.encoded())
        let entry = String(body[body.range(of: "[")!.upperBound..<body.range(of: "]")!.lowerBound])
        let doubled = body.replacingOccurrences(of: entry, with: entry + "," + entry)
        try expectError(.invalidArgument, field: "snapshot", mentioning: ["/k appears more than once"]) {
            try PublishedSnapshot(decoding: Self.resigned(doubled))
        }
        #expect(throws: DiscfgError.self) {
            try PublishedSnapshot(config: Self.app, revision: 2, items: one.items + one.items)
        }
        let duplicateField = body.replacingOccurrences(of: "\"revision\":2}", with: "\"revision\":2,\"revision\":2}")
        #expect(throws: DiscfgError.self) { try PublishedSnapshot(decoding: Self.resigned(duplicateField)) }
    }

    @Test("huge and negative numbers are refused: 2^63, 2^64, -1, 1e3")
    func hugeNumbers() throws {
        let body = Self.body(try Self.sample().encoded())
        for number in ["9223372036854775808", "18446744073709551615", "18446744073709551616", "-1", "1e3", "7.0"] {
            for field in ["\"revision\":7", "\"version\":3", "\"compactedRevision\":2"] {
                let name = field.split(separator: ":")[0]
                let bad = body.replacingOccurrences(of: field, with: "\(name):\(number)")
                #expect(throws: DiscfgError.self, "\(field) = \(number)") { try PublishedSnapshot(decoding: Self.resigned(bad)) }
            }
        }
    }

    @Test("size and depth are bounded before anything is built")
    func bounded() throws {
        let data = try Self.sample().encoded()
        try expectError(.invalidArgument, field: "snapshot", mentioning: ["over the"]) {
            try PublishedSnapshot(decoding: data, maxBytes: data.count - 1)
        }
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let bomb = Self.body(data).replacingOccurrences(of: "\"revision\":7", with: "\"revision\":7,\"x\":\(deep)")
        #expect(throws: DiscfgError.self) { try PublishedSnapshot(decoding: Self.resigned(bomb)) }
    }

    @Test("read(from:) is the store's state at one revision; apply follows its changes")
    func readFromStore() async throws {
        let store = MemoryStore()
        _ = try await store.createConfig(Self.app, settings: ConfigSettings())
        _ = try await store.set(try Key("/b"), to: Data("1".utf8), in: Self.app)
        _ = try await store.set(try Key("/a"), to: Data("2".utf8), in: Self.app)
        _ = try await store.set(try Key("/b"), to: Data("3".utf8), in: Self.app)
        var snapshot = try await PublishedSnapshot.read(from: store, config: Self.app)
        #expect(snapshot.revision == 3)
        #expect(snapshot.items.map(\.key.path) == ["/a", "/b"])
        #expect(snapshot.item(at: try Key("/b"))?.version == 2)
        _ = try await store.delete(try Key("/a"), in: Self.app, conditions: [])
        _ = try await store.set(try Key("/c"), to: Data("4".utf8), in: Self.app)
        let applied = try await snapshot.catchUp(from: store)
        #expect(applied.count == 2)
        #expect(snapshot.revision == 5)
        #expect(snapshot.items.map(\.key.path) == ["/b", "/c"])
        let fresh = try await PublishedSnapshot.read(from: store, config: Self.app)
        #expect(fresh.encoded() == snapshot.encoded())
    }
}
