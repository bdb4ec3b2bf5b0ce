import DiscfgCore
@testable import DiscfgEtcd
import DiscfgTestSupport
import Foundation
import Testing

/// A trailing run of zero bytes is written as its length (``EtcdKeyPath``), so the binary
/// keys etcd clients write (`etcdctl check datascale`: a varint, then zeros to 512 bytes)
/// fit a discfg key. The order and the round trip must hold for every key all the same.
@Suite("etcd keys ending in zero bytes: the run token keeps order and round trip")
struct EtcdKeyZeroRunTests {
    /// Keys of 1…12 bytes drawn mostly from zeros and the bytes next to them, with runs
    /// of zeros inside and at the end, some of them long.
    static func randomKeys(count: Int, seed: UInt64) -> [[UInt8]] {
        var generator = SeededGenerator(state: seed)
        let alphabet: [UInt8] = [0x00, 0x00, 0x00, 0x01, 0x02, 0x21, 0x22, 0x23, 0x2F, 0x30, 0x61, 0xFF]
        return (0..<count).map { _ in
            var key = (0..<Int.random(in: 1...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            if Bool.random(using: &generator) { key += [UInt8](repeating: 0, count: Int.random(in: 0...120, using: &generator)) }
            return key
        }
    }

    @Test("for seeded random keys a and b: a < b exactly when path(a) < path(b), and bytes(path(a)) is a")
    func randomOrderAndRoundTrip() throws {
        let keys = Self.randomKeys(count: 600, seed: 20_261_127) + EtcdKeysTests.keys + Self.edgeKeys
        let paths = keys.map { EtcdKeyPath.path($0) }
        for (i, a) in keys.enumerated() {
            #expect(EtcdKeyPath.bytes(paths[i]) == a, "\(a) → \(paths[i])")
            #expect(try Key(paths[i]).path == paths[i])
            for (j, b) in keys.enumerated() where a.lexicographicallyPrecedes(b) != paths[i].utf8.lexicographicallyPrecedes(paths[j].utf8) {
                Issue.record("\(a) < \(b) is \(a.lexicographicallyPrecedes(b)) as bytes, paths \(paths[i]) and \(paths[j]) disagree")
                return
            }
        }
    }

    /// Runs whose digit count changes (9, 10, 99, 100), a lone zero, zeros before a byte.
    static let edgeKeys: [[UInt8]] = {
        var keys: [[UInt8]] = [[0], [0, 0], [0, 1], [0, 0, 1], [1, 0], [0x61, 0], [0x61, 0, 1], [0x61, 1], [0x61]]
        for run in [1, 2, 8, 9, 10, 11, 98, 99, 100, 101, 512, 999, 1000] {
            keys.append([UInt8](repeating: 0, count: run))
            keys.append([0x61] + [UInt8](repeating: 0, count: run))
            // Zeros before another byte take three bytes each: 341 fit a discfg key.
            guard run <= 101 else { continue }
            keys.append([0x61] + [UInt8](repeating: 0, count: run) + [1])
            keys.append([0x61] + [UInt8](repeating: 0, count: run) + [0x61])
        }
        return keys
    }()

    @Test("a trailing run is !#, its digit count and its digits; zeros before another byte stay !00")
    func spelling() {
        #expect(EtcdKeyPath.path([0]) == "/!#11")
        #expect(EtcdKeyPath.path([0x61, 0]) == "/a!#11")
        #expect(EtcdKeyPath.path([0x61, 0, 0, 0]) == "/a!#13")
        #expect(EtcdKeyPath.path([UInt8](repeating: 0, count: 512)) == "/!#3512")
        #expect(EtcdKeyPath.path([0, 1]) == "/!00!01")
        #expect(EtcdKeyPath.path([0x61, 0, 0x62, 0]) == "/a!00b!#11")
        #expect(EtcdKeyPath.path([UInt8](repeating: 0, count: 9)) == "/!#19")
        #expect(EtcdKeyPath.path([UInt8](repeating: 0, count: 10)) == "/!#210")
        #expect(EtcdKeyPath.path([UInt8](repeating: 0, count: 99)) == "/!#299")
        #expect(EtcdKeyPath.path([UInt8](repeating: 0, count: 100)) == "/!#3100")
    }

    @Test("paths that spell a zero run any other way are no etcd key's", arguments: [
        "/!#", "/!#0", "/!#01", "/!#10", "/!#201", "/!#2", "/!#1a", "/!#1:", "/a!#11b", "/a!#11!#11", "/a!#11!00",
        "/!00", "/a!00", "/a!00!00", "/a!00!#11", "/!#3512x", "/!#9999999999", "/!#9100000000", "/!#85000000",
    ])
    func malformedRuns(_ path: String) {
        #expect(EtcdKeyPath.bytes(path) == nil)
        #expect(!EtcdKeyPath.isKeyPath(path))
    }

    @Test("every path that decodes is the one path of its key: paths built of tokens at random")
    func oneSpellingPerKey() {
        var generator = SeededGenerator(state: 7)
        let tokens = ["!00", "!01", "!#11", "!#12", "!#210", "!#3100", "!#3012", "!#0", "a", ".2F", "~FF", "!21", "!#1"]
        var decoded = 0
        for _ in 0..<20_000 {
            let path = "/" + (0..<Int.random(in: 1...4, using: &generator)).map { _ in tokens.randomElement(using: &generator)! }.joined()
            guard let bytes = EtcdKeyPath.bytes(path) else { continue }
            decoded += 1
            #expect(EtcdKeyPath.path(bytes) == path)
            #expect(EtcdKeyPath.isKeyPath(path))
        }
        #expect(decoded > 1000)
    }

    @Test("the longest keys: 1,023 printable bytes, 341 escaped ones, trailing zeros nearly free; datascale's keys fit")
    func longestKeys() throws {
        #expect(try EtcdKeys.key([UInt8](repeating: 0x61, count: 1023)).path.utf8.count == 1024)
        #expect(throws: DiscfgError.self) { try EtcdKeys.key([UInt8](repeating: 0x61, count: 1024)) }
        #expect(try EtcdKeys.key([UInt8](repeating: 0xFF, count: 341)).path.utf8.count == 1024)
        #expect(throws: DiscfgError.self) { try EtcdKeys.key([UInt8](repeating: 0xFF, count: 342)) }
        #expect(try EtcdKeys.key([UInt8](repeating: 0x61, count: 1000) + [UInt8](repeating: 0, count: 1_000_000)).path.utf8.count == 1011)
        // etcdctl check datascale: its prefix, then 512 bytes: a varint of a random
        // number in the first nine or ten bytes, zeros after.
        var generator = SeededGenerator(state: 512)
        for _ in 0..<100 {
            var key = [UInt8](repeating: 0, count: 512)
            let value = Int64.random(in: 0..<Int64.max, using: &generator)
            var zigzag = UInt64(bitPattern: value << 1) ^ UInt64(bitPattern: value >> 63)
            var index = 0
            while zigzag >= 0x80 {
                key[index] = UInt8(zigzag & 0x7F) | 0x80
                zigzag >>= 7
                index += 1
            }
            key[index] = UInt8(zigzag)
            let full = Array("/etcdctl-check-datascale/".utf8) + key
            let path = try EtcdKeys.key(full).path
            #expect(path.utf8.count < 80, "\(path)")
            #expect(EtcdKeys.bytes(path) == full)
        }
    }

    /// Keys etcd ranges are asked about here: zero runs of each digit count and zeros
    /// before other bytes, under one prefix.
    static let rangeKeys: [[UInt8]] = {
        var keys: [[UInt8]] = [[0x61], [0x61, 0], [0x61, 0, 0], [0x61, 0, 1], [0x61, 0, 0x62], [0x61, 1], [0x62]]
        for run in [9, 10, 99, 100] {
            let zeros = [UInt8](repeating: 0, count: run)
            keys.append([0x61] + zeros)
            keys.append([0x61] + zeros + [1])
        }
        return keys
    }()

    /// Ranges with ends in zero runs: prefixes, `[key, range_end)`, single keys.
    static let zeroRanges: [(key: [UInt8], rangeEnd: [UInt8])] = {
        let a: UInt8 = 0x61
        let ten = [a] + [UInt8](repeating: 0, count: 10)
        let ninetyNine = [a] + [UInt8](repeating: 0, count: 99)
        var ranges: [(key: [UInt8], rangeEnd: [UInt8])] = []
        ranges.append(([a, 0], EtcdKeysTests.prefixEnd([a, 0])))
        ranges.append(([a, 0, 0], EtcdKeysTests.prefixEnd([a, 0, 0])))
        ranges.append(([a], EtcdKeysTests.prefixEnd([a])))
        ranges.append(([a, 0], [a, 0, 0, 0]))
        ranges.append(([a, 0, 1], [a, 1]))
        ranges.append(([a], [a, 0]))
        ranges.append((ten, [a, 0, 1]))
        ranges.append(([0], [0]))
        ranges.append(([a, 0], []))
        ranges.append((ninetyNine, []))
        return ranges
    }()

    @Test("a range or prefix ending in a zero byte holds the keys etcd's holds")
    func ranges() throws {
        for (key, rangeEnd) in Self.zeroRanges {
            let range = EtcdBackend.keyRange(key: key, rangeEnd: rangeEnd)
            for candidate in Self.rangeKeys + Self.edgeKeys {
                let expected = EtcdKeysTests.etcdHolds(candidate, key: key, rangeEnd: rangeEnd)
                #expect(range.contains(try EtcdKeys.key(candidate)) == expected, "\(candidate) in [\(key), \(rangeEnd))")
            }
        }
    }

    @Test("Range through the etcd API over keys ending in zeros answers etcd's keys, in etcd's order", arguments: EtcdTestBacking.allCases)
    func rangeThroughTheAPI(backing: EtcdTestBacking) async throws {
        let (_, _, service, cleanUp) = try await backing.service()
        defer { cleanUp() }
        for key in Self.rangeKeys.shuffled() {
            var put = Etcdserverpb_PutRequest()
            put.key = Data(key)
            put.value = Data("v".utf8)
            _ = try await service.put(request: put, context: EtcdKVServiceTests.context)
        }
        func range(_ key: [UInt8], _ rangeEnd: [UInt8], limit: Int64 = 0) async throws -> Etcdserverpb_RangeResponse {
            var request = Etcdserverpb_RangeRequest()
            request.key = Data(key)
            request.rangeEnd = Data(rangeEnd)
            request.limit = limit
            return try await service.range(request: request, context: EtcdKVServiceTests.context)
        }
        let sorted = Self.rangeKeys.sorted { $0.lexicographicallyPrecedes($1) }
        #expect(try await range([0], [0]).kvs.map { [UInt8]($0.key) } == sorted)
        for (key, rangeEnd) in Self.zeroRanges {
            let expected = sorted.filter { EtcdKeysTests.etcdHolds($0, key: key, rangeEnd: rangeEnd) }
            let answer = try await range(key, rangeEnd)
            #expect(answer.kvs.map { [UInt8]($0.key) } == expected, "[\(key), \(rangeEnd))")
            #expect(answer.count == Int64(expected.count))
            if expected.count > 1 {
                let first = try await range(key, rangeEnd, limit: 1)
                #expect(first.kvs.map { [UInt8]($0.key) } == [expected[0]])
                #expect(first.more)
            }
        }
        // A key ending in zeros is found by itself, not by its neighbours.
        #expect(try await range([0x61, 0, 0], []).kvs.map { [UInt8]($0.key) } == [[0x61, 0, 0]])
    }
}
