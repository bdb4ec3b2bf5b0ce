import NIOCore
import NIOHPACK

/// Header blocks a connection decoded lately whose decoding read the HPACK table without
/// changing it, so that one arriving again byte for byte is not decoded again.
///
/// A gRPC client sends each method's header block over and over, and once its fields are
/// in the dynamic table the block is nothing but indexed fields (RFC 7541, 6.1). Such a
/// block decodes to the same fields for as long as the table stays as it was, and only
/// the other representations change the table (a literal with incremental indexing, a
/// size update), so any block holding one forgets every block remembered. Each block
/// remembered has a number, never given twice on the connection, that the layer above
/// may keep what it reads of the fields under (``GRPCConnection``'s request heads).
struct HTTP2RecentBlocks {
    /// A block remembered, and what it decoded to.
    private struct Entry {
        let bytes: [UInt8]
        let fields: HPACKHeaders
        let number: UInt64
    }

    /// Blocks remembered at once: a client's methods in use together.
    static let capacity = 8
    /// A longer block is decoded each time (a gRPC request's is 20 to 60 bytes indexed).
    static let maxBlockBytes = 256

    private var entries: [Entry] = []
    private var lastNumber: UInt64 = 0

    /// The fields `block` decoded to before and its number, if it is remembered.
    func fields(of block: ByteBuffer) -> (fields: HPACKHeaders, number: UInt64)? {
        guard !entries.isEmpty else { return nil }
        return block.withUnsafeReadableBytes { bytes in
            for entry in entries where entry.bytes.count == bytes.count && entry.bytes.elementsEqual(bytes) {
                return (entry.fields, entry.number)
            }
            return nil
        }
    }

    /// Takes note of `block`, just decoded to `fields`: remembered, with its new number,
    /// when it is only indexed fields; otherwise it may have changed the table, and every
    /// block remembered is forgotten.
    mutating func decoded(_ block: ByteBuffer, to fields: HPACKHeaders) -> UInt64? {
        guard Self.onlyIndexedFields(block) else {
            entries.removeAll(keepingCapacity: true)
            return nil
        }
        guard block.readableBytes <= Self.maxBlockBytes else { return nil }
        if entries.count == Self.capacity { entries.removeFirst() }
        lastNumber += 1
        entries.append(Entry(bytes: Array(block.readableBytesView), fields: fields, number: lastNumber))
        return lastNumber
    }

    /// Whether `block` is a run of indexed header fields alone: each a byte with its top
    /// bit set, its 7-bit prefix continued by bytes with the top bit set but the last
    /// when the prefix is all ones (RFC 7541, 5.1 and 6.1).
    static func onlyIndexedFields(_ block: ByteBuffer) -> Bool {
        block.withUnsafeReadableBytes { bytes in
            var index = 0
            while index < bytes.count {
                let first = bytes[index]
                guard first & 0x80 != 0 else { return false }
                index += 1
                guard first & 0x7F == 0x7F else { continue }
                while true {
                    guard index < bytes.count else { return false }
                    let next = bytes[index]
                    index += 1
                    if next & 0x80 == 0 { break }
                }
            }
            return true
        }
    }
}
