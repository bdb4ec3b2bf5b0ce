#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The names a schema lists (`properties`, `required`), looked up by an instance's member names
/// with one cheap hash of their UTF-8 bytes and one byte comparison: validating an object costs
/// one lookup per member, where a `Dictionary<String, _>` would run SipHash over each name.
///
/// Names compare byte for byte (`"é"` and `"e\u0301"` are different names), as ``JSONObject`` keys do.
/// Only the schema's names are stored, at most half the slots full, so a lookup probes a few
/// slots whatever names an instance chooses.
struct PropertyTable: Sendable {
    /// Every name's UTF-8 bytes, one after the other.
    private let bytes: [UInt8]
    private let spans: [(start: Int, count: Int, hash: UInt64)]
    /// Entry number per slot, -1 for an empty slot; the count is a power of two.
    private let slots: [Int32]
    /// The names, and whether each is all ASCII, for ``entry(_:expected:)``.
    private let names: [String]
    private let isASCII: [Bool]

    /// A table of distinct names; a name's entry number is its position in `names`.
    init(_ names: [String]) {
        var bytes: [UInt8] = []
        var spans: [(start: Int, count: Int, hash: UInt64)] = []
        var capacity = 4
        while capacity < names.count * 2 { capacity *= 2 }
        var slots = [Int32](repeating: -1, count: capacity)
        for (entry, name) in names.enumerated() {
            let utf8 = Array(name.utf8)
            let hash = utf8.withUnsafeBufferPointer(Self.hash)
            spans.append((bytes.count, utf8.count, hash))
            bytes += utf8
            var slot = Self.slot(hash) & (capacity - 1)
            while slots[slot] >= 0 { slot = (slot + 1) & (capacity - 1) }
            slots[slot] = Int32(entry)
        }
        self.bytes = bytes
        self.spans = spans
        self.slots = slots
        self.names = names
        isASCII = names.map { $0.utf8.allSatisfy { $0 < 0x80 } }
    }

    /// The entry number of `name`, trying entry `expected` first: an instance usually lists its
    /// members in the order the schema does, and then one string comparison replaces the lookup.
    ///
    /// `==` on strings is canonical equivalence, under which a non-ASCII string can equal an
    /// ASCII one (U+212A KELVIN SIGN is `K`), but only with more UTF-8 bytes; so for an ASCII
    /// name, equal byte counts and `==` mean the same bytes.
    func entry(_ name: String, expected: Int) -> Int? {
        if expected < names.count, isASCII[expected], name.utf8.count == names[expected].utf8.count, name == names[expected] { return expected }
        return entry(name)
    }

    /// The entry number of `name`, or nil when the schema does not list it.
    func entry(_ name: String) -> Int? {
        var name = name
        return name.withUTF8 { key in
            let hash = Self.hash(key)
            let mask = slots.count - 1
            var slot = Self.slot(hash) & mask
            while true {
                let entry = Int(slots[slot])
                if entry < 0 { return nil }
                let span = spans[entry]
                if span.hash == hash, span.count == key.count, equalBytes(at: span.start, key) { return entry }
                slot = (slot + 1) & mask
            }
        }
    }

    private func equalBytes(at start: Int, _ key: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let keyBase = key.baseAddress, !key.isEmpty else { return true }
        return bytes.withUnsafeBufferPointer { memcmp($0.baseAddress! + start, keyBase, key.count) == 0 }
    }

    /// Multiplication carries upward only, so the low bits of an FNV hash see only the low bits
    /// of each byte; folding in the high half gives the slot all of them.
    private static func slot(_ hash: UInt64) -> Int {
        Int(truncatingIfNeeded: hash ^ (hash >> 32))
    }

    /// 64-bit FNV-1a: a few instructions a byte. Only the schema's names are stored, so a
    /// collision an instance contrives costs it one byte comparison more, never a longer probe.
    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}
