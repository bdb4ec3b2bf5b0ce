/// gRPC's `grpc-timeout` request header: up to 8 digits and a unit, `H`ours, `M`inutes,
/// `S`econds, `m`illiseconds, `u`microseconds or `n`anoseconds (gRPC over HTTP/2,
/// "Requests"). A call's deadline is the earlier of it and the server's request timeout.
enum GRPCTimeout {
    /// The timeout `text` names, or nil when it is malformed (answered `INTERNAL`, as
    /// grpc-go answers it).
    static func parse(_ text: String) -> Duration? {
        let bytes = Array(text.utf8)
        guard (2...9).contains(bytes.count), let unit = bytes.last else { return nil }
        var value: Int64 = 0
        for byte in bytes.dropLast() {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        switch unit {
        case UInt8(ascii: "H"): return .seconds(value * 3600)
        case UInt8(ascii: "M"): return .seconds(value * 60)
        case UInt8(ascii: "S"): return .seconds(value)
        case UInt8(ascii: "m"): return .milliseconds(value)
        case UInt8(ascii: "u"): return .microseconds(value)
        case UInt8(ascii: "n"): return .nanoseconds(value)
        default: return nil
        }
    }
}
