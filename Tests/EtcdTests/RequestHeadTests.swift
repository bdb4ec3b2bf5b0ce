@testable import DiscfgEtcd
import NIOHPACK
import Testing

/// The etcd API's check of request header blocks (RFC 9113, 8.2 and 8.3). (That a
/// refused block ends only its stream, over a real socket, is in
/// `Tests/Peers/h2_abuse.py`.)
@Suite("etcd API: request header blocks")
struct RequestHeadTests {
    static let valid: [(String, String)] = [
        (":method", "POST"), (":scheme", "http"), (":path", "/etcdserverpb.KV/Put"), (":authority", "localhost:2379"),
        ("content-type", "application/grpc"), ("te", "trailers"), ("user-agent", "grpc-python/1.66 grpc-c/43"),
        ("grpc-accept-encoding", "identity,deflate,gzip"),
    ]

    private static func head(_ fields: [(String, String)]) throws(GRPCRequestHead.Malformed) -> GRPCRequestHead {
        try GRPCRequestHead(HPACKHeaders(fields))
    }

    @Test("a gRPC client's block gives the path, content type and encoding")
    func wellFormed() throws {
        #expect(try Self.head(Self.valid) == GRPCRequestHead(path: "/etcdserverpb.KV/Put", contentType: "application/grpc", encoding: nil))
        let encoded = try Self.head(Self.valid + [("grpc-encoding", "gzip"), ("content-type", "text/plain")])
        #expect(encoded.encoding == "gzip")
        #expect(encoded.contentType == "application/grpc", "the first content-type counts")
        // Without a content type the block is still well formed; the connection answers
        // it as not gRPC.
        #expect(try Self.head(Self.valid.filter { $0.0 != "content-type" }).contentType == nil)
        // Values may hold spaces, tabs and bytes past ASCII.
        #expect(throws: Never.self) { try Self.head(Self.valid + [("x-note", "a\tb c é")]) }
    }

    /// A malformed variant of the valid block.
    struct Variant: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let fields: [(String, String)]

        init(_ what: String, _ change: ([(String, String)]) -> [(String, String)]) {
            testDescription = what
            fields = change(RequestHeadTests.valid)
        }
    }

    static let malformedVariants: [Variant] = [
        Variant("missing :method") { $0.filter { $0.0 != ":method" } },
        Variant("missing :scheme") { $0.filter { $0.0 != ":scheme" } },
        Variant("missing :path") { $0.filter { $0.0 != ":path" } },
        Variant("empty :path") { $0.map { $0.0 == ":path" ? (":path", "") : $0 } },
        Variant(":path twice") { [(":path", "/a")] + $0 },
        Variant(":authority twice") { [(":authority", "x")] + $0 },
        Variant("a response's pseudo-header") { [(":status", "200")] + $0 },
        Variant("an unknown pseudo-header") { [(":protocol", "websocket")] + $0 },
        Variant("a pseudo-header after a regular field") { $0 + [(":authority", "x")] },
        Variant("a space in :path") { $0.map { $0.0 == ":path" ? (":path", "/a b") : $0 } },
        Variant("DEL in :method") { $0.map { $0.0 == ":method" ? (":method", "PO\u{7F}ST") : $0 } },
        Variant("an uppercase name") { $0 + [("X-Trace", "1")] },
        Variant("an empty name") { $0 + [("", "1")] },
        Variant("a name with a space") { $0 + [("x trace", "1")] },
        Variant("a name with a colon inside") { $0 + [("x:trace", "1")] },
        Variant("connection") { $0 + [("connection", "close")] },
        Variant("keep-alive") { $0 + [("keep-alive", "5")] },
        Variant("proxy-connection") { $0 + [("proxy-connection", "close")] },
        Variant("transfer-encoding") { $0 + [("transfer-encoding", "chunked")] },
        Variant("upgrade") { $0 + [("upgrade", "h2c")] },
        Variant("te other than trailers") { $0.map { $0.0 == "te" ? ("te", "gzip") : $0 } },
        Variant("LF in a value") { $0 + [("x-trace", "a\nb")] },
        Variant("CR in a value") { $0 + [("x-trace", "a\rb")] },
        Variant("NUL in a value") { $0 + [("x-trace", "a\u{0}b")] },
    ]

    @Test("a malformed block is refused", arguments: malformedVariants)
    func malformed(_ variant: Variant) {
        #expect(throws: GRPCRequestHead.Malformed.self) { try Self.head(variant.fields) }
    }

    @Test("trailers take regular fields by the same rules, and no pseudo-header")
    func trailers() {
        #expect(throws: Never.self) { try GRPCRequestHead.checkTrailers(HPACKHeaders([("x-checksum", "abc")])) }
        #expect(throws: Never.self) { try GRPCRequestHead.checkTrailers(HPACKHeaders()) }
        for fields in [[(":path", "/a")], [("X-Checksum", "abc")], [("connection", "close")], [("x-checksum", "a\r\nb")]] {
            #expect(throws: GRPCRequestHead.Malformed.self, "\(fields)") { try GRPCRequestHead.checkTrailers(HPACKHeaders(fields)) }
        }
    }
}
