@testable import DiscfgEtcd
import NIOCore
import NIOHPACK
import Testing

/// Header blocks a client repeats are decoded once, and only while the HPACK table
/// cannot have changed under them.
@Suite("etcd API: repeated header blocks are decoded once, never past a change of the HPACK table")
struct HTTP2RecentBlocksTests {
    typealias Machine = HTTP2ConnectionTests.Machine

    /// Sends each block as a whole request on the next stream; the fields and numbers the
    /// machine gives for them.
    static func open(_ blocks: [[UInt8]]) -> [(fields: [String], number: UInt64?)] {
        var machine = HTTP2ConnectionTests.machine()
        HTTP2ConnectionTests.open(&machine)
        var stream: UInt32 = 1
        var opened: [(fields: [String], number: UInt64?)] = []
        for block in blocks {
            let frame = ConnectionHoldTests.frame(0x1, flags: 0x5, stream: stream, block)
            for event in HTTP2ConnectionTests.feed(&machine, frame, accept: false) {
                if case .opened(_, let fields, _, let number) = event { opened.append((fields.map { "\($0.name): \($0.value)" }, number)) }
            }
            stream += 2
        }
        return opened
    }

    static func literal(_ name: String, _ value: String) -> [UInt8] {
        [0x40, UInt8(name.utf8.count)] + Array(name.utf8) + [UInt8(value.utf8.count)] + Array(value.utf8)
    }

    @Test("the same indexed bytes before and after a field enters the table: read again, with the table's new entry")
    func tableChangeForgets() {
        let newest: [UInt8] = [0xBE]  // index 62: the dynamic table's newest entry
        let opened = Self.open([Self.literal("x-a", "1"), newest, newest, Self.literal("x-b", "2"), newest, [0xBF], newest])
        #expect(opened.map(\.fields) == [["x-a: 1"], ["x-a: 1"], ["x-a: 1"], ["x-b: 2"], ["x-b: 2"], ["x-a: 1"], ["x-b: 2"]])
        let numbers = opened.map(\.number)
        #expect(numbers[0] == nil && numbers[3] == nil, "a literal with indexing changes the table: no number")
        #expect(numbers[1] != nil && numbers[2] == numbers[1], "a repeated indexed block shares its number")
        #expect(numbers[4] != nil && numbers[4] != numbers[1], "after the table changed, the same bytes are a new block")
        #expect(numbers[6] == numbers[4])
    }

    @Test("a client's encoder, fields repeated and changed with a small table that evicts: every block reads as a fresh decoder reads it")
    func agreesWithFreshDecoder() throws {
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator(), maxDynamicTableSize: 256)
        var reference = HPACKDecoder(allocator: ByteBufferAllocator())
        var generator = SystemRandomNumberGenerator()
        let methods = ["/etcdserverpb.KV/Put", "/etcdserverpb.KV/Range", "/etcdserverpb.Lease/LeaseGrant"]
        var blocks: [[UInt8]] = []
        var expected: [[String]] = []
        for round in 0..<300 {
            var headers: HPACKHeaders = [":method": "POST", ":scheme": "http", ":path": methods[Int.random(in: 0..<3, using: &generator)]]
            headers.add(name: "content-type", value: "application/grpc")
            // Now and then a value the table has not seen, which enters it and evicts others.
            if round % 7 == 0 { headers.add(name: "token", value: "t\(Int.random(in: 0..<1_000_000, using: &generator))") }
            var buffer = ByteBuffer()
            try encoder.encode(headers: headers, to: &buffer)
            blocks.append(Array(buffer.readableBytesView))
            var copy = buffer
            expected.append(try reference.decodeHeaders(from: &copy).map { "\($0.name): \($0.value)" })
        }
        let opened = Self.open(blocks)
        #expect(opened.count == blocks.count)
        let wrong = zip(opened.map(\.fields), expected).enumerated().filter { $0.element.0 != $0.element.1 }
        #expect(wrong.isEmpty, "\(wrong.count) blocks read otherwise, the first (\(wrong.first?.offset ?? -1)) as \(wrong.first?.element.0 ?? [])")
        let numbered = opened.compactMap(\.number)
        #expect(Set(numbered).count < numbered.count, "repeated blocks were read once")
    }

    @Test("only indexed fields: one byte each, or a 7-bit prefix of ones continued to a byte without its top bit")
    func onlyIndexed() {
        func check(_ bytes: [UInt8]) -> Bool { HTTP2RecentBlocks.onlyIndexedFields(ByteBuffer(bytes: bytes)) }
        #expect(check([0x82, 0x86, 0xBE]))
        #expect(check([0xFF, 0x80, 0x01, 0x84]), "index 255, then 4")
        #expect(!check([0xFF, 0x80]), "a prefix continued past the block")
        #expect(!check([0x82, 0x40, 0x01, 0x61, 0x01, 0x62]), "a literal with incremental indexing")
        #expect(!check([0x82, 0x20]), "a table size update")
        #expect(!check([0x0F, 0x00]), "a literal without indexing")
    }
}
