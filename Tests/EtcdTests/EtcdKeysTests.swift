import DiscfgCore
@testable import DiscfgEtcd
import Testing

/// etcd keys are byte strings ordered byte by byte; discfg keys are paths ordered by their
/// UTF-8. ``EtcdKeys`` must map one onto the other without changing any comparison, or
/// ranges, `limit`, `more` and sorted answers go wrong for some keys and not others.
@Suite("etcd keys as discfg keys: order, round trip and ranges")
struct EtcdKeysTests {
    /// Bytes where the encoding changes: the edges of each escape's span, the bytes of a
    /// path (`/`, `.`), the escape characters themselves, UTF-8 lead and continuation
    /// bytes, and 0xFF.
    static let edgeBytes: [UInt8] = [
        0x00, 0x01, 0x1F, 0x20, 0x21, 0x22, 0x2D, 0x2E, 0x2F, 0x30, 0x39, 0x41, 0x46, 0x5A, 0x61, 0x7D, 0x7E, 0x7F,
        0x80, 0xBF, 0xC3, 0xE2, 0xF0, 0xFE, 0xFF,
    ]

    /// Keys that stress the order: every single byte, every pair of edge bytes, and
    /// paths, prefixes and text a client really writes.
    static let keys: [[UInt8]] = {
        var keys = (0...255).map { [UInt8($0)] }
        for first in edgeBytes {
            for second in edgeBytes { keys.append([first, second]) }
        }
        let texts = [
            "/", "//", "///", "a/", "a//", "/a", "a/b", "a/b/", "a/b/c", "a.b", "a..b", "a/.", "a/..", "..", ".",
            "app/db.host", "app/db", "app/db/", "app/dc", "ab", "abc", "abd", "abc\u{0}", "a b", "a!b", "a~b",
            "é", "e\u{301}", "ü/x", "日本", "日本語", "🙂", "a🙂", "\u{7F}", "%2F", "!00", ".2F", "~FF",
        ]
        keys += texts.map { Array($0.utf8) }
        keys += [
            [0xC3], [0xC3, 0x28], [0x80, 0x80], [0xFF, 0xFE, 0xFD], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
            [0x61, 0xFF], [0x61, 0xFF, 0xFF], [0x62], [0x61, 0x00], [0x61, 0x00, 0x00], [0x00, 0x00], [0xFF, 0xFF],
        ]
        return keys
    }()

    @Test("two etcd keys compare as their discfg keys compare, for every pair of tricky keys")
    func orderIsKept() throws {
        let encoded = try Self.keys.map { try EtcdKeys.key($0) }
        var checked = 0
        for (i, a) in Self.keys.enumerated() {
            for (j, b) in Self.keys.enumerated() {
                let bytesOrder = a.lexicographicallyPrecedes(b)
                let pathOrder = encoded[i] < encoded[j]
                if bytesOrder != pathOrder {
                    Issue.record("\(a) < \(b) is \(bytesOrder) as bytes but \(pathOrder) as paths \(encoded[i].path), \(encoded[j].path)")
                    return
                }
                #expect((a == b) == (encoded[i] == encoded[j]))
                checked += 1
            }
        }
        #expect(checked == Self.keys.count * Self.keys.count)
    }

    @Test("every key comes back from its path, and the path is a valid discfg key of printable ASCII with one /")
    func roundTrip() throws {
        for bytes in Self.keys {
            let path = EtcdKeys.path(bytes)
            #expect(EtcdKeys.bytes(path) == bytes, "\(bytes) → \(path)")
            #expect(path.utf8.allSatisfy { (0x21...0x7E).contains($0) })
            #expect(path.utf8.filter { $0 == UInt8(ascii: "/") }.count == 1)
            #expect(path.first == "/")
            // A valid discfg key as it is: parsing it again changes nothing.
            #expect(try Key(path).path == path)
            #expect(try EtcdKeys.key(bytes).path == path)
        }
    }

    @Test("plain bytes stay themselves; the others take the escape that sorts where they do")
    func spelling() {
        #expect(EtcdKeys.path(Array("app/db.host".utf8)) == "/app.2Fdb.2Ehost")
        #expect(EtcdKeys.path([0x00]) == "/!#11")
        #expect(EtcdKeys.path([0x20, 0x21]) == "/!20!21")
        #expect(EtcdKeys.path([0x22, 0x2D, 0x30, 0x7D]) == "/\"-0}")
        #expect(EtcdKeys.path([0x7E, 0x7F, 0xFF]) == "/~7E~7F~FF")
        #expect(EtcdKeys.path(Array("é".utf8)) == "/~C3~A9")
        #expect(EtcdKeys.path([]) == "/")
    }

    @Test("paths no etcd key makes are not etcd keys", arguments: [
        "", "/", "a", "app/x", "/a/b", "/a/", "/!", "/!0", "/!2", "/!22", "/!G0", "/!0g", "/.41", "/.2f", "/.30",
        "/~7D", "/~7e", "/~", "/~F", "/ ", "/a b", "/é", "/\u{7F}", "/a~", "/a.2", "/a!21x!",
    ])
    func foreignPaths(_ path: String) {
        #expect(EtcdKeys.bytes(path) == nil)
    }

    @Test("an empty key is not provided; a key is refused only once its path passes the limit")
    func keyLimits() throws {
        #expect(throws: DiscfgError.self) { try EtcdKeys.key([UInt8]()) }
        do {
            _ = try EtcdKeys.key([UInt8]())
        } catch let error as DiscfgError {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("key is not provided"))
        }
        let plain = [UInt8](repeating: UInt8(ascii: "a"), count: EtcdKeys.maxPlainBytes)
        #expect(try EtcdKeys.key(plain).path.utf8.count == Key.maxBytes)
        do {
            _ = try EtcdKeys.key(plain + [UInt8(ascii: "a")])
            Issue.record("a key one byte past the limit was taken")
        } catch let error as DiscfgError {
            #expect(error.code == .tooLarge)
            #expect(error.field == "key")
        }
        // Escaped bytes take three: a third as many fit.
        let escaped = [UInt8](repeating: 0xFF, count: EtcdKeys.maxPlainBytes / 3)
        #expect(try EtcdKeys.key(escaped).path.utf8.count == 1 + 3 * (EtcdKeys.maxPlainBytes / 3))
        #expect(throws: DiscfgError.self) { try EtcdKeys.key(escaped + [0xFF]) }
    }

    /// Whether etcd's range `[key, rangeEnd)` holds `candidate`, by etcd's own rule.
    static func etcdHolds(_ candidate: [UInt8], key: [UInt8], rangeEnd: [UInt8]) -> Bool {
        if rangeEnd.isEmpty { return candidate == key }
        let fromStart = key == [0] ? true : !candidate.lexicographicallyPrecedes(key)
        if rangeEnd == [0] { return fromStart }
        return fromStart && candidate.lexicographicallyPrecedes(rangeEnd)
    }

    /// etcd's prefix range end: the prefix with its last byte below 0xFF incremented and
    /// what follows dropped; `\0` (every key from the prefix on) when all are 0xFF.
    static func prefixEnd(_ prefix: [UInt8]) -> [UInt8] {
        var end = prefix
        while let last = end.last {
            if last < 0xFF {
                end[end.count - 1] = last + 1
                return end
            }
            end.removeLast()
        }
        return [0]
    }

    static let ranges: [(key: [UInt8], rangeEnd: [UInt8])] = [
        ([0], [0]), (Array("a".utf8), [0]), ([0], Array("b".utf8)), (Array("a".utf8), Array("b".utf8)),
        (Array("a/".utf8), prefixEnd(Array("a/".utf8))), (Array("app/db".utf8), prefixEnd(Array("app/db".utf8))),
        (Array("a".utf8), prefixEnd(Array("a".utf8))), ([0x61, 0xFF], prefixEnd([0x61, 0xFF])), ([0xFF], prefixEnd([0xFF])),
        ([0xFF, 0xFF], prefixEnd([0xFF, 0xFF])), (Array("/".utf8), Array("0".utf8)), (Array(".".utf8), Array("/".utf8)),
        ([0x00], [0x01]), ([0x7E], [0x7F]), ([0x21], [0x22]), (Array("b".utf8), Array("a".utf8)), (Array("a".utf8), Array("a".utf8)),
        (Array("日".utf8), prefixEnd(Array("日".utf8))), (Array("ab".utf8), Array("ab\u{0}".utf8)),
    ]

    @Test("a range [key, range_end), with \\0 and prefix+1 ends, holds the same keys as etcd's")
    func rangesHoldWhatEtcdHolds() throws {
        #expect(Self.prefixEnd(Array("a/".utf8)) == Array("a0".utf8))
        #expect(Self.prefixEnd([0x61, 0xFF]) == [0x62])
        #expect(Self.prefixEnd([0xFF]) == [0])
        for (key, rangeEnd) in Self.ranges {
            let range = EtcdKeys.range(key: key, rangeEnd: rangeEnd)
            var held = 0
            for candidate in Self.keys {
                let expected = Self.etcdHolds(candidate, key: key, rangeEnd: rangeEnd)
                #expect(range.contains(try EtcdKeys.key(candidate)) == expected, "\(candidate) in [\(key), \(rangeEnd))")
                if expected { held += 1 }
            }
            // An etcd range whose end is not past its key is an empty range of paths
            // (stores skip it); every other range holds something.
            #expect(range.isEmpty == (rangeEnd != [0] && !key.lexicographicallyPrecedes(rangeEnd)))
            if range.isEmpty { #expect(held == 0) }
        }
        #expect(EtcdKeys.range(key: [0], rangeEnd: [0]) == KeyRange.all)
        #expect(EtcdKeys.range(key: Array("a".utf8), rangeEnd: [0]).upper == nil)
    }

    @Test("a range with no end is its key alone, however many keys begin with it")
    func singleKeyRange() throws {
        for key in Self.keys {
            let range = EtcdBackend.keyRange(key: key, rangeEnd: [])
            for candidate in Self.keys {
                #expect(range.contains(try EtcdKeys.key(candidate)) == (candidate == key))
            }
        }
    }

    @Test("the filter keeps the keys an etcd key makes and leaves the others")
    func filter() throws {
        #expect(EtcdKeys.filter.admits(try EtcdKeys.key(Array("a/b".utf8))))
        #expect(!EtcdKeys.filter.admits(try Key("/a/b")))
        #expect(!EtcdKeys.filter.admits(try Key("/db/password")))
        #expect(!EtcdKeys.filter.admits(try Key("/~7e")))
    }
}
