import DiscfgJSON
import DiscfgService
import Foundation
import Logging

/// How the server writes its log lines, its own and the audit lines alike, so that one
/// parser reads everything on standard error (`serve --log-format`).
///
/// - `text`: `TIME LEVEL LABEL: key=value … message`, for a person at a terminal.
/// - `json`: one JSON object a line, `{"time": …, "level": …, "msg": …, …}`; an audit
///   line is the ``AuditRecord`` as the audit log file has it.
/// - `logfmt`: `time=… level=… msg="…" key=value …`, values quoted when they hold a
///   space, `=` or `"`.
public enum LogFormat: String, CaseIterable, Sendable {
    case text, json, logfmt

    /// One line (with its newline): `message` at `level` from `label`, then `fields` in
    /// their order. `time` is when, as the line says it.
    public func line(time: String, level: Logger.Level, label: String, message: String, fields: [(String, String)] = []) -> String {
        switch self {
        case .text:
            let pairs = fields.map { " \($0.0)=\(Self.logfmtValue($0.1))" }.joined()
            return "\(time) \(level) \(label):\(pairs) \(message)\n"
        case .json:
            var members: [(key: String, value: JSONValue)] = [("time", .string(time)), ("level", .string(level.rawValue)), ("label", .string(label)), ("msg", .string(message))]
            members += fields.map { (key: $0.0, value: JSONValue.string($0.1)) }
            return ((try? JSONSerializer.string(.object(JSONObject(members)))) ?? "{}") + "\n"
        case .logfmt:
            let pairs = [("time", time), ("level", level.rawValue), ("label", label), ("msg", message)] + fields
            return pairs.map { "\($0.0)=\(Self.logfmtValue($0.1))" }.joined(separator: " ") + "\n"
        }
    }

    /// The time as the `json` and `logfmt` lines say it, and an audit line does: UTC to the
    /// millisecond (`2026-11-28T06:10:20.123Z`).
    public static func now() -> String { AuditRecord.timestamp() }

    /// Audit lines already written as JSON (``AuditRecord``'s, a line each) in this format:
    /// as they are in `json`; otherwise each member a `key=value` pair after the time, level
    /// `info` and the label `audit`. It parses them, and is the reference
    /// ``appendAuditLine(_:to:)`` is tested against.
    public func auditLines(_ lines: [UInt8]) -> [UInt8] {
        guard self != .json else { return lines }
        var out: [UInt8] = []
        out.reserveCapacity(lines.count)
        for line in lines.split(separator: UInt8(ascii: "\n")) {
            guard case .object(let record)? = try? JSONParser.parse(Array(line)) else {
                out += line + [UInt8(ascii: "\n")]
                continue
            }
            var time = ""
            var fields: [(String, String)] = []
            for (key, value) in record {
                switch value {
                case .string(let text) where key == "time": time = text
                case .string(let text): fields.append((key, text))
                case .null: continue
                default: fields.append((key, (try? JSONSerializer.string(value)) ?? ""))
                }
            }
            out += Array(self.line(time: time, level: .info, label: "audit", message: "request", fields: fields).utf8)
        }
        return out
    }

    /// A logfmt value: bare when it is a plain word, else quoted with `"`, `\` and control
    /// characters escaped, so a value never runs into the next pair or line.
    static func logfmtValue(_ value: String) -> String {
        let plain = !value.isEmpty && !value.unicodeScalars.contains { $0 == " " || $0 == "=" || $0 == "\"" || $0 == "\\" || $0.value < 0x20 || $0.value == 0x7F }
        if plain { return value }
        var quoted = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            case "\t": quoted += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: quoted += String(format: "\\u%04x", scalar.value)
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }
}

extension AuditTrail {
    /// A trail appending its lines to `sink` in `format` (an audit log file keeps `json`).
    public convenience init(sink: LogSink, format: LogFormat, urgent: Bool = false) {
        self.init(render: { format.appendAuditLine($0, to: &$1) }) { sink.append(bytes: $0, urgent: urgent) }
    }
}
