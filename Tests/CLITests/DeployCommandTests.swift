import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `discfg deploy` through the built binary on a SQLite file: start from a file and from
/// another config, status and ls in text and JSON, pause, resume, rollback and revert,
/// writes under a deploying prefix refused, and every bad flag refused with nothing written.
@Suite("CLI: staged deployments")
struct DeployCommandTests {
    /// Config `app` with /db/host db1, /db/port 5432 and /other x (revisions 1–3).
    static func runner() async throws -> CLIRunner {
        let cli = try CLIRunner()
        for arguments in [["create", "app"], ["set", "app", "/db/host", "db1"], ["set", "app", "/db/port", "5432"], ["set", "app", "/other", "x"]] {
            let result = try await cli.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        _ = try cli.write("candidate.json", Data(#"{"/db/host": "db2"}"#.utf8))
        return cli
    }

    /// What `deploy status -f json` (or another deploy command's JSON) says.
    struct Seen {
        let object: [String: Any]
        var deployment: [String: Any] { object["deployment"] as? [String: Any] ?? [:] }
        var status: [String: Any] { object["status"] as? [String: Any] ?? [:] }
        var id: String { deployment["id"] as? String ?? "" }
        var state: String { status["state"] as? String ?? "" }
        var share: Int { status["shareBasisPoints"] as? Int ?? -1 }
        var running: Bool { status["running"] as? Bool ?? true }
        var transitions: [(state: String, by: String, reason: String)] {
            (deployment["transitions"] as? [[String: Any]] ?? []).map { ($0["state"] as? String ?? "", $0["by"] as? String ?? "", $0["reason"] as? String ?? "") }
        }

        init(_ result: CLIRunner.Result) throws {
            #expect(result.status == 0, "\(result.stderr)")
            object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)")
        }
    }

    static func status(_ cli: CLIRunner, _ arguments: String...) async throws -> Seen {
        try Seen(try await cli.run(["deploy", "status"] + arguments + ["-f", "json"]))
    }

    /// The config's own keys and values (discfg's records left out).
    static func keys(_ cli: CLIRunner, _ config: String) async throws -> [String: String] {
        let items = try await cli.run("ls", config, "-r", "-f", "json").envelope().items ?? []
        return Dictionary(uniqueKeysWithValues: items.filter { !$0.key.hasPrefix("/.discfg/") }.map { ($0.key, $0.value) })
    }

    /// Polls `deploy status -f json` until the deployment has ended in `state`.
    static func ended(_ cli: CLIRunner, _ state: String) async throws -> Seen {
        try await eventually("the deployment is recorded \(state)", timeout: .seconds(60), interval: .milliseconds(200)) {
            let seen = try await status(cli, "app")
            return seen.state == state && !seen.running ? seen : nil
        }
    }

    @Test("start from a file stages without making it live; status and ls in text and JSON; writes under the prefix and an overlapping start refused naming it")
    func startFromFile() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        let started = try await cli.run(
            "deploy", "start", "app", "--prefix", "/db/", "-d", "candidate.json", "--strategy", "Linear20PercentEvery6Minutes",
            "--rollback-on", "alarm:checkout-5xx", "-m", "bigger pool"
        )
        #expect(started.status == 0, "\(started.stderr)")
        #expect(started.stdout.contains("revision 3 stable, revision 4 candidate"), "\(started.stdout)")
        #expect(started.stdout.contains("20 % now, +20 % every 6m, 100 % at 24m, bake 30m, complete at "), "\(started.stdout)")
        #expect(started.stdout.contains("follow it: discfg deploy status app"), "\(started.stdout)")
        #expect(try await Self.keys(cli, "app") == ["/db/host": "db1", "/db/port": "5432", "/other": "x"], "the candidate went live")

        let seen = try await Self.status(cli, "app")
        #expect(started.stdout.contains("deployment \(seen.id) started"), "\(started.stdout)")
        #expect(seen.state == "DEPLOYING" && seen.share == 2000 && seen.running)
        #expect(seen.status["step"] as? Int == 1 && seen.status["stepCount"] as? Int == 5)
        #expect(seen.deployment["prefix"] as? String == "/db/" && seen.deployment["message"] as? String == "bigger pool")
        #expect(seen.deployment["signals"] as? [String] == ["alarm:checkout-5xx"])
        #expect((seen.deployment["startedBy"] as? String)?.hasPrefix("local:") == true, "attributed to this machine's user")
        #expect(try await Self.status(cli, "app", seen.id).id == seen.id)

        let human = try await cli.run("deploy", "status", "app")
        #expect(human.stdout.contains("(in 6m)") || human.stdout.contains("(in 5m"), "the next step 6 minutes after the start: \(human.stdout)")
        for expected in ["DEPLOYING", "20 % (step 1 of 5)", "next step:", "bigger pool", "alarm:checkout-5xx", "3 stable, 4 candidate", "transitions: none"] {
            #expect(human.stdout.contains(expected), "\(expected): \(human.stdout)")
        }
        let list = try await cli.run("deploy", "ls", "app")
        let rows = list.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(rows.first == ["ID", "PREFIX", "STATE", "SHARE", "STARTED", "BY", "MESSAGE"], "\(list.stdout)")
        #expect(rows.count == 2 && Array(rows[1].prefix(5)) == [seen.id, "/db/", "DEPLOYING", "20", "%"], "\(list.stdout)")
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(try await cli.run("deploy", "ls", "app", "-f", "json").stdout.utf8)) as? [String: Any])
        #expect((listed["deployments"] as? [Any])?.count == 1)

        let refused = try await cli.run("set", "app", "/db/host", "db3")
        #expect(refused.status == 4 && refused.stderr.contains("deployment \(seen.id)") && refused.stderr.contains("nothing was written"), "\(refused.stderr)")
        #expect(try await cli.run("get", "app", "/db/host").stdout == "db1\n")
        #expect(try await cli.run("set", "app", "/other", "y").status == 0, "a key outside the prefix is written")

        let overlapping = try await cli.run("deploy", "start", "app", "-d", "candidate.json", "--strategy", "AllAtOnce")
        #expect(overlapping.status == 4 && overlapping.stderr.contains("deployment \(seen.id) is deploying /db/"), "\(overlapping.stderr)")
        #expect(try await cli.run("deploy", "ls", "app").stdout.split(separator: "\n").count == 2)
    }

    @Test("--from another config: the target's keys under the prefix are the source's exactly once it completes, recorded by status")
    func promotion() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        for arguments in [["create", "staging"], ["set", "staging", "/db/host", "db-stg"], ["set", "staging", "/db/pool", "20"], ["set", "staging", "/other", "stg"]] {
            #expect(try await cli.run(arguments).status == 0)
        }
        let started = try await cli.run(
            "deploy", "start", "app", "--from", "staging", "--prefix", "/db/", "--strategy", "linear", "--step", "50", "--interval", "3s", "--bake", "0s",
            "-m", "promote staging", "-f", "json"
        )
        let seen = try Seen(started)
        #expect(seen.state == "DEPLOYING" && seen.share == 5000, "\(started.stdout)")
        #expect(seen.object["revision"] as? Int == 4)
        #expect(try await cli.run("get", "app", "/db/host").stdout == "db1\n", "a plain read sees the stable value while it deploys")

        let complete = try await Self.ended(cli, "COMPLETE")
        #expect(complete.transitions.map(\.state) == ["COMPLETE"])
        #expect(try await Self.keys(cli, "app") == ["/db/host": "db-stg", "/db/pool": "20", "/other": "x"], "/db/port removed, /other kept")
        #expect(try await cli.run("set", "app", "/db/host", "db9").status == 0, "writes under the prefix are taken again")
    }

    @Test("status --watch shows the deployment every second and ends by itself once it has ended")
    func watch() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        let start = ["deploy", "start", "app", "--prefix", "/db/", "-d", "candidate.json", "--strategy", "linear", "--step", "50", "--interval", "2s", "--bake", "1s"]
        #expect(try await cli.run(start).status == 0)
        let watched = try await cli.run("deploy", "status", "app", "--watch", "-f", "json")
        #expect(watched.status == 0, "\(watched.stderr)")
        let states = watched.stdout.split(separator: "\n").compactMap { line in
            ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]).flatMap { ($0["status"] as? [String: Any])?["state"] as? String }
        }
        #expect(states.count >= 2 && states.last == "COMPLETE", "\(watched.stdout)")
        #expect(try await cli.run("get", "app", "/db/host").stdout == "db2\n")
        let human = try await cli.run("deploy", "status", "app", "--watch")
        #expect(human.status == 0 && human.stdout.contains("state:      COMPLETE"), "an ended deployment is shown once: \(human.stdout)")
    }

    @Test("pause, resume and rollback, each attributed with its reason; what the state refuses is refused; a revert puts a complete one back")
    func transitions() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("deploy", "start", "app", "--prefix", "/db/", "-d", "candidate.json", "--strategy", "Linear20PercentEvery6Minutes").status == 0)
        let paused = try await cli.run("deploy", "pause", "app", "-m", "watching")
        #expect(paused.status == 0 && paused.stdout.contains("is PAUSED at 20 % (step 1 of 5)") && paused.stdout.contains("discfg deploy resume app"), "\(paused.stdout)\(paused.stderr)")
        let seen = try await Self.status(cli, "app")
        #expect(seen.state == "PAUSED" && seen.status["pausedIn"] as? String == "DEPLOYING")
        let again = try await cli.run("deploy", "pause", "app")
        #expect(again.status == 2 && again.stderr.contains("is PAUSED; only a DEPLOYING or BAKING deployment can be paused"), "\(again.stderr)")
        #expect(try await cli.run("deploy", "resume", "app", "-m", "flat").status == 0)
        #expect(try await cli.run("deploy", "revert", "app", seen.id).status == 2, "only a COMPLETE deployment is reverted")
        let rolledBack = try await cli.run("deploy", "rollback", "app", seen.id, "-m", "latency up")
        #expect(rolledBack.status == 0 && rolledBack.stdout.contains("is ROLLED_BACK at 0 %"), "\(rolledBack.stdout)\(rolledBack.stderr)")

        let ended = try await Self.ended(cli, "ROLLED_BACK")
        #expect(ended.transitions.map(\.state) == ["PAUSED", "RESUMED", "ROLLING_BACK", "ROLLED_BACK"])
        #expect(ended.transitions.map(\.reason).prefix(3) == ["watching", "flat", "latency up"])
        #expect(ended.transitions.allSatisfy { $0.by.hasPrefix("local:") })
        let log = try await cli.run("log", "app")
        #expect(log.stdout.contains("latency up") && log.stdout.contains("watching"), "\(log.stdout)")
        #expect(try await Self.keys(cli, "app") == ["/db/host": "db1", "/db/port": "5432", "/other": "x"])
        #expect(try await cli.run("set", "app", "/db/host", "db3").status == 0)
        let none = try await cli.run("deploy", "resume", "app")
        #expect(none.status == 3 && none.stderr.contains("no deployment running"), "\(none.stderr)")

        // A tiny deployment completes, then is reverted.
        #expect(try await cli.run("deploy", "start", "app", "--prefix", "/db/", "-d", "candidate.json", "--strategy", "linear", "--step", "100", "--interval", "0s").status == 0)
        let complete = try await Self.ended(cli, "COMPLETE")
        #expect(try await cli.run("get", "app", "/db/host").stdout == "db2\n")
        let reverted = try await cli.run("deploy", "revert", "app", complete.id, "-m", "undo")
        #expect(reverted.status == 0 && reverted.stdout.contains("is REVERTED"), "\(reverted.stdout)\(reverted.stderr)")
        #expect(try await cli.run("get", "app", "/db/host").stdout == "db3\n")
    }

    @Test("status shows the readers and errors agents reported and the health test's decision, on the SQLite file and through serve's REST", .timeLimit(.minutes(2)))
    func healthReports() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("deploy", "start", "app", "--prefix", "/db/", "-d", "candidate.json", "--strategy", "Linear20PercentEvery6Minutes", "--rollback-on", "health").status == 0)
        let none = try await cli.run("deploy", "status", "app")
        #expect(none.stdout.contains("readers:    no reports yet (agents report within their refresh interval)"), "\(none.stdout)")
        #expect(none.stdout.contains("health  unknown: no reports yet"), "\(none.stdout)")
        #expect(!none.stdout.contains("errors:"), "no requests, no error line: \(none.stdout)")
        let id = try await Self.status(cli, "app").id

        // A server of the same SQLite file: reports written through the library, read back over REST.
        let server = try await LiveServer.start(directory: cli.directory)
        let store: any ConfigStore = server.store
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let reports = [
            try HealthReport(reporter: "web-1#a", stable: .init(requests: 1_500, errors: 3, readers: 40), candidate: .init(requests: 80, errors: 30, readers: 6), at: now - 4_000),
            try HealthReport(reporter: "web-2#b", stable: .init(requests: 500, errors: 1, readers: 30), candidate: .init(requests: 20, errors: 10, readers: 3), at: now - 2_000),
        ]
        let app = try ConfigName("app")
        for report in reports { try await store.reportHealth(report, deployment: id, in: app) }
        let health = DeploymentHealth(reports)
        #expect(health.decision() == .rollback, "40 errors in 100 on the candidate against 4 in 2,000")
        var remote = cli
        remote.environment["DISCFG_STORE"] = server.baseURL
        for runner in [cli, remote] {
            let human = try await runner.run("deploy", "status", "app")
            #expect(human.status == 0, "\(human.stderr)")
            #expect(human.stdout.contains("readers:    stable 70, candidate 9 (2 reporters, last report "), "\(human.stdout)")
            #expect(human.stdout.contains("errors:     candidate 40/100 (40.00 %), stable 4/2000 (0.20 %) — health test: rollback"), "\(human.stdout)")
            #expect(human.stdout.contains("health  unhealthy: the candidate is significantly worse: \(health.summary)"), "\(human.stdout)")
            let seen = try await Self.status(runner, "app")
            let document = try #require(seen.object["health"] as? [String: Any], "\(seen.object)")
            #expect(document["reporters"] as? Int == 2 && document["decision"] as? String == "rollback" && document["latest"] as? Int64 == now - 2_000)
            #expect((document["candidate"] as? [String: Int]) == ["requests": 100, "errors": 40, "readers": 9])
            #expect((document["stable"] as? [String: Int]) == ["requests": 2_000, "errors": 4, "readers": 70])
            #expect((seen.object["signals"] as? [[String: Any]])?.first?["reading"] as? String == "unhealthy")
        }
        await server.halt()
        #expect(try await Self.status(cli, "app").running, "status read health and left the deployment to the monitor")
    }

    @Test("status reads each signal now: an http: signal answering 503 is unhealthy, one answering 200 healthy; --no-signals reads none", .timeLimit(.minutes(2)))
    func signalReadings() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        let peer = try await SignalPeer.start()
        defer { Task { await peer.stop() } }
        let failing = "\(peer.base)/status/503", passing = "\(peer.base)/status/200"
        let start = try await cli.run(
            "deploy", "start", "app", "--prefix", "/db/", "-d", "candidate.json", "--strategy", "Linear20PercentEvery6Minutes",
            "--rollback-on", "http:\(failing)", "--rollback-on", "http:\(passing)"
        )
        #expect(start.status == 0, "\(start.stderr)")
        let human = try await cli.run("deploy", "status", "app")
        #expect(human.status == 0, "\(human.stderr)")
        #expect(human.stdout.contains("signals:    http:\(failing)  unhealthy: the health URL \"\(failing)\" answered 503 Service Unavailable"), "\(human.stdout)")
        #expect(human.stdout.contains("            http:\(passing)  healthy"), "\(human.stdout)")
        let seen = try await Self.status(cli, "app")
        let signals = try #require(seen.object["signals"] as? [[String: Any]], "\(seen.object)")
        #expect(signals.map { $0["signal"] as? String } == ["http:\(failing)", "http:\(passing)"])
        #expect(signals.map { $0["reading"] as? String } == ["unhealthy", "healthy"])
        #expect((signals[0]["reason"] as? String)?.contains("answered 503") == true && signals[1]["reason"] is NSNull)

        let skipped = try await cli.run("deploy", "status", "app", "--no-signals")
        #expect(skipped.status == 0 && skipped.stdout.contains("signals:    http:\(failing), http:\(passing)\n"), "\(skipped.stdout)")
        #expect(!skipped.stdout.contains("answered") && !skipped.stdout.contains("healthy"), "\(skipped.stdout)")
        let skippedJSON = try Seen(try await cli.run("deploy", "status", "app", "--no-signals", "-f", "json"))
        #expect(skippedJSON.object["signals"] == nil && skippedJSON.object["health"] != nil)
        #expect(try await Self.status(cli, "app").running, "an unhealthy reading is shown, not acted on, by status")
    }

    @Test("a CloudWatch that never answers costs status its bound, not a hang: the alarm reads unknown, the URL beside it is read", .timeLimit(.minutes(1)))
    func silentCloudWatch() async throws {
        var cli = try await Self.runner()
        defer { cli.cleanUp() }
        let silent = try SilentPort()
        defer { Task { await silent.stop() } }
        let peer = try await SignalPeer.start()
        defer { Task { await peer.stop() } }
        for (name, value) in [("AWS_REGION", "us-east-1"), ("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"), ("AWS_SECRET_ACCESS_KEY", "secret"),
                              ("AWS_EC2_METADATA_DISABLED", "true"), ("AWS_ENDPOINT_URL", "http://127.0.0.1:\(silent.port)")] {
            cli.environment[name] = value
        }
        let url = "\(peer.base)/status/503"
        let start = try await cli.run(
            "deploy", "start", "app", "--prefix", "/db/", "-d", "candidate.json", "--strategy", "Linear20PercentEvery6Minutes",
            "--rollback-on", "alarm:checkout-5xx", "--rollback-on", "http:\(url)"
        )
        #expect(start.status == 0, "\(start.stderr)")
        let began = ContinuousClock.now
        let human = try await cli.run("deploy", "status", "app")
        #expect(ContinuousClock.now - began < .seconds(15), "status ended within its bound")
        #expect(human.status == 0, "\(human.stderr)")
        #expect(human.stdout.contains("alarm:checkout-5xx") && human.stdout.contains("unknown: not read within 6s"), "\(human.stdout)")
        #expect(human.stdout.contains("unhealthy: the health URL \"\(url)\" answered 503"), "\(human.stdout)")
    }

    @Test("complete at follows a pause: while paused, how long after resume; resumed, the schedule's end shifted by the pause")
    func completeAtAfterPause() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("deploy", "start", "app", "--prefix", "/db/", "-d", "candidate.json", "--strategy", "Linear20PercentEvery6Minutes").status == 0)
        let planned = try await Self.status(cli, "app")
        let startedAt = try #require(planned.deployment["startedAt"] as? Int64)
        let length: Int64 = (30 + 30) * 60_000
        #expect(planned.status["completesAt"] as? Int64 == startedAt + length)
        #expect(try await cli.run("deploy", "pause", "app").status == 0)
        let paused = try await cli.run("deploy", "status", "app")
        let pausedSeen = try await Self.status(cli, "app")
        let pausedAt = try #require((pausedSeen.deployment["transitions"] as? [[String: Any]])?.first?["at"] as? Int64)
        let left = try #require(pausedSeen.status["scheduleLeftMilliseconds"] as? Int64)
        #expect(left == length - (pausedAt - startedAt), "the time left froze at the pause")
        #expect(pausedSeen.status["completesAt"] is NSNull)
        #expect(paused.stdout.contains("bake 30m, paused: completes \(DeploymentDuration.spelled((left + 999) / 1000)) after resume"), "\(left): \(paused.stdout)")
        #expect(!paused.stdout.contains("complete at"), "\(paused.stdout)")
        #expect(try await cli.run("deploy", "resume", "app").status == 0)
        let resumed = try await Self.status(cli, "app")
        let times = (resumed.deployment["transitions"] as? [[String: Any]] ?? []).compactMap { $0["at"] as? Int64 }
        #expect(times.count == 2)
        let completesAt = startedAt + (times[1] - times[0]) + length
        #expect(resumed.status["completesAt"] as? Int64 == completesAt, "the end moved by the pause: \(resumed.status)")
        let human = try await cli.run("deploy", "status", "app")
        // Local time, with its date when that is not today.
        let shown = ["HH:mm:ss", "yyyy-MM-dd HH:mm:ss"].map { format in
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.dateFormat = format
            return "bake 30m, complete at \(formatter.string(from: Date(timeIntervalSince1970: Double(completesAt) / 1000)))\n"
        }
        #expect(shown.contains { human.stdout.contains($0) }, "\(shown): \(human.stdout)")
    }

    @Test("every bad flag: one sentence naming it, exit 2 (3 for an unknown id or config), nothing written")
    func badFlags() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        let start = ["deploy", "start", "app", "--prefix", "/db/"]
        let file = ["-d", "candidate.json"]
        let linear = ["--strategy", "linear"]
        let cases: [(arguments: [String], names: String, status: Int32)] = [
            (start + file + linear + ["--step", "0", "--interval", "1m"], "--step", 2),
            (start + file + linear + ["--step", "-1", "--interval", "1m"], "--step", 2),
            (start + file + linear + ["--step", "9223372036854775808", "--interval", "1m"], "--step", 2),
            (start + file + linear + ["--step", "18446744073709551616", "--interval", "1m"], "--step", 2),
            (start + file + linear + ["--step", "abc", "--interval", "1m"], "--step", 2),
            (start + file + linear + ["--step", "100.5", "--interval", "1m"], "--step", 2),
            (start + file + linear + ["--step", "20", "--interval", "-5s"], "--interval", 2),
            (start + file + linear + ["--step", "20", "--interval", "9223372036854775808s"], "--interval", 2),
            (start + file + linear + ["--step", "20", "--interval", "5x"], "--interval", 2),
            (start + file + linear + ["--step", "20", "--interval", "0s"], "an interval of 0", 2),
            (start + file + linear + ["--step", "20", "--interval", "1m", "--bake", "-5s"], "--bake", 2),
            (start + file + linear + ["--step", "20", "--interval", "1m", "--rollback", "8d"], "--rollback", 2),
            (start + file + linear + ["--interval", "1m"], "--step", 2),
            (start + file + linear + ["--step", "20"], "--interval", 2),
            (start + file + ["--strategy", "Sideways"], "\"Sideways\" is not a strategy", 2),
            (start + file + ["--strategy", "AllAtOnce", "--step", "20"], "--step", 2),
            (start + file + ["--strategy", "AppConfig.AllAtOnce", "--rollback-on", "pager"], "--rollback-on", 2),
            (start + file + ["--strategy", "AllAtOnce", "--rollback-on", "alarm:"], "--rollback-on", 2),
            (start + ["--strategy", "AllAtOnce"], "-d FILE or --from", 2),
            (start + file + ["--from", "app", "--strategy", "AllAtOnce"], "not both", 2),
            (start + ["-d", "missing.json", "--strategy", "AllAtOnce"], "missing.json", 2),
            (start + ["--from", "nowhere", "--strategy", "AllAtOnce"], "nowhere", 3),
            (["deploy", "start", "app", "--prefix", "/other/"] + file + ["--strategy", "AllAtOnce"], "outside /other/", 2),
            (["deploy", "status", "app", "0123456789abcdef"], "no deployment 0123456789abcdef", 3),
            (["deploy", "status", "app", "not-an-id"], "not a deployment id", 2),
            (["deploy", "pause", "app"], "no deployment", 3),
            (["deploy", "revert", "app"], "ID", 2),
            (["deploy", "ls", "nope"], "nope", 3),
        ]
        for (arguments, names, expected) in cases {
            let result = try await cli.run(arguments)
            let shown = arguments.joined(separator: " ")
            #expect(result.status == expected, "\(shown): \(result.status) \(result.stderr)")
            #expect(result.stderr.hasPrefix("discfg: ") && result.stderr.contains(names), "\(shown): \(result.stderr)")
            #expect(!result.stderr.contains("Fatal error") && result.stdout.isEmpty, "\(shown): \(result.stdout)\(result.stderr)")
        }
        #expect(try await cli.run("info", "app", "-f", "json").envelope().revision == 3, "a refused command changed the config")
        #expect(try await cli.run("deploy", "ls", "app").stdout.contains("no deployments in config app"))
    }

    @Test("--help teaches: examples, the states, writes refused while deploying, plain reads see the stable values")
    func help() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let help = try await cli.run("deploy", "--help")
        for expected in ["discfg deploy start app -d pool.json", "ROLLING_BACK", "REVERTED", "is refused", "see the stable values until the deployment completes"] {
            #expect(help.stdout.contains(expected), "\(expected): \(help.stdout)")
        }
        let start = try await cli.run("deploy", "start", "--help")
        for expected in ["--rollback-on", "alarm:NAME", "Linear20PercentEvery6Minutes", "--from", "Examples:"] {
            #expect(start.stdout.contains(expected), "\(expected): \(start.stdout)")
        }
        let status = try await cli.run("deploy", "status", "--help")
        for expected in ["--no-signals", "unknown", "readers", "completesAt", "scheduleLeftMilliseconds"] {
            #expect(status.stdout.contains(expected), "\(expected): \(status.stdout)")
        }
    }
}
