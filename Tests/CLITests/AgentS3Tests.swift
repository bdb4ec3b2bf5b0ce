import DiscfgAWS
import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `discfg agent --source s3://…` (the snapshots `discfg publish` writes, on moto's S3) and
/// `discfg agent --prefix`, as separate processes, read through by the CLI and raw HTTP.
@Suite("CLI: agent over S3 snapshots, and --prefix")
struct AgentS3Tests {
    /// A runner on a fresh SQLite store whose S3 is the shared moto, and a new bucket on it.
    static func runner() async throws -> (CLIRunner, MotoServer, String) {
        let moto = try await SharedMotoServer.shared.server()
        var cli = try CLIRunner()
        cli.environment["AWS_ACCESS_KEY_ID"] = "AKIDEXAMPLE"
        cli.environment["AWS_SECRET_ACCESS_KEY"] = "discfg-test"
        cli.environment["AWS_REGION"] = "us-east-1"
        cli.environment["AWS_EC2_METADATA_DISABLED"] = "true"
        cli.environment["AWS_ENDPOINT_URL_S3"] = moto.endpoint.absoluteString
        cli.environment.removeValue(forKey: "AWS_PROFILE")
        let bucket = MotoS3.uniqueBucket("agent")
        try await MotoS3.createBucket(bucket, on: moto)
        return (cli, moto, bucket)
    }

    /// Starts an agent with `arguments` and returns it and its port.
    static func start(_ cli: CLIRunner, _ arguments: [String]) async throws -> (ChildProcess, Int) {
        let agent = try cli.launch(["agent", "--port", "0", "--interval", "1s", "--log-level", "error"] + arguments, stdout: .discard)
        do {
            return (agent, try await agent.announcedPort())
        } catch {
            await agent.kill()
            throw error
        }
    }

    /// A series' value on the agent's /metrics.
    static func metric(_ port: Int, _ series: String) async throws -> Int? {
        let text = try await LoopbackHTTP.exchange(port: port, "GET /metrics", body: Data())
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(series + " ") }) else { return nil }
        return Int(line.split(separator: " ").last ?? "")
    }

    @Test("serves a published config (get, ls, ETag/304), one GET per check idle, a new revision within an interval, a corrupt object refused", .timeLimit(.minutes(3)))
    func followsSnapshots() async throws {
        let (cli, moto, bucket) = try await Self.runner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("create", "demo").status == 0)
        #expect(try await cli.run("set", "demo", "/db/host", "db1").status == 0)
        let published = try await cli.run("publish", "demo", "--to", "s3://\(bucket)/prod")
        #expect(published.status == 0, "\(published.stderr)")

        let proxy = try await FaultProxy.start(upstream: moto.endpoint, seed: 1, rates: [:])
        defer { Task { await proxy.stop() } }
        var viaProxy = cli
        viaProxy.environment["AWS_ENDPOINT_URL_S3"] = proxy.endpoint.absoluteString
        let (agent, port) = try await Self.start(viaProxy, ["--source", "s3://\(bucket)/prod", "--config", "demo"])
        defer { Task { _ = await agent.kill() } }

        var remote = cli
        remote.environment["DISCFG_STORE"] = "http://127.0.0.1:\(port)"
        #expect(try await remote.run("get", "demo", "/db/host").stdout == "db1\n")
        #expect(try await remote.run("ls", "demo", "-r", "-f", "json").envelope().items?.map(\.key) == ["/db/host"])
        let first = try await LoopbackHTTP.exchange(port: port, "GET /v1/demo/keys/db/host", body: Data())
        let etag = try #require(first.split(separator: "\r\n").first { $0.lowercased().hasPrefix("etag:") }.map { String($0.dropFirst(5)).trimmingCharacters(in: .whitespaces) })
        let again = try await LoopbackHTTP.exchange(port: port, "GET /v1/demo/keys/db/host", body: Data(), headers: ["If-None-Match: \(etag)"])
        #expect(again.hasPrefix("HTTP/1.1 304"), "\(again)")

        // Idle: each check is one conditional GET of the object, answered 304.
        let object = "GET /\(bucket)/prod/demo.json"
        let getsBefore = try proxy.calls().filter { $0.operation == object }.count
        let checksBefore = try #require(try await Self.metric(port, "discfg_agent_checks_total{config=\"demo\"}"))
        // Two more checks, one each interval, counted as they happen.
        let checksAfter = try await eventually("two more checks", interval: .milliseconds(100)) {
            try await Self.metric(port, "discfg_agent_checks_total{config=\"demo\"}").flatMap { $0 - checksBefore >= 2 ? $0 : nil }
        }
        let calls = try proxy.calls()
        let gets = calls.filter { $0.operation == object }
        #expect(calls.count == gets.count, "nothing but GETs of the object: \(calls.map(\.operation))")
        #expect(checksAfter - checksBefore >= 2)
        #expect(abs((gets.count - getsBefore) - (checksAfter - checksBefore)) <= 1, "one GET per check: \(gets.count - getsBefore) GETs, \(checksAfter - checksBefore) checks")
        #expect(gets.dropFirst().allSatisfy { $0.upstreamStatus == 304 }, "\(gets.map(\.upstreamStatus))")

        // A new revision published appears within an interval or so.
        #expect(try await cli.run("set", "demo", "/db/host", "db2").status == 0)
        #expect(try await cli.run("publish", "demo", "--to", "s3://\(bucket)/prod").status == 0)
        try await eventually("the agent serves db2", interval: .milliseconds(100)) { try await remote.run("get", "demo", "/db/host").stdout == "db2\n" }

        // A corrupt object is refused: the old values stay, the error is counted.
        let s3 = MotoS3.client(moto)
        defer { Task { try? await s3.shutdown() } }
        guard case .object(let good) = try await s3.getObject(bucket: bucket, key: "prod/demo.json") else { throw DiscfgError(.internal, "no object") }
        var flipped = good.body
        flipped[flipped.startIndex + flipped.count / 2] ^= 0x20
        try await s3.putObject(bucket: bucket, key: "prod/demo.json", body: flipped, contentType: "application/json")
        try await eventually("the corrupt object is counted as a store error", interval: .milliseconds(100)) {
            (try await Self.metric(port, "discfg_agent_store_errors_total{config=\"demo\"}") ?? 0) >= 2
        }
        #expect(try await remote.run("get", "demo", "/db/host").stdout == "db2\n")
        let health = try await LoopbackHTTP.exchange(port: port, "GET /healthz", body: Data())
        #expect(health.contains("\"source\":\"s3://\(bucket)/prod\""), "\(health)")
        _ = await agent.kill(SIGTERM)
    }

    @Test("a missing bucket at start: exit 1 naming bucket, key and cause; with a cache, the cache is served", .timeLimit(.minutes(3)))
    func missingBucket() async throws {
        let (cli, _, bucket) = try await Self.runner()
        defer { cli.cleanUp() }
        let missing = MotoS3.uniqueBucket("none")
        let refused = try await cli.run("agent", "--source", "s3://\(missing)/prod", "--config", "demo", "--port", "0")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("s3://\(missing)/prod/demo.json") && refused.stderr.contains("does not exist"), "\(refused.stderr)")
        let noObject = try await cli.run("agent", "--source", "s3://\(bucket)/prod", "--config", "demo", "--port", "0")
        #expect(noObject.status == 1)
        #expect(noObject.stderr.contains("no snapshot at s3://\(bucket)/prod/demo.json"), "\(noObject.stderr)")

        #expect(try await cli.run("create", "demo").status == 0)
        #expect(try await cli.run("set", "demo", "/k", "cached").status == 0)
        #expect(try await cli.run("publish", "demo", "--to", "s3://\(bucket)/prod").status == 0)
        let cache = cli.directory.appendingPathComponent("cache").path
        let (first, _) = try await Self.start(cli, ["--source", "s3://\(bucket)/prod", "--config", "demo", "--cache-dir", cache])
        _ = await first.kill(SIGTERM)
        let (again, port) = try await Self.start(cli, ["--source", "s3://\(missing)/prod", "--config", "demo", "--cache-dir", cache])
        var remote = cli
        remote.environment["DISCFG_STORE"] = "http://127.0.0.1:\(port)"
        #expect(try await remote.run("get", "demo", "/k").stdout == "cached\n")
        _ = await again.kill(SIGTERM)
    }

    @Test("bad --source and --prefix values, and the two with --store or each other, exit 2 naming the flag")
    func badFlags() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let cases: [([String], String)] = [
            (["--source", "s3://bucket/p", "--store", "memory:", "--config", "a"], "--store"),
            (["--source", "s3://bucket/p", "--prefix", "app-"], "--prefix"),
            (["--source", "http://bucket/p", "--config", "a"], "S3 location"),
            (["--source", "s3://", "--config", "a"], "names no bucket"),
            (["--source", "s3://B_ad/p", "--config", "a"], "bucket name"),
            (["--source", "s3://bucket/../p", "--config", "a"], ".."),
            (["--prefix", "a/b"], "--prefix"),
            (["--prefix", ""], "--prefix"),
            (["--prefix", String(repeating: "a", count: 201)], "--prefix"),
        ]
        for (arguments, phrase) in cases {
            let result = try await cli.run(["agent", "--port", "0"] + arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(phrase), "\(arguments): \(result.stderr)")
        }
    }

    @Test("--prefix holds the configs under it: one created after start appears, one deleted disappears", .timeLimit(.minutes(3)))
    func prefix() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        for config in ["app-a", "other"] {
            #expect(try await cli.run("create", config).status == 0)
            #expect(try await cli.run("set", config, "/k", config).status == 0)
        }
        let (agent, port) = try await Self.start(cli, ["--prefix", "app-"])
        defer { Task { _ = await agent.kill() } }
        var remote = cli
        remote.environment["DISCFG_STORE"] = "http://127.0.0.1:\(port)"
        #expect(try await remote.run("get", "app-a", "/k").stdout == "app-a\n")
        #expect(try await remote.run("get", "other", "/k").status == 3)

        #expect(try await cli.run("create", "app-b").status == 0)
        #expect(try await cli.run("set", "app-b", "/k", "b").status == 0)
        try await eventually("the agent serves app-b", interval: .milliseconds(100)) { try await remote.run("get", "app-b", "/k").stdout == "b\n" }
        #expect(try await cli.run("delete-config", "app-a", "--yes").status == 0)
        try await eventually("the agent drops app-a", interval: .milliseconds(100)) { try await remote.run("get", "app-a", "/k").status == 3 }
        let configs = try await remote.run("configs", "-f", "json")
        #expect(!configs.stdout.contains("app-a") && configs.stdout.contains("app-b"), "\(configs.stdout) \(configs.stderr)")
        _ = await agent.kill(SIGTERM)
    }
}
