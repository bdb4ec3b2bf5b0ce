import DiscfgTestSupport
import Foundation
import Testing

/// The web console at `/ui/`: served from the binary with its security and caching
/// headers, the files in the binary are `console/`, and a real browser (headless
/// Chromium through Selenium, `Tests/Browser/console_check.py`) uses it against a
/// `discfg serve` that requires tokens while the CLI changes the same keys.
@Suite("Web console: served at /ui/, safe by construction, used in a real browser")
struct ConsoleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// The status line, headers (lowercased names) and body of a raw HTTP reply.
    struct Reply {
        let status: Int
        let headers: [String: String]
        let body: String

        init(_ raw: String) {
            let parts = raw.components(separatedBy: "\r\n\r\n")
            let lines = parts[0].components(separatedBy: "\r\n")
            status = Int(lines[0].split(separator: " ").dropFirst().first ?? "") ?? 0
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            self.headers = headers
            body = parts.dropFirst().joined(separator: "\r\n\r\n")
        }
    }

    /// Runs `body` with the port of a `discfg serve` started with `arguments`, stopped after.
    static func withServe(_ arguments: [String] = [], _ body: (Int) async throws -> Void) async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let (server, port) = try await cli.serve(arguments)
        do {
            try await body(port)
        } catch {
            await server.kill()
            throw error
        }
        await server.kill()
    }

    static func get(_ port: Int, _ path: String, method: String = "GET", headers: [String] = []) async throws -> Reply {
        Reply(try await LoopbackHTTP.exchange(port: port, "\(method) \(path)", body: Data(), headers: headers))
    }

    @Test("/ui/ serves the page, its script and style with a strict CSP, ETags, 304s, a year's caching for versioned files, and a JSON 404 for the rest")
    func served() async throws {
        try await Self.withServe { (port: Int) async throws in
            let redirect = try await Self.get(port, "/ui")
            #expect(redirect.status == 308)
            #expect(redirect.headers["location"] == "/ui/")

            let page = try await Self.get(port, "/ui/")
            #expect(page.status == 200)
            #expect(page.headers["content-type"] == "text/html; charset=utf-8")
            #expect(page.headers["content-security-policy"] == Self.policy)
            #expect(page.headers["x-content-type-options"] == "nosniff")
            #expect(page.headers["cache-control"] == "no-cache")
            let etag = try #require(page.headers["etag"])
            #expect(try await Self.get(port, "/ui/", headers: ["If-None-Match: \(etag)"]).status == 304)
            #expect(try await Self.get(port, "/ui/", headers: ["If-None-Match: \"other\""]).status == 200)
            let head = try await Self.get(port, "/ui/", method: "HEAD")
            #expect(head.status == 200 && head.body.isEmpty && head.headers["content-length"] == page.headers["content-length"])

            // The page names its script and style with the files' version.
            let version = try #require(page.body.firstMatch(of: /console\.js\?v=([0-9a-f]{16})/)?.1)
            #expect(!page.body.contains("{{version}}"))
            // Every file of console/ but the page: the script's modules as JavaScript, so
            // the browser runs what they import.
            let names = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("console").path)
            let files = names.filter { $0 != "index.html" }.sorted().map { ($0, $0.hasSuffix(".css") ? "text/css" : "text/javascript") }
            #expect(files.contains { $0.0 == "api.js" } && files.contains { $0.0 == "console.css" })
            for (file, type) in files.map({ ($0.0, "\($0.1); charset=utf-8") }) {
                let pinned = try await Self.get(port, "/ui/\(file)?v=\(version)")
                #expect(pinned.status == 200)
                #expect(pinned.headers["content-type"] == type)
                #expect(pinned.headers["cache-control"] == "public, max-age=31536000, immutable")
                #expect(pinned.headers["content-security-policy"] == Self.policy)
                let stale = try await Self.get(port, "/ui/\(file)?v=0000000000000000")
                #expect(stale.headers["cache-control"] == "no-cache", "another version's URL is not cached for a year")
            }
            for path in ["/ui/nope.js", "/ui/..%2Fopenapi.yaml", "/ui/%00", "/ui/console.js/x"] {
                let missing = try await Self.get(port, path)
                #expect(missing.status == 404, "\(path)")
                #expect(missing.headers["content-type"]?.hasPrefix("application/json") == true, "\(path)")
            }
            #expect(try await Self.get(port, "/ui/", method: "POST").status >= 400)
        }
    }

    @Test("serve --no-ui serves no console")
    func noUI() async throws {
        try await Self.withServe(["--no-ui"]) { (port: Int) async throws in
            #expect(try await Self.get(port, "/ui/").status == 404)
            #expect(try await Self.get(port, "/healthz").status == 200)
        }
    }

    @Test("the served files are console/ (run scripts/embed-console after editing) and keep to the CSP: no inline script, handlers, styles or eval, no markup from data")
    func filesMatchAndKeepThePolicy() async throws {
        try await Self.withServe { (port: Int) async throws in
            let page = try await Self.get(port, "/ui/")
            let version = try #require(page.body.firstMatch(of: /console\.js\?v=([0-9a-f]{16})/)?.1)
            let names = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("console").path).sorted()
            #expect(names.contains("console.js") && names.contains("index.html"))
            for file in names {
                let disk = try String(contentsOf: Self.root.appendingPathComponent("console/\(file)"), encoding: .utf8)
                let served = file == "index.html" ? page.body : try await Self.get(port, "/ui/\(file)?v=\(version)").body
                let expected = disk.replacingOccurrences(of: "{{version}}", with: String(version))
                #expect(served.trimmingCharacters(in: .newlines) == expected.trimmingCharacters(in: .newlines), "console/\(file) differs from the binary's; run scripts/embed-console")
                #expect(!served.contains("{{version}}"), "console/\(file)")
            }
        }
        let html = try String(contentsOf: Self.root.appendingPathComponent("console/index.html"), encoding: .utf8)
        #expect(html.firstMatch(of: /<script(?![^>]*\bsrc=)[^>]*>/) == nil, "inline script")
        #expect(html.firstMatch(of: /\son[a-z]+\s*=/) == nil, "inline event handler")
        #expect(html.firstMatch(of: /\sstyle\s*=/) == nil, "inline style")
        let scripts = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("console").path).filter { $0.hasSuffix(".js") }
        #expect(scripts.count >= 3)
        for name in scripts {
            let script = try String(contentsOf: Self.root.appendingPathComponent("console/\(name)"), encoding: .utf8)
            for forbidden in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setTimeout(\"", "setInterval(\""] {
                #expect(!script.contains(forbidden), "\(name) uses \(forbidden)")
            }
            // Modules are imported with the files' version, so they are cached with them.
            for match in script.matches(of: /from '([^']+)'/) {
                #expect(match.1.hasSuffix("?v={{version}}"), "\(name) imports \(match.1) without the files' version")
            }
        }
    }

    @Test("console/'s modules are layers: every import names a module of console/, none imports itself through others, none is over 400 lines (Tests/Browser/console_modules_check.py)")
    func modulesAreLayered() async throws {
        let run = try await ChildProcess.run(
            "python3",
            [Self.root.appendingPathComponent("Tests/Browser/console_modules_check.py").path, Self.root.appendingPathComponent("console").path],
            environment: ChildProcess.environment(), timeout: .seconds(60)
        )
        #expect(run.termination == .exited(0), "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("ok no module imports itself through others"), "\(run.stdout)\(run.stderr)")
    }

    @Test("in headless Chromium: sign-in refused and accepted, configs and keys created, JSON checked, CLI changes live within 1 s, XSS stays text, the conflict view loses nothing, history diff and restore, the config at a revision, export and import round trip, secrets masked and revealed only with their key file, tokens issued once and revoked, 360 px wide")
    func inABrowser() async throws {
        let check = try await BrowserCheck.run(
            "console_check.py",
            screenshots: [
                "signin-refused.png", "config.png", "conflict.png", "history.png", "revision.png", "transfer.png",
                "secret.png", "configs.png", "tokens.png", "narrow.png",
            ],
            timeout: .seconds(300)
        )
        #expect(check.failures.isEmpty, "\(check)")
    }
}
