import DiscfgCore
import Foundation
import GRPCCore

/// A Txn request's shape in the JSON gateway's body, read before it is decoded, as
/// ``EtcdTxnShape/check(_:)`` reads the protobuf bytes: 4 MiB of `{"compare":[{},…]}` is
/// 1.4 million compares, which SwiftProtobuf's JSON decoder took 200 MiB to hold before
/// the count could be checked. Here the operations are counted as the bytes are scanned,
/// in the request and every transaction nested in it, holding nothing, and the request is
/// refused as soon as a list passes the limit, the whole tree passes
/// ``Limits/maxTransactionEntries``, or a transaction nests deeper than
/// ``Limits/maxTransactionDepth``.
extension EtcdTxnShape {
    /// Refuses a JSON `TxnRequest` with more than ``Limits/maxTransactionOperations``
    /// compares, or operations in a branch, its own or a nested transaction's
    /// (`request_txn`), as the gRPC path refuses them ("etcdserver: too many operations
    /// in txn request", `INVALID_ARGUMENT`), with more than
    /// ``Limits/maxTransactionEntries`` in all, or nested too deep. A list named twice
    /// counts once for all its items, as the decoder appends them. Bytes that are not
    /// JSON pass, for the decoder to refuse.
    static func checkJSON(_ json: Data) throws {
        try json.withUnsafeBytes { raw in
            var scanner = JSONTxnScanner()
            for byte in raw {
                try scanner.read(byte)
            }
        }
    }
}

/// Counts a JSON `TxnRequest`'s operations byte by byte: the items of a transaction
/// object's `compare`, `success` and `failure` lists, and, in each branch item, the
/// transaction its `request_txn` holds, counted the same way. Only the open containers
/// that are part of the tree (at most three per level of nesting), the depth of the
/// others, and the short keys it matches are held.
struct JSONTxnScanner {
    /// The lists counted: `compare`, `success`, `failure`.
    private static let lists: [[UInt8]] = [Array("compare".utf8), Array("success".utf8), Array("failure".utf8)]
    /// `RequestOp`'s nested transaction, by its proto and its JSON name.
    private static let nested: [[UInt8]] = [Array("request_txn".utf8), Array("requestTxn".utf8)]
    /// The longest key matched; longer strings are not held.
    private static let longestKey = 16

    /// An open container that is part of the tree.
    private enum Kind {
        /// A `TxnRequest` object, with the items counted in each of its lists.
        case txn(counts: [Int])
        /// One of a transaction's lists (0, 1, 2), in the frame below.
        case list(Int)
        /// A branch's item (`RequestOp`).
        case operation
    }

    private struct Frame {
        var kind: Kind
        /// The container depth it was opened at.
        let depth: Int
    }

    /// Open objects and arrays.
    private var depth = 0
    /// The open containers of the tree, innermost last.
    private var frames: [Frame] = []
    /// How many transactions are open (the request and those nested in it).
    private var transactions = 0
    private var entries = 0
    private var inString = false
    private var escape = Escape.none
    /// The string being read at a depth whose keys matter, as decoded so far; nil once it
    /// cannot be a key matched.
    private var text: [UInt8]? = []
    /// The last string read where keys matter: the key when a `:` follows.
    private var lastString: [UInt8]?
    /// The key whose value comes next in a transaction or operation object, as read.
    private var key: [UInt8]?
    /// Whether the next value in the innermost list starts an item.
    private var expectingItem = false

    private enum Escape {
        case none
        case backslash
        /// `\u` and the hex digits read so far.
        case unicode(value: UInt32, digits: Int)
    }

    /// The innermost open container, when it is part of the tree.
    private var current: Kind? {
        guard let frame = frames.last, frame.depth == depth else { return nil }
        return frame.kind
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
            if keysMatter { key = lastString }
            lastString = nil
        case UInt8(ascii: ","):
            if case .list? = current { expectingItem = true }
            key = nil
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            try startValue()
            try open(object: byte == UInt8(ascii: "{"))
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            if let frame = frames.last, frame.depth == depth {
                frames.removeLast()
                if case .txn = frame.kind { transactions -= 1 }
            }
            depth -= 1
            key = nil
            expectingItem = false
        default:
            // A number, true, false or null: each of its bytes may start an item only once.
            try startValue()
        }
    }

    /// A container opens: part of the tree when it is the request, a transaction's list,
    /// a branch's item, or an item's nested transaction.
    private mutating func open(object: Bool) throws {
        let kind: Kind?
        switch current {
        case nil where depth == 0 && object: kind = .txn(counts: [0, 0, 0])
        case .txn? where !object: kind = key.flatMap { key in Self.lists.firstIndex(of: key) }.map { .list($0) }
        case .list(let list)? where object && list > 0: kind = .operation
        case .operation? where object && key.map({ Self.nested.contains($0) }) == true: kind = .txn(counts: [0, 0, 0])
        default: kind = nil
        }
        depth += 1
        key = nil
        lastString = nil
        guard let kind else { return }
        if case .txn = kind {
            transactions += 1
            guard transactions <= Limits.maxTransactionDepth else { throw RPCError(etcd: EtcdError.nestedTooDeep) }
        }
        frames.append(Frame(kind: kind, depth: depth))
        expectingItem = if case .list = kind { true } else { false }
    }

    /// Keys are matched in transaction objects and in a branch's items.
    private var keysMatter: Bool {
        switch current {
        case .txn?, .operation?: true
        case .list?, nil: false
        }
    }

    /// A value begins: in a counted list, one more item of the transaction below it.
    private mutating func startValue() throws {
        guard expectingItem, case .list(let list)? = current, frames.count >= 2, case .txn(var counts) = frames[frames.count - 2].kind else { return }
        expectingItem = false
        counts[list] += 1
        frames[frames.count - 2].kind = .txn(counts: counts)
        guard counts[list] <= Limits.maxTransactionOperations else { throw RPCError(etcd: EtcdError.tooManyOperations) }
        entries += 1
        guard entries <= Limits.maxTransactionEntries else { throw RPCError(etcd: EtcdError.tooManyOperationsInAll) }
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
