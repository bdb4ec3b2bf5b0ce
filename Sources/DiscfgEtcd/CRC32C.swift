/// CRC-32 with the Castagnoli polynomial (CRC-32C), the checksum etcd's `Hash` and
/// `HashKV` answer: reflected, initial value and final XOR all ones.
///
/// ```swift
/// var crc = CRC32C()
/// crc.update(Array("123456789".utf8))
/// crc.value   // 0xE3069283
/// ```
struct CRC32C: Sendable {
    private var state: UInt32 = 0xFFFF_FFFF

    /// The checksum of every byte given so far.
    var value: UInt32 { state ^ 0xFFFF_FFFF }

    /// Adds `bytes` to the checksum.
    mutating func update(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            state = Self.table[Int((state ^ UInt32(byte)) & 0xFF)] ^ (state >> 8)
        }
    }

    /// Adds `number` as 8 bytes, most significant first.
    mutating func update(_ number: UInt64) {
        update((0..<8).reversed().map { UInt8(truncatingIfNeeded: number >> ($0 * 8)) })
    }

    /// The reflected polynomial 0x82F63B78's table, one entry per byte value.
    private static let table: [UInt32] = (0..<256).map { index in
        var entry = UInt32(index)
        for _ in 0..<8 { entry = entry & 1 == 1 ? (entry >> 1) ^ 0x82F6_3B78 : entry >> 1 }
        return entry
    }
}
