import DiscfgCore
import GRPCCore

/// A Txn request's shape, read from its protobuf bytes before they are decoded: a 4 MiB
/// message of empty compares is two million of them, which decoded take hundreds of MiB
/// before the count could be checked (238 MiB for one request). Here the counts are taken
/// from the wire's field tags, holding nothing, in the request and every transaction
/// nested in it, and a request past etcd's limit of each list, past
/// ``Limits/maxTransactionEntries`` in all, or nested deeper than
/// ``Limits/maxTransactionDepth``, is refused before any of it is decoded.
enum EtcdTxnShape {
    /// `TxnRequest`'s fields: `compare`, `success`, `failure`.
    private static let compare = 1, success = 2, failure = 3
    /// `RequestOp`'s `request_txn`.
    private static let requestTxn = 4

    /// Refuses a request with more than ``Limits/maxTransactionOperations`` compares, or
    /// operations in a branch, its own or a nested transaction's ("etcdserver: too many
    /// operations in txn request", `INVALID_ARGUMENT`), more than
    /// ``Limits/maxTransactionEntries`` in all, or transactions nested deeper than
    /// ``Limits/maxTransactionDepth``. Bytes that are not a message pass, for the decoder
    /// to refuse.
    static func check(_ bytes: [UInt8]) throws {
        var entries = 0
        try check(bytes[...], depth: 1, entries: &entries)
    }

    /// Checks one `TxnRequest` at `depth` (1 for the request itself), counting its
    /// entries into `entries`.
    private static func check(_ bytes: ArraySlice<UInt8>, depth: Int, entries: inout Int) throws {
        var counts = [0, 0, 0, 0]
        _ = try fields(of: bytes) { number, value in
            guard number >= compare, number <= failure else { return }
            counts[number] += 1
            guard counts[number] <= Limits.maxTransactionOperations else { throw RPCError(etcd: EtcdError.tooManyOperations) }
            entries += 1
            guard entries <= Limits.maxTransactionEntries else { throw RPCError(etcd: EtcdError.tooManyOperationsInAll) }
            guard number != compare, let operation = value else { return }
            _ = try fields(of: operation) { field, nested in
                guard field == requestTxn, let nested else { return }
                guard depth < Limits.maxTransactionDepth else { throw RPCError(etcd: EtcdError.nestedTooDeep) }
                try check(nested, depth: depth + 1, entries: &entries)
            }
        }
    }

    /// Calls `body` with each field's number, and its bytes when it is length-delimited,
    /// in order; false (having stopped) at bytes that are not protobuf's wire format.
    private static func fields(of bytes: ArraySlice<UInt8>, _ body: (Int, ArraySlice<UInt8>?) throws -> Void) throws -> Bool {
        var index = bytes.startIndex
        func varint() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while index < bytes.endIndex, shift < 64 {
                let byte = bytes[index]
                index += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            return nil
        }
        while index < bytes.endIndex {
            guard let tag = varint(), tag >> 3 > 0, tag >> 3 <= UInt64(Int32.max) else { return false }
            let number = Int(tag >> 3)
            switch tag & 7 {
            case 0:
                guard varint() != nil else { return false }
                try body(number, nil)
            case 1, 5:
                let width = tag & 7 == 1 ? 8 : 4
                guard bytes.endIndex - index >= width else { return false }
                index += width
                try body(number, nil)
            case 2:
                guard let length = varint(), length <= UInt64(bytes.endIndex - index) else { return false }
                let value = bytes[index..<(index + Int(length))]
                index += Int(length)
                try body(number, value)
            default:
                return false
            }
        }
        return true
    }
}
