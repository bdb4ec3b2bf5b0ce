import Foundation

/// Recorded outputs: what the CLI, `serve` and the Lambda function answer to a fixed set
/// of requests, kept in `Tests/Recorded/` and compared byte for byte, so a change of
/// structure that changes a single byte of what users see is caught.
///
/// After a change that is meant to alter an output, record again and review the diff:
/// `DISCFG_RECORD=1 swift test --skip-build --filter Recorded`.
public enum Recording {
    /// The folder of recordings in this checkout.
    public static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().appendingPathComponent("../../Tests/Recorded").standardized

    /// Whether this run writes recordings instead of comparing with them.
    public static var recording: Bool { ProcessInfo.processInfo.environment["DISCFG_RECORD"] == "1" }

    /// Compares `transcript` with the recording `name`; returns a description of the first
    /// difference, or nil when they are the same (or when recording, after writing it).
    public static func compare(_ transcript: String, with name: String) throws -> String? {
        let file = folder.appendingPathComponent(name)
        if recording {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(transcript.utf8).write(to: file)
            return nil
        }
        guard let recorded = try? String(contentsOf: file, encoding: .utf8) else {
            return "no recording \(file.path); record it with DISCFG_RECORD=1"
        }
        if recorded == transcript { return nil }
        let old = recorded.split(separator: "\n", omittingEmptySubsequences: false)
        let new = transcript.split(separator: "\n", omittingEmptySubsequences: false)
        let line = zip(old, new).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(old.count, new.count)
        let context = max(0, line - 6)
        func excerpt(_ lines: [Substring]) -> String {
            lines[min(context, lines.count)..<min(line + 3, lines.count)].joined(separator: "\n")
        }
        return """
            \(name) differs from its recording at line \(line + 1) (re-record with DISCFG_RECORD=1 only if the change is meant):
            recorded:
            \(excerpt(old))
            now:
            \(excerpt(new))
            """
    }

    /// One HTTP exchange as a transcript entry: the request, then the status, the headers
    /// named in `keptHeaders` (lowercased, sorted), and the body.
    public static func exchange(
        _ request: RecordedRequest, status: Int, headers: [(String, String)], body: Data
    ) -> String {
        var lines = ["### \(request.method) \(request.target)"]
        for (name, value) in request.headers { lines.append("> \(name): \(value)") }
        if let body = request.body { lines.append("> " + printable(body)) }
        lines.append("< \(status)")
        let kept = headers
            .map { ($0.0.lowercased(), $0.1) }
            .filter { keptHeaders.contains($0.0) }
            .sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        for (name, value) in kept { lines.append("< \(name): \(value)") }
        lines.append(printable(body))
        return lines.joined(separator: "\n") + "\n"
    }

    /// The response headers a recording keeps: those discfg sets on purpose. Framing and
    /// per-connection headers (`date`, `content-length`, `connection`) are left out.
    public static let keptHeaders: Set<String> = [
        "content-type", "etag", "location", "allow", "retry-after", "cache-control",
        "x-discfg-revision", "www-authenticate", "vary", "access-control-allow-origin",
        "x-content-type-options", "content-security-policy", "content-disposition",
    ]

    /// Text as is; bytes that are not UTF-8 as base64, marked.
    public static func printable(_ data: Data) -> String {
        if let text = String(data: data, encoding: .utf8) { return text }
        return "(base64) " + data.base64EncodedString()
    }
}

/// One request of the recorded set.
public struct RecordedRequest: Sendable {
    public var method: String
    /// Path and query, percent-encoded.
    public var target: String
    public var headers: [(String, String)]
    public var body: Data?

    public init(_ method: String, _ target: String, headers: [(String, String)] = [], body: String? = nil) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body.map { Data($0.utf8) }
    }

    public init(_ method: String, _ target: String, headers: [(String, String)] = [], bytes: Data) {
        self.method = method
        self.target = target
        self.headers = headers
        body = bytes
    }

    /// The path without the query.
    public var path: String { String(target.prefix { $0 != "?" }) }
    /// The query without `?`, or "".
    public var query: String { target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) } ?? "" }

    /// The requests every HTTP face is recorded answering, in order, on a fresh store whose
    /// clock stands still: configs, keys of every kind, conditions, listings, history,
    /// watch, transfer, settings, and the mistakes callers make.
    public static let api: [RecordedRequest] = [
        RecordedRequest("GET", "/v1/configs"),
        RecordedRequest("PUT", "/v1/app", headers: [("Content-Type", "application/json")], body: #"{"history":"last:50"}"#),
        RecordedRequest("PUT", "/v1/app", headers: [("Content-Type", "application/json")], body: "{}"),
        RecordedRequest("GET", "/v1/app"),
        RecordedRequest("PUT", "/v1/app/keys/db/host", body: "db1.internal"),
        RecordedRequest("PUT", "/v1/app/keys/db/port", headers: [("Content-Type", "application/json")], body: "5432"),
        RecordedRequest("PUT", "/v1/app/keys/feature", headers: [("Content-Type", "application/json")], body: #"{"json":"works","n":[1,2.5,true,null]}"#),
        RecordedRequest("PUT", "/v1/app/keys/blob", headers: [("Content-Type", "application/octet-stream")], bytes: Data([0, 159, 146, 150, 255])),
        RecordedRequest("PUT", "/v1/app/keys/session?ttl=60", body: "s3cr3t"),
        RecordedRequest("GET", "/v1/app/keys/db/host"),
        RecordedRequest("GET", "/v1/app/keys/db/host?raw"),
        RecordedRequest("GET", "/v1/app/keys/feature?format=json"),
        RecordedRequest("GET", "/v1/app/keys/blob"),
        RecordedRequest("GET", "/v1/app/keys/db/host", headers: [("If-None-Match", #""1""#)]),
        RecordedRequest("PUT", "/v1/app/keys/db/host", headers: [("If-Match", #""1""#)], body: "db2.internal"),
        RecordedRequest("PUT", "/v1/app/keys/db/host", headers: [("If-Match", #""1""#)], body: "db3.internal"),
        RecordedRequest("PUT", "/v1/app/keys/db/host", headers: [("If-None-Match", "*")], body: "db4.internal"),
        RecordedRequest("PUT", "/v1/app/keys/db/host?prevValue=db2.internal", body: "db5.internal"),
        RecordedRequest("GET", "/v1/app/keys/db?recursive"),
        RecordedRequest("GET", "/v1/app/keys?prefix=/db/&limit=1"),
        RecordedRequest("GET", "/v1/app/keys?recursive&limit=2"),
        RecordedRequest("GET", "/v1/app/history/db/host"),
        RecordedRequest("GET", "/v1/app/keys/db/host?revision=1"),
        RecordedRequest("GET", "/v1/app/watch?fromRevision=5&timeout=0"),
        RecordedRequest("GET", "/v1/app/watch?prefix=/db/&fromRevision=1&timeout=0"),
        RecordedRequest("GET", "/v1/app/export"),
        RecordedRequest("GET", "/v1/app/export?format=yaml"),
        RecordedRequest("GET", "/v1/app/export?format=env"),
        RecordedRequest("POST", "/v1/app/import", headers: [("Content-Type", "application/json")], body: #"{"/imported/a":"1","/imported/b":{"x":true}}"#),
        RecordedRequest("POST", "/v1/app/import?format=yaml", headers: [("Content-Type", "application/yaml")], body: "a: &x [1, 2]\nb: *x\n"),
        RecordedRequest("DELETE", "/v1/app/keys/imported?recursive"),
        RecordedRequest("DELETE", "/v1/app/keys/db/port"),
        RecordedRequest("DELETE", "/v1/app/keys/db/port"),
        RecordedRequest("PATCH", "/v1/app", headers: [("Content-Type", "application/json")], body: #"{"history":"last:10"}"#),
        RecordedRequest("PATCH", "/v1/app", headers: [("Content-Type", "application/json")], body: #"{"history":"100"}"#),
        RecordedRequest("POST", "/v1/app/txn", headers: [("Content-Type", "application/json")], body: Self.lockTransaction),
        RecordedRequest("POST", "/v1/app/txn", headers: [("Content-Type", "application/json")], body: Self.lockTransaction),
        RecordedRequest("GET", "/v1/configs"),
        // Mistakes.
        RecordedRequest("GET", "/v1/nothere/keys/a"),
        RecordedRequest("GET", "/v1/app/keys/nothere"),
        RecordedRequest("GET", "/v1/app/history/nothere"),
        RecordedRequest("PUT", "/v1/app/keys/db/host", headers: [("If-Match", "nonsense")], body: "x"),
        RecordedRequest("PUT", "/v1/app/keys/toolong?ttl=0", body: "x"),
        RecordedRequest("GET", "/v1/app/keys/a%00b"),
        RecordedRequest("GET", "/v1/app/keys?recursive&limit=-1"),
        RecordedRequest("GET", "/v1/app/keys/db/host?revision=18446744073709551616"),
        RecordedRequest("GET", "/v1/app/watch?fromRevision=abc"),
        RecordedRequest("DELETE", "/v1/app/keys?recursive"),
        RecordedRequest("POST", "/v1/app/import", headers: [("Content-Type", "application/json")], body: "{not json"),
        RecordedRequest("POST", "/v1/app/txn", headers: [("Content-Type", "application/json")], body: #"{"compares":[],"success":[]}"#),
        RecordedRequest("POST", "/v1/app/txn", headers: [("Content-Type", "application/json")], body: #"{"success":[{"op":"put","key":"/a","value":"1"},{"op":"delete","prefix":"/"}]}"#),
        RecordedRequest("GET", "/v1/app/keys/feature?path=/n/1&raw"),
        RecordedRequest("GET", "/v1/app/keys/feature?path=/n"),
        RecordedRequest("GET", "/v1/app/keys/feature?path=/n/9"),
        RecordedRequest("GET", "/v1/app/keys/feature?path=/n~2"),
        RecordedRequest("PATCH", "/v1/app/keys/feature", headers: [("Content-Type", "application/merge-patch+json")], body: #"{"json":null,"more":{"x":1}}"#),
        RecordedRequest("PATCH", "/v1/app/keys/feature", headers: [("Content-Type", "application/json-patch+json")], body: #"[{"op":"test","path":"/more/x","value":2}]"#),
        RecordedRequest("PATCH", "/v1/app/keys/feature", headers: [("Content-Type", "text/plain")], body: "x"),
        RecordedRequest("PUT", "/v1/app/keys/limits/?document", headers: [("Content-Type", "application/json")], body: #"{"rps":100,"burst":{"size":20}}"#),
        RecordedRequest("GET", "/v1/app/keys/limits?document"),
        RecordedRequest("PUT", "/v1/app/schema?target=/limits/", headers: [("Content-Type", "application/schema+json")], body: #"{"required":["rps"],"properties":{"rps":{"type":"integer","maximum":1000}}}"#),
        RecordedRequest("PUT", "/v1/app/keys/limits/rps", headers: [("Content-Type", "application/json")], body: "5000"),
        RecordedRequest("DELETE", "/v1/app/keys/limits/rps"),
        RecordedRequest("GET", "/v1/app/schemas"),
        RecordedRequest("GET", "/v1/app/schema?target=/limits/"),
        RecordedRequest("POST", "/v1/app/keys/db/host", body: "x"),
        RecordedRequest("PUT", "/v1/Bad!Name", body: "{}"),
        RecordedRequest("DELETE", "/v1/app"),
        RecordedRequest("GET", "/v1/app"),
    ]

    /// A lock taken with a transaction: it succeeds once, then fails and reads the lock.
    static let lockTransaction = #"""
    {"compare":[{"key":"/db/host","target":"version","result":">","value":1},{"key":"/lock","target":"exists","result":"=","value":false}],\#
    "success":[{"op":"put","key":"/lock","value":"me","ttl":30},{"op":"put","key":"/db/host","value":"db6.internal"},{"op":"delete","key":"/blob"},\#
    {"op":"get","prefix":"/db/"}],"failure":[{"op":"get","key":"/lock"}]}
    """#
}
