import DiscfgAPI
import DiscfgCore
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

    @Test("an audit line written straight from its record in each format is the line made by parsing its JSON again", arguments: LogFormat.allCases)
    func directAuditLines(format: LogFormat) {
        var full = AuditRecord(api: "etcd", route: "/etcdserverpb.KV/Txn", time: (1_764_300_000, 7_000_000), elapsed: .microseconds(42_500))
        full.principal = Principal(kind: .token, id: "tok 1")
        full.user = Self.awkward
        full.method = "POST"
        full.action = "txn"
        full.path = "/v1/demo/keys/a=b"
        full.config = "demo"
        full.key = "/app/é"
        full.prefix = ""
        full.rangeEnd = "\u{0}"
        var names = AuditRecord.TransactionNames(Transaction(success: []))
        names.compared = ["/a", "/b \"c\""]
        names.changed = ["/x"]
        full.transaction = names
        full.status = 409
        full.grpcStatus = "FAILED_PRECONDITION"
        full.error = "conflict: \t tab"
        full.revision = -3
        var bare = AuditRecord(api: "rest", route: "/healthz", time: (1_764_300_001, 999_000_000), elapsed: .milliseconds(12))
        bare.status = 200
        bare.principal = Principal(kind: .anonymous, id: "anonymous")
        for (record, milliseconds) in [(full, "42.5"), (bare, "12")] {
            var json: [UInt8] = []
            record.append(to: &json)
            var direct: [UInt8] = []
            format.appendAuditLine(record, to: &direct)
            #expect(String(decoding: direct, as: UTF8.self) == String(decoding: format.auditLines(json), as: UTF8.self))
            #expect(String(decoding: direct, as: UTF8.self).contains(format == .json ? #""ms":\#(milliseconds)"# : " ms=\(milliseconds)"))
        }
        for hundredths in [0, 1, 9, 10, 11, 99, 100, 101, 110, 12_345] {
            let record = AuditRecord(api: "rest", route: "/", elapsed: .microseconds(hundredths * 10))
            var json: [UInt8] = []
            record.append(to: &json)
            var direct: [UInt8] = []
            format.appendAuditLine(record, to: &direct)
            #expect(direct == format.auditLines(json), "\(hundredths) hundredths")
        }
    }
}
