import NIOHPACK

/// What a request's HTTP/2 header block tells the connection, read in the one pass that
/// also checks the block is well formed (RFC 9113, 8.2 and 8.3).
///
/// A block it refuses ends its stream with RST_STREAM `PROTOCOL_ERROR`, as RFC 9113
/// 8.1.1 asks for a malformed request; the connection and its other streams go on. The
/// server's own blocks need no check: ``ResponseHeaderEncoder`` writes the few it sends.
struct GRPCRequestHead: Equatable {
    /// `:path`, the method asked for (`/etcdserverpb.KV/Put`).
    let path: String
    /// The first `content-type`, if any.
    let contentType: String?
    /// The first `grpc-encoding`, if any.
    let encoding: String?
    /// The first `grpc-timeout`, as sent (``GRPCTimeout``), if any.
    var timeout: String?
    /// The first `token`, the etcd token an authenticated client sends, if any.
    var token: String? = nil

    /// Why a header block is malformed.
    struct Malformed: Error, Equatable, CustomStringConvertible {
        let description: String

        init(_ description: String) {
            self.description = description
        }
    }

    private static let method: UInt8 = 1
    private static let scheme: UInt8 = 2
    private static let pathBit: UInt8 = 4
    private static let authority: UInt8 = 8
}

extension GRPCRequestHead {
    /// Reads a request's header block: `:method`, `:scheme` and `:path` once each (and
    /// `:authority` at most once) before any other field, no other pseudo-header, field
    /// names in lowercase `token` characters, no connection-specific fields, `te` only
    /// as `trailers`, and no NUL, CR or LF in a value (nor space or control characters
    /// in a pseudo-header's).
    init(_ headers: HPACKHeaders) throws(Malformed) {
        var seen: UInt8 = 0
        var regular = false
        var path = ""
        var contentType: String?
        var encoding: String?
        var timeout: String?
        var token: String?
        for (name, value, _) in headers {
            if name.utf8.first == UInt8(ascii: ":") {
                guard !regular else { throw Malformed("pseudo-header \(name) after a regular field") }
                let bit = Self.pseudoHeaderBit(name)
                guard bit != 0 else { throw Malformed("pseudo-header \(name) is not one of a request's") }
                guard seen & bit == 0 else { throw Malformed("pseudo-header \(name) twice") }
                seen |= bit
                guard Self.all(value, Self.isPseudoHeaderValueByte) else { throw Malformed("pseudo-header \(name) holds a space or control character") }
                if bit == Self.pathBit {
                    guard !value.isEmpty else { throw Malformed("empty :path") }
                    path = value
                }
            } else {
                regular = true
                try Self.checkRegular(name, value)
                // Compared only where the length matches: most fields are none of these.
                switch name.utf8.count {
                case 2 where name == "te":
                    guard value == "trailers" else { throw Malformed("te other than trailers") }
                case 5 where name == "token":
                    if token == nil { token = value }
                case 12 where name == "content-type":
                    if contentType == nil { contentType = value }
                case 12 where name == "grpc-timeout":
                    if timeout == nil { timeout = value }
                case 13 where name == "grpc-encoding":
                    if encoding == nil { encoding = value }
                default:
                    break
                }
            }
        }
        let required = Self.method | Self.scheme | Self.pathBit
        guard seen & required == required else { throw Malformed("a request needs :method, :scheme and :path") }
        self.path = path
        self.contentType = contentType
        self.encoding = encoding
        self.timeout = timeout
        self.token = token
    }

    /// The bit of a request's pseudo-header, 0 for any other name.
    private static func pseudoHeaderBit(_ name: String) -> UInt8 {
        switch name.utf8.count {
        case 5 where name == ":path": pathBit
        case 7 where name == ":method": method
        case 7 where name == ":scheme": scheme
        case 10 where name == ":authority": authority
        default: 0
        }
    }

    /// Checks trailers a client sends after its messages: regular fields only, by the
    /// same rules as a request's.
    static func checkTrailers(_ headers: HPACKHeaders) throws(Malformed) {
        for (name, value, _) in headers {
            guard name.utf8.first != UInt8(ascii: ":") else { throw Malformed("pseudo-header \(name) in trailers") }
            try checkRegular(name, value)
        }
    }

    private static func checkRegular(_ name: String, _ value: String) throws(Malformed) {
        guard !name.isEmpty, all(name, isTokenCharacter) else { throw Malformed("field name \(name.debugDescription) is not a lowercase token") }
        switch name.utf8.count {
        case 7 where name == "upgrade", 10 where name == "connection" || name == "keep-alive",
             16 where name == "proxy-connection", 17 where name == "transfer-encoding":
            throw Malformed("connection-specific field \(name)")
        default:
            break
        }
        guard all(value, isFieldValueByte) else { throw Malformed("field \(name) holds NUL, CR or LF") }
    }

    /// Whether every byte of `text` passes `test`, read from its storage in place (the
    /// generic walk of a `UTF8View` took several times as long).
    @inline(__always)
    private static func all(_ text: String, _ test: (UInt8) -> Bool) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            for byte in bytes where !test(byte) { return false }
            return true
        }
    }

    /// A byte a pseudo-header's value may hold: no space or control character.
    @inline(__always)
    private static func isPseudoHeaderValueByte(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte != 0x7F
    }

    /// A byte a field value may hold: anything but NUL, CR and LF.
    @inline(__always)
    private static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte != 0 && byte != 0x0A && byte != 0x0D
    }

    /// RFC 9110's `tchar` less uppercase letters, which HTTP/2 forbids in names.
    @inline(__always)
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x21, 0x23...0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x30...0x39, 0x5E...0x7A, 0x7C, 0x7E: true
        default: false
        }
    }
}

/// What a connection read lately of header blocks its client repeats: each block's
/// head and method, by the block's number (``HTTP2RecentBlocks``), as many as that
/// remembers blocks. A number is never given twice, so nothing here goes stale.
struct RecentRequestHeads {
    private var entries: [(number: UInt64, head: GRPCRequestHead, method: GRPCMethod?)] = []

    /// The head and method read of the block numbered `number`, if kept.
    func read(_ number: UInt64) -> (GRPCRequestHead, GRPCMethod?)? {
        for entry in entries where entry.number == number { return (entry.head, entry.method) }
        return nil
    }

    /// Keeps what the block numbered `number` was read as.
    mutating func note(_ number: UInt64, head: GRPCRequestHead, method: GRPCMethod?) {
        if entries.count == HTTP2RecentBlocks.capacity { entries.removeFirst() }
        entries.append((number, head, method))
    }
}
