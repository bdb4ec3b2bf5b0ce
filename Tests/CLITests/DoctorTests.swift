import AsyncHTTPClient
import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `discfg doctor` end to end: the built binary against real stores (SQLite files, moto's
/// DynamoDB, `discfg serve`), dead endpoints and a server whose clock is off.
@Suite("CLI: doctor")
struct DoctorTests {
    /// One finding as `-f json` writes it.
    struct Finding: Decodable {
        var check: String
        var status: String
        var detail: String
        var fix: String?
    }

    struct Report: Decodable {
        var action: String
        var findings: [Finding]
        var status: String
    }

    /// Runs `doctor -f json` and decodes it, checking every finding carries all four fields.
    static func report(_ cli: CLIRunner, _ arguments: String...) async throws -> (Report, CLIRunner.Result) {
        let result = try await cli.run(["doctor", "-f", "json"] + arguments)
        let data = Data(result.stdout.utf8)
        let raw = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(result.stdout) \(result.stderr)")
        for finding in try #require(raw["findings"] as? [[String: Any]]) {
            #expect(Set(finding.keys) == ["check", "status", "detail", "fix"], "stable fields: \(finding)")
        }
        return (try JSONDecoder().decode(Report.self, from: data), result)
    }

    @Test("a healthy SQLite store: every finding ok, exit 0, in both formats")
    func healthySQLite() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("create", "myapp").status == 0)
        #expect(try await cli.run("use", "myapp").status == 0)
        let human = try await cli.run("doctor")
        #expect(human.status == 0, "\(human.stdout)\(human.stderr)")
        let lines = human.stdout.split(separator: "\n")
        #expect(lines.dropLast().allSatisfy { $0.hasPrefix("ok ") }, "\(human.stdout)")
        #expect(lines.last?.hasPrefix("all ") == true)
        #expect(human.stdout.contains("\(cli.directory.path)/store.db"))
        #expect(human.stdout.contains("schema version"))

        let (report, result) = try await Self.report(cli)
        #expect(result.status == 0)
        #expect(report.action == "doctor" && report.status == "ok")
        #expect(report.findings.allSatisfy { $0.status == "ok" && $0.fix == nil }, "\(report.findings)")
        let checks = Set(report.findings.map(\.check))
        #expect(checks.isSuperset(of: ["store", "file", "directory", "schema", "config"]))
        let config = try #require(report.findings.first { $0.check == "config" })
        #expect(config.detail.contains("myapp") && config.detail.contains("\(cli.directory.path)/.discfg"), "where it was chosen")
    }

    @Test("a missing SQLite file is named, fails, and is not created; a missing selected config fails with its fix")
    func missingSQLite() async throws {
        var cli = try CLIRunner()
        defer { cli.cleanUp() }
        let path = cli.directory.path + "/nowhere/store.db"
        cli.environment["DISCFG_STORE"] = "sqlite://" + path
        let (report, result) = try await Self.report(cli)
        #expect(result.status == 1)
        let file = try #require(report.findings.first { $0.check == "file" })
        #expect(file.status == "fail" && file.detail.contains(path), "\(file)")
        #expect(file.fix?.contains("discfg init") == true)
        #expect(!FileManager.default.fileExists(atPath: path), "doctor never creates a store")
        #expect(!FileManager.default.fileExists(atPath: cli.directory.path + "/nowhere"))

        var present = try CLIRunner()
        defer { present.cleanUp() }
        #expect(try await present.run("create", "other").status == 0)
        present.environment["DISCFG_CONFIG"] = "ghost"
        let (missing, run) = try await Self.report(present)
        #expect(run.status == 1)
        let config = try #require(missing.findings.first { $0.check == "config" })
        #expect(config.status == "fail" && config.detail.contains("ghost") && config.detail.contains("DISCFG_CONFIG"))
        #expect(config.fix?.contains("discfg create ghost") == true)
    }

    @Test("the schema version is read from the write-ahead log when the file's header is behind it")
    func schemaInTheLog() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("create", "app").status == 0)
        // A newer discfg that ended before copying its log back: the header still says this
        // discfg's schema version.
        let script = """
            import os, sqlite3, sys
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            db.execute("PRAGMA wal_autocheckpoint = 0")
            db.execute("PRAGMA user_version = 99")
            os._exit(0)
            """
        let path = cli.directory.path + "/store.db"
        let newer = try await ChildProcess.run("python3", ["-c", script, path], environment: ChildProcess.environment(inheriting: ChildProcess.pythonEnvironment))
        try #require(newer.status == 0, "\(newer.stderr)")
        let header = try #require(FileHandle(forReadingAtPath: path)?.readData(ofLength: 64))
        try #require((1..<99).contains(header[63]), "the header is behind the log: \(header[63])")
        let (report, result) = try await Self.report(cli)
        #expect(result.status == 1)
        let schema = try #require(report.findings.first { $0.check == "schema" })
        #expect(schema.status == "fail" && schema.detail.contains("schema version 99"), "\(schema)")
        #expect(schema.fix == "upgrade discfg")
    }

    @Test("a dead server and a dead DynamoDB endpoint are named promptly, exit 1")
    func deadEndpoints() async throws {
        let (cli, _) = try await CLIRunner.onDynamoDB()
        defer { cli.cleanUp() }
        let port = try MotoServer.freeLoopbackPort()
        let clock = ContinuousClock()

        let started = clock.now
        let (server, serverRun) = try await Self.report(cli, "--store", "http://127.0.0.1:\(port)")
        #expect(serverRun.status == 1)
        #expect(clock.now - started < .seconds(10), "prompt")
        let dead = try #require(server.findings.first { $0.status == "fail" })
        #expect(dead.check == "server" && dead.detail.contains("127.0.0.1:\(port)"), "\(dead)")
        #expect(dead.fix?.contains("discfg serve") == true)
        let human = try await cli.run("doctor", "--store", "http://127.0.0.1:\(port)", "--timeout", "2")
        #expect(human.status == 1)
        // A refused connection is an answer at once: nothing to wait for.
        #expect(human.stdout.contains("fail server http://127.0.0.1:\(port) cannot be reached"), "\(human.stdout)")
        #expect(human.stdout.contains("cannot connect to discfg at http://127.0.0.1:\(port): connection refused"), "\(human.stdout)")

        let again = clock.now
        let endpoint = "http://127.0.0.1:\(port)"
        let (dynamo, dynamoRun) = try await Self.report(cli, "--store", "dynamodb://us-east-1/discfg?endpoint=\(endpoint)")
        #expect(dynamoRun.status == 1)
        #expect(clock.now - again < .seconds(10), "prompt")
        #expect(dynamo.findings.contains { $0.check == "endpoint" && $0.status == "ok" && $0.detail.contains(endpoint) && $0.detail.contains("us-east-1") })
        let table = try #require(dynamo.findings.first { $0.check == "table" })
        #expect(table.status == "fail" && table.detail.contains(endpoint), "\(table)")
        #expect(table.fix?.contains("endpoint") == true)
    }

    @Test("a healthy DynamoDB table on moto passes: credentials, ACTIVE, indexes, TTL, stream, reads, clock")
    func healthyDynamoDB() async throws {
        let (cli, store) = try await CLIRunner.onDynamoDB()
        defer { cli.cleanUp() }
        #expect(try await cli.run("init", "--store", store).status == 0)
        #expect(try await cli.run("create", "app", "--store", store).status == 0)
        let (report, result) = try await Self.report(cli, "--store", store, "--config", "app")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(report.findings.allSatisfy { $0.status == "ok" }, "\(report.findings)")
        func detail(_ check: String) -> String { report.findings.first { $0.check == check }?.detail ?? "" }
        #expect(detail("credentials").contains("environment"), "where they came from")
        #expect(!result.stdout.contains("discfg-test"), "never the secret")
        #expect(detail("table").contains("ACTIVE"))
        #expect(detail("ttl").contains("ENABLED") && detail("ttl").contains("ttl"))
        #expect(detail("stream").contains("NEW_IMAGE"))
        #expect(detail("indexes").contains("byExpiry"))
        #expect(detail("permissions").contains("dynamodb:Query"))
        #expect(detail("config").contains("app") && detail("config").contains("--config"))
        #expect(!detail("clock").isEmpty, "moto's Date header was read")
    }

    @Test("TTL and stream turned off are warnings naming their fixes; warnings do not block (exit 0)")
    func tableSettingsOff() async throws {
        let (cli, store) = try await CLIRunner.onDynamoDB()
        defer { cli.cleanUp() }
        #expect(try await cli.run("init", "--store", store).status == 0)
        let moto = try await SharedMotoServer.shared.server()
        let table = try #require(URLComponents(string: store)?.path.dropFirst().description)
        let script = """
            import boto3, sys
            client = boto3.client("dynamodb", endpoint_url=sys.argv[1], region_name="us-east-1", aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="discfg-test")
            client.update_time_to_live(TableName=sys.argv[2], TimeToLiveSpecification={"Enabled": False, "AttributeName": "ttl"})
            client.update_table(TableName=sys.argv[2], StreamSpecification={"StreamEnabled": False})
            """
        let changed = try await ChildProcess.run(
            "python3", ["-c", script, moto.endpoint.absoluteString, table],
            environment: ChildProcess.environment(inheriting: ChildProcess.pythonEnvironment)
        )
        try #require(changed.status == 0, "\(changed.stderr)")
        let (report, result) = try await Self.report(cli, "--store", store)
        #expect(result.status == 0, "\(report.findings)")
        #expect(report.status == "warn")
        let ttl = try #require(report.findings.first { $0.check == "ttl" })
        #expect(ttl.status == "warn" && ttl.detail.contains("DISABLED") && ttl.fix?.contains("discfg init") == true, "\(ttl)")
        let stream = try #require(report.findings.first { $0.check == "stream" })
        #expect(stream.status == "warn" && stream.fix?.contains("StreamViewType=NEW_IMAGE") == true, "\(stream)")
    }

    @Test("a missing DynamoDB table fails with discfg init as the fix, and is not created")
    func missingTable() async throws {
        let (cli, store) = try await CLIRunner.onDynamoDB()
        defer { cli.cleanUp() }
        let (report, result) = try await Self.report(cli, "--store", store)
        #expect(result.status == 1)
        let table = try #require(report.findings.first { $0.check == "table" })
        #expect(table.status == "fail" && table.detail.contains("does not exist"), "\(table)")
        #expect(table.fix == "discfg init --store '\(store)'")
        let (still, _) = try await Self.report(cli, "--store", store)
        #expect(still.findings.contains { $0.check == "table" && $0.status == "fail" }, "still missing: doctor made nothing")
    }

    @Test("a key file open to other users is a failing finding naming chmod 600")
    func keyFileMode() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let key = cli.directory.path + "/app.key"
        #expect(try await cli.run("key", "init", key).status == 0)
        #expect(try await cli.run("create", "app", "--encryption", "file://" + key).status == 0)
        let (good, goodRun) = try await Self.report(cli)
        #expect(goodRun.status == 0)
        #expect(good.findings.contains { $0.check == "key" && $0.status == "ok" && $0.detail.contains(key) && $0.detail.contains("app") })

        #expect(chmod(key, 0o644) == 0)
        let (bad, badRun) = try await Self.report(cli)
        #expect(badRun.status == 1)
        let finding = try #require(bad.findings.first { $0.check == "key" })
        #expect(finding.status == "fail" && finding.detail.contains("644"), "\(finding)")
        #expect(finding.fix == "chmod 600 \(key)")
    }

    @Test("an http store whose server wants a token: none given fails naming the fix; the right one passes")
    func serverToken() async throws {
        var cli = try CLIRunner()
        defer { cli.cleanUp() }
        let admin = try #require(try await cli.run("token", "create", "--role", "admin").stdout.split(separator: "\n").first.map(String.init))
        #expect(try await cli.run("create", "web").status == 0)
        let (server, port) = try await cli.serve(["--auth", "token"])
        defer { Task { await server.kill() } }
        cli.environment["DISCFG_STORE"] = "http://127.0.0.1:\(port)"

        let (none, noneRun) = try await Self.report(cli)
        #expect(noneRun.status == 1)
        #expect(none.findings.contains { $0.check == "server" && $0.status == "ok" && $0.detail.contains("healthz") })
        let token = try #require(none.findings.first { $0.check == "token" })
        #expect(token.status == "fail" && token.detail.contains("requires a bearer token"), "\(token)")
        #expect(token.fix?.contains("DISCFG_TOKEN") == true)

        cli.environment["DISCFG_TOKEN"] = "dcfg_notatoken"
        let (wrong, wrongRun) = try await Self.report(cli)
        #expect(wrongRun.status == 1)
        #expect(wrong.findings.contains { $0.check == "token" && $0.status == "fail" && $0.detail.contains("refuses") })

        cli.environment["DISCFG_TOKEN"] = admin
        cli.environment["DISCFG_CONFIG"] = "web"
        let (right, rightRun) = try await Self.report(cli)
        #expect(rightRun.status == 0, "\(right.findings)")
        #expect(right.findings.allSatisfy { $0.status == "ok" }, "\(right.findings)")
        #expect(right.findings.contains { $0.check == "config" && $0.detail.contains("web") })
    }

    @Test("the clock against the endpoint's Date: minutes off fails (SigV4's limit), seconds off warns", arguments: [(-3600, "fail"), (-30, "warn")])
    func clockSkew(offset: Int, expected: String) async throws {
        let (cli, _) = try await CLIRunner.onDynamoDB()
        defer { cli.cleanUp() }
        let endpoint = try await Self.fakeEndpoint(offsetSeconds: offset, error: "InvalidSignatureException", message: "Signature expired")
        defer { Task { await endpoint.process.kill() } }
        let (report, _) = try await Self.report(cli, "--store", "dynamodb://us-east-1/discfg?endpoint=\(endpoint.url)")
        let clock = try #require(report.findings.first { $0.check == "clock" }, "\(report.findings)")
        #expect(clock.status == expected, "\(clock)")
        #expect(clock.detail.contains("ahead of"), "our clock is ahead of one set in the past: \(clock.detail)")
        #expect(clock.fix?.contains("ntp") == true)
    }

    @Test("AccessDenied on DescribeTable is a failing finding naming the action")
    func accessDenied() async throws {
        let (cli, _) = try await CLIRunner.onDynamoDB()
        defer { cli.cleanUp() }
        let endpoint = try await Self.fakeEndpoint(offsetSeconds: 0, error: "AccessDeniedException", message: "User is not authorized to perform: dynamodb:DescribeTable")
        defer { Task { await endpoint.process.kill() } }
        let (report, result) = try await Self.report(cli, "--store", "dynamodb://us-east-1/discfg?endpoint=\(endpoint.url)")
        #expect(result.status == 1)
        let table = try #require(report.findings.first { $0.check == "table" })
        #expect(table.status == "fail" && table.detail.contains("AccessDenied") && table.detail.contains("dynamodb:DescribeTable"), "\(table)")
        #expect(table.fix?.contains("grant dynamodb:DescribeTable") == true)
        #expect(report.findings.contains { $0.check == "clock" && $0.status == "ok" })
    }

    /// A local endpoint answering every request with the AWS error `error` (HTTP 400),
    /// with a `Date` header `offsetSeconds` from now.
    static func fakeEndpoint(offsetSeconds: Int, error: String, message: String) async throws -> (process: ChildProcess, url: String) {
        let script = #"""
            import json, sys, time
            from email.utils import formatdate
            from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
            offset = int(sys.argv[1])
            class Handler(BaseHTTPRequestHandler):
                protocol_version = "HTTP/1.1"
                def log_message(self, *args): pass
                def date_time_string(self, timestamp=None): return formatdate(time.time() + offset, usegmt=True)
                def answer(self):
                    body = json.dumps({"__type": "com.amazon.coral.service#" + sys.argv[2], "message": sys.argv[3]}).encode()
                    self.send_response(400)
                    self.send_header("Content-Type", "application/x-amz-json-1.0")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                def do_GET(self): self.answer()
                def do_POST(self):
                    self.rfile.read(int(self.headers.get("Content-Length", "0")))
                    self.answer()
            server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
            print(server.server_address[1], flush=True)
            server.serve_forever()
            """#
        let process = try ChildProcess.launch(
            "python3", ["-c", script, String(offsetSeconds), error, message],
            environment: ChildProcess.environment(inheriting: ChildProcess.pythonEnvironment)
        )
        do {
            // It prints its port once it listens.
            let port = try await process.waitForOutput(timeout: .seconds(20)) { output in output.stdoutLines.first.flatMap { Int($0) } }
            return (process, "http://127.0.0.1:\(port)")
        } catch {
            await process.kill()
            throw error
        }
    }
}
