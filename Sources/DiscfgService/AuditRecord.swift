import DiscfgCore
import Foundation
import Synchronization

/// One line of the audit log: who asked for what, on which config and keys, and what
/// came of it — one per request and per refusal, on every face.
///
/// Written as one JSON object per line, its fields in a fixed order and left out when
/// they do not apply (`docs/server.md`, "Audit log", names them). It never holds a value,
/// a token, a change's message or any other body: only names (the principal, the route,
/// the config, keys) and outcomes. Every face's line is made in one place,
/// ``init(api:route:_:_:time:elapsed:)``, from what its ``AuditNote`` gathered, and
/// handed to an ``AuditTrail``.
///
/// ```json
/// {"time":"2026-11-26T18:52:13.123Z","api":"rest","principal":"token:3f9a0c12b7de","method":"PUT","route":"/v1/{config}/keys/{key}","path":"/v1/demo/keys/db/host","config":"demo","key":"/db/host","status":200,"revision":42,"ms":0.42}
/// ```
public struct AuditRecord: Sendable {
    /// Which API answered: `rest` (`serve` and the Lambda function) or `etcd`.
    public var api: String
    /// Who called, as the face authenticated them (never as the request names itself);
    /// nil when that is not known, as for a refused credential.
    public var principal: Principal?
    /// The user name a refused etcd `Auth.Authenticate` gave (a discfg token's id as the
    /// client claimed it, escaped printable; never the password), where `principal` is
    /// nil.
    public var user: String?
    /// The HTTP method, on the REST API.
    public var method: String?
    /// The route as declared (`/v1/{config}/keys/{key}`), `unmatched` for a path no route
    /// takes; on the etcd API, the RPC (`/etcdserverpb.KV/Put`).
    public var route: String
    /// The action the request was run as (the name of its kind of action: `get`,
    /// `set`, `txn`, `lease-grant`…), the same for a request on every face; left out for
    /// one that reached none (refused before it was read, or no config's).
    public var action: String?
    /// The request's path as sent, without its query (REST).
    public var path: String?
    /// The config the request names.
    public var config: String?
    /// The key or key prefix the route names (REST), or the etcd key, escaped printable.
    public var key: String?
    /// The `prefix` a listing, a watch or a delete of many keys names (REST).
    public var prefix: String?
    /// The end of an etcd key range, escaped printable.
    public var rangeEnd: String?
    /// The keys, prefixes and ranges a transaction compared, read and changed (REST
    /// `txn`), as `compared`, `read` and `changed`.
    public var transaction: TransactionNames?
    /// The HTTP status answered (REST).
    public var status: Int?
    /// The gRPC status answered (etcd), as its name: `OK`, `PERMISSION_DENIED`.
    public var grpcStatus: String?
    /// The discfg error code of a refusal or failure (`permissionDenied`).
    public var error: String?
    /// The config revision a change made.
    public var revision: Int64?
    /// When the request arrived, in seconds and nanoseconds since 1970 (UTC).
    public var time: (seconds: Int, nanoseconds: Int)
    /// How long it took to answer.
    public var elapsed: Duration

    /// A record of a request that arrived at `time` (now by default).
    public init(api: String, route: String, time: (seconds: Int, nanoseconds: Int) = AuditRecord.now(), elapsed: Duration = .zero) {
        self.api = api
        self.route = route
        self.time = time
        self.elapsed = elapsed
    }

    /// The wall clock now.
    public static func now() -> (seconds: Int, nanoseconds: Int) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return (Int(now.tv_sec), Int(now.tv_nsec))
    }

    /// The record's line, with its newline, appended to `line`. Written in bulk: the
    /// literal parts and each string free of bytes to escape are copied whole.
    public func append(to line: inout [UInt8]) {
        Self.literal(#"{"time":""#, &line)
        Self.appendTime(time, to: &line)
        line.append(UInt8(ascii: "\""))
        string("api", api, &line)
        if let principal {
            Self.appendName("principal", to: &line)
            line.append(UInt8(ascii: "\""))
            Self.appendEscaped(principal.kind.rawValue, to: &line)
            line.append(UInt8(ascii: ":"))
            Self.appendEscaped(principal.id, to: &line)
            line.append(UInt8(ascii: "\""))
        } else {
            Self.literal(#","principal":null"#, &line)
        }
        if let user { string("user", user, &line) }
        if let method { string("method", method, &line) }
        string("route", route, &line)
        if let action { string("action", action, &line) }
        if let path { string("path", path, &line) }
        if let config { string("config", config, &line) }
        if let key { string("key", key, &line) }
        if let prefix { string("prefix", prefix, &line) }
        if let rangeEnd { string("rangeEnd", rangeEnd, &line) }
        if let transaction {
            if !transaction.compared.isEmpty { strings("compared", transaction.compared, &line) }
            if !transaction.read.isEmpty { strings("read", transaction.read, &line) }
            if !transaction.changed.isEmpty { strings("changed", transaction.changed, &line) }
        }
        if let status { number("status", Int64(status), &line) }
        if let grpcStatus { string("grpcStatus", grpcStatus, &line) }
        if let error { string("error", error, &line) }
        if let revision { number("revision", revision, &line) }
        Self.literal(#","ms":"#, &line)
        let hundredths = hundredthsOfMillisecond
        Self.appendDecimal(hundredths / 100, to: &line)
        line.append(UInt8(ascii: "."))
        if hundredths % 100 < 10 { line.append(UInt8(ascii: "0")) }
        Self.appendDecimal(hundredths % 100, to: &line)
        Self.literal("}\n", &line)
    }

    /// How long the request took, in hundredths of a millisecond, rounded: `ms` is this
    /// over 100.
    public var hundredthsOfMillisecond: Int {
        let (seconds, attoseconds) = elapsed.components
        return Int(seconds) * 100_000 + Int((attoseconds + 5_000_000_000_000) / 10_000_000_000_000)
    }

    /// Appends `time` as an audit line writes it (``timestamp(_:)``).
    public static func appendTimestamp(_ time: (seconds: Int, nanoseconds: Int), to line: inout [UInt8]) {
        appendTime(time, to: &line)
    }

    /// `2026-11-26T18:52:13.123Z`, the time as an audit line writes it: for the lines
    /// written beside audit lines in one format (`serve --log-format`).
    public static func timestamp(_ time: (seconds: Int, nanoseconds: Int) = now()) -> String {
        var text: [UInt8] = []
        appendTime(time, to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// The record's line, with its newline.
    public var line: String {
        var bytes: [UInt8] = []
        append(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    private func string(_ name: StaticString, _ value: String, _ line: inout [UInt8]) {
        Self.appendName(name, to: &line)
        Self.appendString(value, to: &line)
    }

    private func strings(_ name: StaticString, _ values: [String], _ line: inout [UInt8]) {
        Self.appendName(name, to: &line)
        line.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { line.append(UInt8(ascii: ",")) }
            Self.appendString(value, to: &line)
        }
        line.append(UInt8(ascii: "]"))
    }

    private func number(_ name: StaticString, _ value: Int64, _ line: inout [UInt8]) {
        Self.appendName(name, to: &line)
        if value < 0 { line.append(UInt8(ascii: "-")) }
        Self.appendDecimal(Int(value.magnitude), to: &line)
    }

    private static func literal(_ text: StaticString, _ line: inout [UInt8]) {
        line.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private static func appendName(_ name: StaticString, to line: inout [UInt8]) {
        literal(#",""#, &line)
        literal(name, &line)
        literal(#"":"#, &line)
    }

    /// `value` as a JSON string: quotes, backslashes and control characters escaped, so
    /// whatever a client sent (a path, a key) stays inside its field and its line.
    static func appendString(_ value: String, to line: inout [UInt8]) {
        line.append(UInt8(ascii: "\""))
        appendEscaped(value, to: &line)
        line.append(UInt8(ascii: "\""))
    }

    /// `value`'s UTF-8 with what JSON must escape escaped; copied whole when nothing is.
    private static func appendEscaped(_ value: String, to line: inout [UInt8]) {
        var value = value
        value.withUTF8 { bytes in
            guard bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 == 0x7F }) else {
                return line.append(contentsOf: bytes)
            }
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\""): literal(#"\""#, &line)
                case UInt8(ascii: "\\"): literal(#"\\"#, &line)
                case UInt8(ascii: "\n"): literal(#"\n"#, &line)
                case UInt8(ascii: "\r"): literal(#"\r"#, &line)
                case UInt8(ascii: "\t"): literal(#"\t"#, &line)
                case 0..<0x20, 0x7F:
                    literal(#"\u00"#, &line)
                    line.append(hexDigit(byte >> 4))
                    line.append(hexDigit(byte & 0xF))
                default: line.append(byte)
                }
            }
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// Appends `value`'s decimal digits (`value` ≥ 0).
    public static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
        if value >= 10 { appendDecimal(value / 10, to: &bytes) }
        bytes.append(UInt8(ascii: "0") + UInt8(value % 10))
    }

    /// The text of the last second written, `2026-11-26T18:52:13.`: a busy log writes
    /// many lines a second, and converts each second once.
    private static let second = Mutex<(seconds: Int, text: [UInt8])>((-1, []))

    /// `2026-11-26T18:52:13.123Z`: UTC, to the millisecond.
    static func appendTime(_ time: (seconds: Int, nanoseconds: Int), to line: inout [UInt8]) {
        if let text = second.withLock({ $0.seconds == time.seconds ? $0.text : nil }) {
            line += text
        } else {
            var text: [UInt8] = []
            appendSecond(time.seconds, to: &text)
            second.withLock { $0 = (time.seconds, text) }
            line += text
        }
        let milliseconds = time.nanoseconds / 1_000_000
        line.append(UInt8(ascii: "0") + UInt8(milliseconds / 100))
        line.append(UInt8(ascii: "0") + UInt8(milliseconds / 10 % 10))
        line.append(UInt8(ascii: "0") + UInt8(milliseconds % 10))
        line.append(UInt8(ascii: "Z"))
    }

    private static func appendSecond(_ time: Int, to line: inout [UInt8]) {
        var seconds = time_t(time)
        var utc = tm()
        guard gmtime_r(&seconds, &utc) != nil else { return literal("1970-01-01T00:00:00.", &line) }
        func two(_ value: Int32) {
            line.append(UInt8(ascii: "0") + UInt8(value / 10))
            line.append(UInt8(ascii: "0") + UInt8(value % 10))
        }
        appendDecimal(Int(utc.tm_year) + 1900, to: &line)
        line.append(UInt8(ascii: "-"))
        two(utc.tm_mon + 1)
        line.append(UInt8(ascii: "-"))
        two(utc.tm_mday)
        line.append(UInt8(ascii: "T"))
        two(utc.tm_hour)
        line.append(UInt8(ascii: ":"))
        two(utc.tm_min)
        line.append(UInt8(ascii: ":"))
        two(utc.tm_sec)
        line.append(UInt8(ascii: "."))
    }
}
