import DiscfgTestSupport
import Foundation
import Testing

/// `discfg serve --log-format`: one format on standard error for the server's own lines
/// and the audit lines alike, and a start line naming every URL served.
@Suite("CLI: serve --log-format and the start line")
struct ServeLogFormatTests {
    /// The pairs of a logfmt line, or nil when it is not one: `key=value` or `key="…"`,
    /// separated by single spaces.
    static func logfmt(_ line: Substring) -> [String: String]? {
        var pairs: [String: String] = [:]
        var rest = line[...]
        while !rest.isEmpty {
            guard let equals = rest.firstIndex(of: "="), !rest[..<equals].isEmpty, !rest[..<equals].contains(" ") else { return nil }
            let key = String(rest[..<equals])
            rest = rest[rest.index(after: equals)...]
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                var escaped = false
                var closed = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if escaped { value.append(character); escaped = false } else if character == "\\" { escaped = true } else if character == "\"" { closed = true; break } else { value.append(character) }
                }
                guard closed else { return nil }
            } else {
                let end = rest.firstIndex(of: " ") ?? rest.endIndex
                value = String(rest[..<end])
                guard !value.isEmpty, !value.contains("\"") else { return nil }
                rest = rest[end...]
            }
            pairs[key] = value
            if rest.first == " " { rest = rest.dropFirst() } else if !rest.isEmpty { return nil }
        }
        return pairs
    }

    /// Every line of `stderr` as key-value pairs in `format`; a line that does not parse fails the test.
    static func records(_ stderr: String, format: String) throws -> [[String: String]] {
        try stderr.split(separator: "\n").map { line in
            switch format {
            case "json":
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
                return object.compactMapValues { $0 as? String ?? ($0 is NSNull ? nil : "\($0)") }
            case "logfmt":
                return try #require(logfmt(line), "not logfmt: \(line)")
            default:
                // TIME LEVEL LABEL: [key=value …] message
                let parts = line.split(separator: " ", maxSplits: 3)
                try #require(parts.count >= 3 && parts[2].hasSuffix(":") && parts[0].contains("T"), "not a text line: \(line)")
                var pairs = ["time": String(parts[0]), "level": String(parts[1]), "label": String(parts[2].dropLast()), "line": String(line)]
                for word in (parts.count > 3 ? parts[3] : "").split(separator: " ") {
                    if let equals = word.firstIndex(of: "=") { pairs[String(word[..<equals])] = String(word[word.index(after: equals)...]) }
                }
                return pairs
            }
        }
    }

    /// Whether a line is the audit line of a request of the console.
    static func isAuditOfConsole(_ record: [String: String]) -> Bool {
        (record["path"] ?? record["route"] ?? "").hasPrefix("/ui/") && record["status"] != nil
    }

    @Test("text, json and logfmt: the start line names the REST API, the console, metrics and the etcd API; a request of /ui/ leaves an audit line in the same format", arguments: ["text", "json", "logfmt"])
    func format(_ format: String) async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("init", "-f", "silent").status == 0)
        let server = try cli.launch(["serve", "--port", "0", "--etcd", "127.0.0.1:0", "--log-format", format], stdout: .discard)
        let port: Int
        let etcdPort: Int
        do {
            port = try await server.announcedPort()
            etcdPort = try await server.announcedEtcdPort()
            let answer = try await LoopbackHTTP.exchange(port: port, "GET /ui/", body: Data())
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(200))")
            _ = try await server.waitForOutput(timeout: .seconds(10)) { output in
                (try? Self.records(output.stderr, format: format))?.contains { Self.isAuditOfConsole($0) } == true ? true : nil
            }
        } catch {
            await server.kill()
            throw error
        }
        await server.stop()
        let stderr = server.output.stderr
        let records = try Self.records(stderr, format: format)
        let start = try #require(records.first { ($0["msg"] ?? $0["line"] ?? "").contains("serving ") }, "\(stderr)")
        let base = "http://127.0.0.1:\(port)"
        let startText = start["msg"] ?? start["line"] ?? ""
        for url in ["\(base)/v1/", "\(base)/ui/", "\(base)/metrics", "127.0.0.1:\(etcdPort)"] {
            #expect(startText.contains(url), "\(url) is not in the start line: \(startText)")
        }
        if format != "text" {
            #expect(start["api"] == "\(base)/v1/" && start["console"] == "\(base)/ui/" && start["metrics"] == "\(base)/metrics" && start["etcd"] == "127.0.0.1:\(etcdPort)", "\(start)")
            #expect(start["level"] == "notice" && start["time"] != nil)
        }
        let ui = records.first { Self.isAuditOfConsole($0) }
        #expect(ui != nil && ui?["status"] == "200", "no audit line of GET /ui/ in \(format): \(stderr)")
        if format == "json" { #expect(ui?["time"] != nil && ui?["api"] == "rest", "\(String(describing: ui))") }
    }

    @Test("--no-ui: the start line names no console")
    func noConsole() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("init", "-f", "silent").status == 0)
        let server = try cli.launch(["serve", "--port", "0", "--no-ui", "--log-format", "logfmt"], stdout: .discard)
        let port = try await server.announcedPort()
        await server.stop()
        let start = try #require(try Self.records(server.output.stderr, format: "logfmt").first { $0["msg"]?.contains("serving ") == true })
        #expect(start["console"] == nil && start["api"] == "http://127.0.0.1:\(port)/v1/" && start["etcd"] == nil, "\(start)")
        #expect(start["msg"]?.contains("/ui/") == false)
    }

    @Test("an unknown format is refused in one line naming the flag, before anything listens")
    func unknown() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let refused = try await cli.run("serve", "--port", "0", "--log-format", "xml")
        #expect(refused.status == 2 && refused.stderr.contains("--log-format") && !refused.stderr.contains("serving"), "\(refused.stderr)")
    }
}
