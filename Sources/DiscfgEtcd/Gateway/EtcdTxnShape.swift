import DiscfgCore
import GRPCCore

/// A Txn request's shape, read from its protobuf bytes before they are decoded: a 4 MiB
/// message of empty compares is two million of them, which decoded take hundreds of MiB
/// before the count could be checked (238 MiB for one request). Here the count is taken
/// from the wire's field tags, holding nothing, and a request past etcd's limit is
/// refused as etcd refuses it; a nested transaction, which discfg does not serve, is
/// refused before any of it is decoded too.
enum EtcdTxnShape {
    /// `TxnRequest`'s fields: `compare`, `success`, `failure`.
    private static let compare = 1, success = 2, failure = 3
    /// `RequestOp`'s `request_txn`.
    private static let requestTxn = 4

    /// The answer to a nested transaction.
    static let nested = RPCError(code: .unimplemented, message: "etcdserver: nested transactions are not supported by discfg yet")

    /// Refuses a request with more than ``Limits/maxTransactionOperations`` compares, or
    /// operations in a branch ("etcdserver: too many operations in txn request",
    /// `INVALID_ARGUMENT`), or with a nested transaction. Bytes that are not a message
    /// pass, for the decoder to refuse.
    static func check(_ bytes: [UInt8]) throws {
        var counts = [0, 0, 0, 0]
        _ = try fields(of: bytes[...]) { number, value in
            guard number >= compare, number <= failure else { return }
            counts[number] += 1
            guard counts[number] <= Limits.maxTransactionOperations else { throw RPCError(etcd: EtcdError.tooManyOperations) }
            guard number != compare, let operation = value else { return }
            _ = try fields(of: operation) { field, _ in
                if field == requestTxn { throw nested }
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
