import DiscfgCore
import DiscfgNetwork
import GRPCCore

/// The gRPC status of an outcome, as trailers carry it.
enum GRPCStatus {
    /// `grpc-status` and `grpc-message` for an outcome: OK, the code and message of an
    /// `RPCError` (handlers throw them as the failure policy chose, ``EtcdCalls``), a
    /// caller's own ``DiscfgError`` in etcd's words, or `INTERNAL` for anything else, of
    /// which a client is told nothing more: never a Swift or NIO error's text.
    static func fields(_ error: (any Error)?) -> [(name: String, value: String)] {
        guard let error else { return [("grpc-status", "0")] }
        let (code, message) = status(error)
        return [("grpc-status", String(code)), ("grpc-message", percentEncoded(message))]
    }

    /// The code and message a client is told of `error` (see ``fields(_:)``); the
    /// HTTP/JSON gateway tells the same.
    static func status(_ error: any Error) -> (code: Int, message: String) {
        switch error {
        case let error as RPCError: (error.code.rawValue, error.message)
        case is CancellationError: (RPCError.Code.cancelled.rawValue, "the request was cancelled")
        case let error as DiscfgError where FailurePolicy.isCallers(error):
            (RPCError(etcd: error).code.rawValue, RPCError(etcd: error).message)
        default: (RPCError.Code.internalError.rawValue, "etcdserver: internal error")
        }
    }

    /// gRPC's encoding of `grpc-message`: printable ASCII but `%` as it is, every other
    /// byte of the UTF-8 as `%XX`.
    static func percentEncoded(_ message: String) -> String {
        var out = ""
        for byte in message.utf8 {
            if byte >= 0x20, byte <= 0x7E, byte != UInt8(ascii: "%") {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
