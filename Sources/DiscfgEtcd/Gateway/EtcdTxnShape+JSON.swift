import DiscfgCore
import Foundation
import GRPCCore

/// A Txn request's shape in the JSON gateway's body, read before it is decoded, as
/// ``EtcdTxnShape/check(_:)`` reads the protobuf bytes: 4 MiB of `{"compare":[{},…]}` is
/// 1.4 million compares, which SwiftProtobuf's JSON decoder took 200 MiB to hold before
/// the count could be checked. Here the operations are counted as the bytes are scanned,
/// holding nothing, and the request is refused as soon as a list passes the limit.
extension EtcdTxnShape {
    /// Refuses a JSON `TxnRequest` with more than ``Limits/maxTransactionOperations``
    /// compares, or operations in a branch, as the gRPC path refuses them ("etcdserver: too
    /// many operations in txn request", `INVALID_ARGUMENT`), or with a nested transaction
    /// (`request_txn`). A list named twice counts once for all its items, as the decoder
    /// appends them. Bytes that are not JSON pass, for the decoder to refuse.
    static func checkJSON(_ json: Data) throws {
        try json.withUnsafeBytes { raw in
            var scanner = JSONTxnScanner()
            for byte in raw {
                try scanner.read(byte)
            }
        }
    }
}

/// Counts a JSON `TxnRequest`'s operations byte by byte: the items of the top-level
/// object's `compare`, `success` and `failure` lists, and the keys of each branch item,
/// which must not be a nested transaction. Only the depth and the short keys it matches
/// are held.
struct JSONTxnScanner {
    /// The lists counted: `compare`, `success`, `failure`.
    private static let lists: [[UInt8]] = [Array("compare".utf8), Array("success".utf8), Array("failure".utf8)]
    /// `RequestOp`'s nested transaction, by its proto and its JSON name.
    private static let nested: [[UInt8]] = [Array("request_txn".utf8), Array("requestTxn".utf8)]
    /// The longest key matched; longer strings are not held.
    private static let longestKey = 16

    /// Open objects and arrays.
    private var depth = 0
    private var inString = false
    private var escape = Escape.none
    /// The string being read at a depth whose keys matter, as decoded so far; nil once it
    /// cannot be a key matched.
    private var text: [UInt8]? = []
    /// The last string read where keys matter: the key when a `:` follows.
    private var lastString: [UInt8]?
    /// The list (0, 1, 2) whose value the top-level key names, nil for another key.
    private var keyList: Int?
    /// The list whose items are being read (depth 2), if it is one counted.
    private var list: Int?
    /// Whether the next value at the list's depth starts an item.
    private var expectingItem = false
    private var counts = [0, 0, 0]

    private enum Escape {
        case none
        case backslash
        /// `\u` and the hex digits read so far.
        case unicode(value: UInt32, digits: Int)
    }

    /// Reads one byte of the body.
    mutating func read(_ byte: UInt8) throws {
        if inString {
            readInString(byte)
            return
        }
        switch byte {
        case 0x20, 0x0A, 0x0D, 0x09:
            return
        case UInt8(ascii: "\""):
            try startValue()
            inString = true
            text = keysMatter ? [] : nil
        case UInt8(ascii: ":"):
            if depth == 1 {
                keyList = lastString.flatMap { key in Self.lists.firstIndex(of: key) }
            } else if depth == 3, list == 1 || list == 2, let key = lastString, Self.nested.contains(key) {
                throw EtcdTxnShape.nested
            }
            lastString = nil
        case UInt8(ascii: ","):
            if depth == 2, list != nil { expectingItem = true }
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            try startValue()
            depth += 1
            if depth == 2 {
                list = byte == UInt8(ascii: "[") ? keyList : nil
                expectingItem = list != nil
            }
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            if depth == 2 { list = nil }
            if depth == 1 { keyList = nil }
            depth -= 1
        default:
            // A number, true, false or null: each of its bytes may start an item only once.
            try startValue()
        }
    }

    /// Keys are matched in the top-level object and in a branch's items.
    private var keysMatter: Bool { depth == 1 || (depth == 3 && (list == 1 || list == 2)) }

    /// A value begins: at a counted list's depth, one more item.
    private mutating func startValue() throws {
        guard depth == 2, let list, expectingItem else { return }
        expectingItem = false
        counts[list] += 1
        guard counts[list] <= Limits.maxTransactionOperations else { throw RPCError(etcd: EtcdError.tooManyOperations) }
    }

    private mutating func readInString(_ byte: UInt8) {
        switch escape {
        case .backslash:
            escape = .none
            switch byte {
            case UInt8(ascii: "u"): escape = .unicode(value: 0, digits: 0)
            case UInt8(ascii: "b"): append(0x08)
            case UInt8(ascii: "f"): append(0x0C)
            case UInt8(ascii: "n"): append(0x0A)
            case UInt8(ascii: "r"): append(0x0D)
            case UInt8(ascii: "t"): append(0x09)
            default: append(byte)
            }
        case .unicode(let value, let digits):
            let digit: UInt32? = switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
            default: nil
            }
            guard let digit else {
                // Not JSON: the decoder refuses it.
                escape = .none
                text = nil
                return
            }
            if digits == 3 {
                escape = .none
                let scalar = value << 4 | digit
                // The keys matched are ASCII; any other character rules a key out.
                if scalar < 0x80 { append(UInt8(scalar)) } else { text = nil }
            } else {
                escape = .unicode(value: value << 4 | digit, digits: digits + 1)
            }
        case .none:
            switch byte {
            case UInt8(ascii: "\\"): escape = .backslash
            case UInt8(ascii: "\""):
                inString = false
                if keysMatter { lastString = text }
                text = nil
            default: append(byte)
            }
        }
    }

    private mutating func append(_ byte: UInt8) {
        guard text != nil else { return }
        if text!.count >= Self.longestKey {
            text = nil
        } else {
            text!.append(byte)
        }
    }
}
