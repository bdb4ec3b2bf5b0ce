import GRPCCore

/// The gRPC status of an outcome, as trailers carry it.
enum GRPCStatus {
    /// `grpc-status` and `grpc-message` for an outcome: OK, the code and message of an
    /// `RPCError`, or `unknown` for anything else.
    static func fields(_ error: (any Error)?) -> [(name: String, value: String)] {
        guard let error else { return [("grpc-status", "0")] }
        let (code, message): (Int, String) = switch error {
        case let error as RPCError: (error.code.rawValue, error.message)
        case is CancellationError: (RPCError.Code.cancelled.rawValue, "the request was cancelled")
        default: (RPCError.Code.unknown.rawValue, "\(error)")
        }
        return [("grpc-status", String(code)), ("grpc-message", percentEncoded(message))]
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
