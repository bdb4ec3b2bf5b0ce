import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// The scheduled event moves deployments along as `serve`'s monitor does: COMPLETE when the
/// schedule ends (the candidate becomes live), ROLLING_BACK when a health URL or an alarm fails, all
/// attributed to `system:monitor`; nothing when nothing runs; and a pass never outlives
/// its invocation.
@Suite("Lambda: scheduled deployment monitor")
struct ScheduledMonitorTests {
    /// Config `app` with `/db/host` = db1 and `candidate.json` (`/db/host` = db2) in the table's directory.
    static func prepare(_ table: MotoTable) async throws {
        try await table.createConfig("app")
        _ = try await table.cli.json("set", "app", "/db/host", "db1")
        try Data(#"{"/db/host": "db2"}"#.utf8).write(to: table.directory.appendingPathComponent("candidate.json"))
    }

    /// Starts the deployment; when its next step is due (epoch milliseconds), if it has one.
    @discardableResult
    static func start(_ table: MotoTable, _ extra: [String]) async throws -> Int64? {
        let candidate = table.directory.appendingPathComponent("candidate.json").path
        let started = try await table.cli.run(["deploy", "start", "app", "--prefix", "/db/", "-d", candidate, "--bake", "0s", "-m", "db2", "-f", "json"] + extra)
        #expect(started.status == 0, "\(started.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(started.stdout.utf8)) as? [String: Any]
        return ((object?["status"] as? [String: Any])?["nextStepAt"] as? NSNumber)?.int64Value
    }

    /// Waits until `instant` (epoch milliseconds) has passed: a known instant of the
    /// deployment's schedule, which no event announces.
    static func wait(until instant: Int64) async throws {
        let left = instant - Int64(Date().timeIntervalSince1970 * 1000) + 200
        if left > 0 { try await Task.sleep(for: .milliseconds(left)) }
    }

    /// Sends a scheduled event; the answer's monitor summary and the invocation's request id.
    static func scheduled(_ lambda: RunningLambda, deadline: Duration = .seconds(30)) async throws -> (transitions: [[String: Any]], skipped: Int, answer: [String: Any], requestID: String) {
        let invocation = try await lambda.invoke(try GatewayEvent.scheduled(), deadline: deadline)
        guard case .response(let data) = invocation.result, let answer = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw LambdaTestFailure("the scheduled event failed: \(invocation.result)\n\(lambda.process.output.logs)")
        }
        let deployments = answer["deployments"] as? [String: Any] ?? [:]
        return (deployments["transitions"] as? [[String: Any]] ?? [], deployments["configsSkipped"] as? Int ?? -1, answer, invocation.requestID)
    }

    /// The deployment's transitions as (state, by, reason).
    static func transitions(_ table: MotoTable) async throws -> [(state: String, by: String, reason: String)] {
        let status = try await table.cli.run("deploy", "status", "app", "-f", "json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], "\(status.stdout)\(status.stderr)")
        let deployment = object["deployment"] as? [String: Any] ?? [:]
        return (deployment["transitions"] as? [[String: Any]] ?? []).map {
            ($0["state"] as? String ?? "", $0["by"] as? String ?? "", $0["reason"] as? String ?? "")
        }
    }

    @Test("a scheduled event after the schedule ended records COMPLETE by system:monitor, and the live key becomes the candidate")
    func completes() async throws {
        try await withMotoTable { table in
            try await Self.prepare(table)
            let end = try #require(try await Self.start(table, ["--strategy", "linear", "--step", "100", "--interval", "1s"]))
            try await withLambda(table) { lambda in
                let early = try await Self.scheduled(lambda)
                #expect(early.transitions.isEmpty || Date().timeIntervalSince1970 * 1000 >= Double(end), "nothing is due before the step: \(early.answer)")
                // The clock ends the schedule (one step of 100 %, no bake) at the step.
                try await Self.wait(until: end)
                let completed = try await Self.scheduled(lambda)
                #expect(completed.transitions.count == 1 && completed.skipped == 0, "\(completed.answer)")
                let transition = try #require(completed.transitions.first)
                #expect(transition["state"] as? String == "COMPLETE" && transition["config"] as? String == "app", "\(transition)")
                #expect(transition["revision"] as? Int != nil && transition["failure"] == nil, "\(transition)")
                let id = try #require(transition["id"] as? String)
                let lines = await lambda.logLines(requestID: completed.requestID) { $0.contains("deployment \(id)") }
                #expect(lines.contains { $0.contains("\tINFO\t") && $0.contains("deployment \(id) of config \"app\": COMPLETE") }, "\(lines)")

                let again = try await Self.scheduled(lambda)
                #expect(again.transitions.isEmpty && again.skipped == 0, "an ended deployment is not checked again: \(again.answer)")
            }
            #expect(try await table.cli.json("get", "app", "/db/host").item?.value == "db2")
            let transitions = try await Self.transitions(table)
            #expect(transitions.last?.state == "COMPLETE" && transitions.last?.by == "system:monitor", "\(transitions)")
        }
    }

    @Test("a health URL answering 503 rolls the deployment back: ROLLING_BACK by system:monitor naming the status, the live key unchanged")
    func rollsBack() async throws {
        try await withServer(try await SignalPeer.start()) { peer in
            try await withMotoTable { table in
                try await Self.prepare(table)
                try await Self.start(table, ["--strategy", "linear", "--step", "10", "--interval", "1h", "--rollback-on", "http:\(peer.base)/status/503"])
                try await withLambda(table) { lambda in
                    let summary = try await Self.scheduled(lambda)
                    #expect(summary.transitions.count == 1 && summary.skipped == 0, "\(summary.answer)")
                    let transition = try #require(summary.transitions.first)
                    #expect(transition["state"] as? String == "ROLLING_BACK")
                    #expect((transition["reason"] as? String)?.contains("503") == true, "\(transition)")
                    #expect(transition["revision"] as? Int != nil, "\(transition)")
                }
                let transitions = try await Self.transitions(table)
                #expect(transitions.first?.state == "ROLLING_BACK" && transitions.first?.by == "system:monitor", "\(transitions)")
                #expect(transitions.first?.reason.contains("503") == true, "\(transitions)")
                #expect(try await table.cli.json("get", "app", "/db/host").item?.value == "db1")
            }
        }
    }

    @Test("an alarm in ALARM on moto's CloudWatch rolls the deployment back, read through the function's AWS settings")
    func alarmRollsBack() async throws {
        try await withMotoTable { table in
            let alarm = MotoCloudWatch.uniqueName("lambda-monitor")
            try await MotoCloudWatch.createAlarm(alarm, on: table.moto)
            try await MotoCloudWatch.setState(alarm, "ALARM", reason: "errors over 5 %", on: table.moto)
            try await Self.prepare(table)
            try await Self.start(table, ["--strategy", "linear", "--step", "10", "--interval", "1h", "--rollback-on", "alarm:\(alarm)"])
            try await withLambda(table, environment: ["AWS_ENDPOINT_URL_CLOUDWATCH": table.moto.endpoint.absoluteString]) { lambda in
                let summary = try await Self.scheduled(lambda)
                let transition = try #require(summary.transitions.first, "\(summary.answer)")
                #expect(transition["state"] as? String == "ROLLING_BACK", "\(transition)")
                #expect((transition["reason"] as? String)?.contains("alarm:\(alarm)") == true, "\(transition)")
                #expect((transition["reason"] as? String)?.contains("ALARM") == true, "\(transition)")
            }
            #expect(try await table.cli.json("get", "app", "/db/host").item?.value == "db1")
        }
    }

    @Test("a scheduled event with nothing running answers an empty summary and writes nothing")
    func nothingRunning() async throws {
        try await withMotoTable { table in
            try await Self.prepare(table)
            let before = try await table.cli.json("info", "app").configInfo?.revision
            try await withLambda(table) { lambda in
                let summary = try await Self.scheduled(lambda)
                #expect(summary.transitions.isEmpty && summary.skipped == 0, "\(summary.answer)")
                #expect(summary.answer["expired"] as? Int == 0, "\(summary.answer)")
                let lines = await lambda.logLines(requestID: summary.requestID) { $0.contains("deployment monitor:") }
                #expect(lines.contains { $0.hasSuffix("deployment monitor: 0 transition(s)") }, "\(lines)")
            }
            #expect(try await table.cli.json("info", "app").configInfo?.revision == before)
        }
    }

    @Test("with less time left than a config's check needs, no config is read: the pass counts it skipped, and the next event records it")
    func boundedByDeadline() async throws {
        try await withMotoTable(ownServer: true) { table in
            try await Self.prepare(table)
            let end = try #require(try await Self.start(table, ["--strategy", "linear", "--step", "100", "--interval", "1s"]))
            let before = try await table.cli.json("info", "app").configInfo?.revision
            try await withLambda(table) { lambda in
                // Past the schedule's end COMPLETE is due whenever the config is read; the
                // monitor stops reading configs when less than 7 s (a probe's 5 s and 2 s) are left.
                try await Self.wait(until: end)
                let short = try await Self.scheduled(lambda, deadline: .seconds(4))
                #expect(short.transitions.isEmpty && short.skipped == 1, "\(short.answer)")
                #expect(try await table.cli.json("info", "app").configInfo?.revision == before, "nothing was written")

                let full = try await Self.scheduled(lambda)
                #expect(full.transitions.map { $0["state"] as? String } == ["COMPLETE"] && full.skipped == 0, "\(full.answer)")
            }
        }
    }
}
