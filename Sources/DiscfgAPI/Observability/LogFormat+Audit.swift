import DiscfgCore
import DiscfgJSON
import DiscfgService

extension LogFormat {
    /// `record`'s line in this format, with its newline, written straight from the record:
    /// its JSON (``AuditRecord/append(to:)``) in `json`; otherwise its members as
    /// `key=value` pairs after the time, level `info` and the label `audit`, in the JSON's
    /// order and as ``auditLines(_:)`` makes them of that JSON (a member that is null left
    /// out, a list as its JSON, `ms` as the shortest decimal), without parsing it again.
    public func appendAuditLine(_ record: AuditRecord, to line: inout [UInt8]) {
        switch self {
        case .json:
            record.append(to: &line)
            return
        case .text:
            AuditRecord.appendTimestamp(record.time, to: &line)
            Self.literal(" info audit:", &line)
        case .logfmt:
            Self.literal("time=", &line)
            AuditRecord.appendTimestamp(record.time, to: &line)
            Self.literal(" level=info label=audit msg=request", &line)
        }
        Self.pair("api", record.api, &line)
        if let principal = record.principal { Self.principalPair(principal, &line) }
        if let user = record.user { Self.pair("user", user, &line) }
        if let method = record.method { Self.pair("method", method, &line) }
        Self.pair("route", record.route, &line)
        if let action = record.action { Self.pair("action", action, &line) }
        if let path = record.path { Self.pair("path", path, &line) }
        if let config = record.config { Self.pair("config", config, &line) }
        if let key = record.key { Self.pair("key", key, &line) }
        if let prefix = record.prefix { Self.pair("prefix", prefix, &line) }
        if let rangeEnd = record.rangeEnd { Self.pair("rangeEnd", rangeEnd, &line) }
        if let transaction = record.transaction {
            let lists: [(StaticString, [String])] = [("compared", transaction.compared), ("read", transaction.read), ("changed", transaction.changed)]
            for (name, keys) in lists where !keys.isEmpty {
                Self.pair(name, (try? JSONSerializer.string(.array(keys.map(JSONValue.string)))) ?? "", &line)
            }
        }
        if let status = record.status { Self.pair("status", String(status), &line) }
        if let grpcStatus = record.grpcStatus { Self.pair("grpcStatus", grpcStatus, &line) }
        if let error = record.error { Self.pair("error", error, &line) }
        if let revision = record.revision { Self.pair("revision", String(revision), &line) }
        Self.literal(" ms=", &line)
        let hundredths = record.hundredthsOfMillisecond
        AuditRecord.appendDecimal(hundredths / 100, to: &line)
        if hundredths % 100 != 0 {
            line.append(UInt8(ascii: "."))
            line.append(UInt8(ascii: "0") + UInt8(hundredths % 100 / 10))
            if hundredths % 10 != 0 { line.append(UInt8(ascii: "0") + UInt8(hundredths % 10)) }
        }
        if self == .text { Self.literal(" request", &line) }
        line.append(UInt8(ascii: "\n"))
    }

    /// ` name=value`, the value bare when it is a plain word (``logfmtValue(_:)``).
    private static func pair(_ name: StaticString, _ value: String, _ line: inout [UInt8]) {
        line.append(UInt8(ascii: " "))
        literal(name, &line)
        line.append(UInt8(ascii: "="))
        var value = value
        let plain = value.withUTF8 { bytes in
            guard !bytes.isEmpty, !bytes.contains(where: quoted) else { return false }
            line.append(contentsOf: bytes)
            return true
        }
        if !plain { line.append(contentsOf: logfmtValue(value).utf8) }
    }

    /// ` principal=kind:id`, as ``pair(_:_:_:)`` writes it, with no string made of the
    /// two when the id is a plain word (as a kind always is).
    private static func principalPair(_ principal: Principal, _ line: inout [UInt8]) {
        var id = principal.id
        let plain = id.withUTF8 { bytes in
            guard !bytes.contains(where: quoted) else { return false }
            literal(" principal=", &line)
            line.append(contentsOf: principal.kind.rawValue.utf8)
            line.append(UInt8(ascii: ":"))
            line.append(contentsOf: bytes)
            return true
        }
        if !plain { pair("principal", "\(principal.kind.rawValue):\(principal.id)", &line) }
    }

    /// Whether `byte` makes a logfmt value quoted (``logfmtValue(_:)``): a space or control
    /// character, `=`, `"` or `\`.
    private static func quoted(_ byte: UInt8) -> Bool {
        byte <= 0x20 || byte == UInt8(ascii: "=") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F
    }

    private static func literal(_ text: StaticString, _ line: inout [UInt8]) {
        line.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}
