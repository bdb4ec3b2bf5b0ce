import DiscfgAPI
import DiscfgService
import Foundation
import Testing

/// `serve --log-format`: each format's lines, and audit lines made in it, stay one line
/// each whatever a value holds.
@Suite("API: log formats")
struct LogFormatTests {
    static let awkward = "a \"quoted\" value=x\nand a second line \\ back"

    @Test("logfmt quotes a value with a space, =, a quote, a backslash or a control character, and leaves a plain word bare")
    func logfmt() {
        let line = LogFormat.logfmt.line(time: "T", level: .notice, label: "discfg", message: "serving", fields: [("plain", "word"), ("odd", Self.awkward), ("empty", "")])
        #expect(line == #"time=T level=notice label=discfg msg=serving plain=word odd="a \"quoted\" value=x\nand a second line \\ back" empty="""# + "\n")
    }

    @Test("json writes an object a line, fields after time, level, label and msg")
    func json() throws {
        let line = LogFormat.json.line(time: "T", level: .warning, label: "discfg", message: Self.awkward, fields: [("api", "http://h/v1/")])
        #expect(line.hasSuffix("\n") && line.dropLast().split(separator: "\n").count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        #expect(object == ["time": "T", "level": "warning", "label": "discfg", "msg": Self.awkward, "api": "http://h/v1/"])
    }

    @Test("an audit record's line is kept as it is in json, and made key=value pairs after time, level and label in logfmt and text")
    func audit() {
        var record = AuditRecord(api: "rest", route: "/v1/{config}/keys/{key}", time: (1_764_300_000, 123_000_000))
        record.path = "/v1/demo/keys/a b"
        record.status = 200
        var lines: [UInt8] = []
        record.append(to: &lines)
        record.error = "x"
        record.append(to: &lines)
        #expect(LogFormat.json.auditLines(lines) == lines)
        let logfmt = String(decoding: LogFormat.logfmt.auditLines(lines), as: UTF8.self).split(separator: "\n")
        #expect(logfmt.count == 2)
        #expect(logfmt.first == #"time=2025-11-28T03:20:00.123Z level=info label=audit msg=request api=rest route=/v1/{config}/keys/{key} path="/v1/demo/keys/a b" status=200 ms=0"#)
        let text = String(decoding: LogFormat.text.auditLines(lines), as: UTF8.self)
        #expect(text.hasPrefix("2025-11-28T03:20:00.123Z info audit: api=rest route=/v1/{config}/keys/{key} path=\"/v1/demo/keys/a b\" status=200 ms=0 request\n"), "\(text)")
    }
}
