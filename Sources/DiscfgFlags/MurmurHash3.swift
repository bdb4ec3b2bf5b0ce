/// MurmurHash3, x86 32-bit variant: the hash flagd's `fractional` buckets with.
///
/// ```swift
/// MurmurHash3.x86_32(Array("hello".utf8))   // 613153351
/// ```
public enum MurmurHash3 {
    /// The 32-bit hash of `bytes` with `seed` (flagd uses seed 0).
    public static func x86_32(_ bytes: some Collection<UInt8>, seed: UInt32 = 0) -> UInt32 {
        let c1: UInt32 = 0xcc9e_2d51
        let c2: UInt32 = 0x1b87_3593
        var h = seed
        var block: UInt32 = 0
        var filled = 0
        for byte in bytes {
            block |= UInt32(byte) << (8 * UInt32(filled))
            filled += 1
            if filled == 4 {
                h ^= mixed(block, c1, c2)
                h = (h << 13 | h >> 19) &* 5 &+ 0xe654_6b64
                block = 0
                filled = 0
            }
        }
        if filled > 0 { h ^= mixed(block, c1, c2) }
        h ^= UInt32(truncatingIfNeeded: bytes.count)
        h ^= h >> 16
        h = h &* 0x85eb_ca6b
        h ^= h >> 13
        h = h &* 0xc2b2_ae35
        h ^= h >> 16
        return h
    }

    private static func mixed(_ block: UInt32, _ c1: UInt32, _ c2: UInt32) -> UInt32 {
        var k = block &* c1
        k = k << 15 | k >> 17
        return k &* c2
    }
}
