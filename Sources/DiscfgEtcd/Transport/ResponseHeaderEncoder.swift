import NIOCore

/// HPACK (RFC 7541) for the header blocks a gRPC server sends: the same few fields on
/// every answer. `:status: 200` is in HPACK's static table; `content-type:
/// application/grpc` and `grpc-status: 0` go into the dynamic table the first time and
/// are one byte each from then on, as a general encoder would have them, without its
/// search of the tables for every field. Every other field (an error's status and
/// message, a 415) is a literal the table never keeps, so nothing else ever moves the
/// two entries.
///
/// The client's decoder bounds the table (SETTINGS_HEADER_TABLE_SIZE): a smaller bound
/// is signalled at the start of the next block, as RFC 7541 4.2 requires, and entries
/// that no longer fit are dropped on both sides.
struct ResponseHeaderEncoder {
    /// The two fields the table may hold.
    enum Entry: Equatable {
        case contentType
        case okStatus

        /// Its size as HPACK counts it: name, value and 32.
        var size: Int {
            switch self {
            case .contentType: 32 + 12 + 16
            case .okStatus: 32 + 11 + 1
            }
        }
    }

    /// HPACK's default table size, and the largest this encoder uses.
    static let defaultTableSize = 4096

    /// The table as the client's decoder holds it, newest first.
    private(set) var table: [Entry] = []
    /// The table's size limit the client's decoder knows.
    private(set) var limit = ResponseHeaderEncoder.defaultTableSize
    /// A change of the limit not yet signalled: the smallest it was since the last
    /// block, and what it is now.
    private var pendingLimit: (smallest: Int, final: Int)?

    private var tableSize: Int { table.reduce(0) { $0 + $1.size } }

    /// The client's SETTINGS_HEADER_TABLE_SIZE.
    mutating func clientTableSize(_ size: Int) {
        let newLimit = min(size, Self.defaultTableSize)
        guard newLimit != limit || pendingLimit != nil else { return }
        let smallest = min(pendingLimit?.smallest ?? newLimit, newLimit)
        pendingLimit = (smallest, newLimit)
        limit = newLimit
        // What the decoder drops when it reads the smaller size, dropped here too.
        while tableSize > smallest, !table.isEmpty { table.removeLast() }
    }

    /// A response's headers: `:status: 200`, `content-type: application/grpc`.
    mutating func writeResponseHeaders(to buffer: inout ByteBuffer) {
        writeLimitChange(to: &buffer)
        buffer.writeInteger(UInt8(0x80 | 8))  // :status: 200, static entry 8
        write(.contentType, to: &buffer)
    }

    /// The trailers of a call that succeeded: `grpc-status: 0`.
    mutating func writeOKTrailers(to buffer: inout ByteBuffer) {
        writeLimitChange(to: &buffer)
        write(.okStatus, to: &buffer)
    }

    /// Any other block, every field a literal the table does not keep.
    mutating func write(_ fields: [(name: String, value: String)], to buffer: inout ByteBuffer) {
        writeLimitChange(to: &buffer)
        for (name, value) in fields {
            // Literal without indexing (0000xxxx), with the static table's name where it has one.
            switch name {
            case ":status": buffer.writeHPACKInteger(8, prefix: 4, flags: 0)
            case "content-type": buffer.writeHPACKInteger(31, prefix: 4, flags: 0)
            default:
                buffer.writeInteger(UInt8(0))
                buffer.writeHPACKString(name)
            }
            buffer.writeHPACKString(value)
        }
    }

    private mutating func writeLimitChange(to buffer: inout ByteBuffer) {
        guard let change = pendingLimit else { return }
        pendingLimit = nil
        if change.smallest < change.final { buffer.writeHPACKInteger(change.smallest, prefix: 5, flags: 0x20) }
        buffer.writeHPACKInteger(change.final, prefix: 5, flags: 0x20)
    }

    /// One of the two fields: indexed when the table has it, else added to the table
    /// if it fits, else a literal.
    private mutating func write(_ entry: Entry, to buffer: inout ByteBuffer) {
        if let position = table.firstIndex(of: entry) {
            buffer.writeHPACKInteger(62 + position, prefix: 7, flags: 0x80)
            return
        }
        let fits = tableSize + entry.size <= limit
        if fits { table.insert(entry, at: 0) }
        switch entry {
        case .contentType:
            // With incremental indexing (01xxxxxx) or without (0000xxxx), name from the
            // static table's entry 31.
            buffer.writeHPACKInteger(31, prefix: fits ? 6 : 4, flags: fits ? 0x40 : 0)
            buffer.writeHPACKString("application/grpc")
        case .okStatus:
            buffer.writeInteger(UInt8(fits ? 0x40 : 0))
            buffer.writeHPACKString("grpc-status")
            buffer.writeHPACKString("0")
        }
    }
}

extension ByteBuffer {
    /// An HPACK integer (RFC 7541, 5.1) in an `prefix`-bit prefix, the first byte's other
    /// bits `flags`.
    mutating func writeHPACKInteger(_ value: Int, prefix: Int, flags: UInt8) {
        let limit = (1 << prefix) - 1
        guard value >= limit else {
            writeInteger(flags | UInt8(value))
            return
        }
        writeInteger(flags | UInt8(limit))
        var rest = value - limit
        while rest >= 128 {
            writeInteger(UInt8(rest & 0x7F | 0x80))
            rest >>= 7
        }
        writeInteger(UInt8(rest))
    }

    /// An HPACK string literal (RFC 7541, 5.2), not Huffman-coded.
    mutating func writeHPACKString(_ text: String) {
        writeHPACKInteger(text.utf8.count, prefix: 7, flags: 0)
        writeString(text)
    }
}
