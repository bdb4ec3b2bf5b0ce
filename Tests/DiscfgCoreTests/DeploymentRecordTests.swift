import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Deployment record: JSON as stored, and the records and signals it refuses")
struct DeploymentRecordTests {
    let start: Int64 = 1_767_225_600_000

    func record(_ changes: [String: Any] = [:], strategy: [String: Any] = [:], transitions: [[String: Any]] = []) throws -> Data {
        var strategyFields: [String: Any] = ["growth": "linear", "stepBasisPoints": 2_000, "intervalSeconds": 30, "bakeSeconds": 60]
        strategyFields.merge(strategy) { $1 }
        var fields: [String: Any] = [
            "id": "0123456789abcdef", "prefix": "/app/", "stableRevision": 41, "candidate": ["revision": 42], "strategy": strategyFields,
            "startedAt": start, "message": "raise the pool size", "startedBy": "token:ci", "signals": ["alarm:checkout-5xx", "health"],
            "transitions": transitions,
        ]
        fields.merge(changes) { $1 }
        return try JSONSerialization.data(withJSONObject: fields)
    }

    func decode(_ data: Data) throws -> Deployment { try JSONDecoder().decode(Deployment.self, from: data) }

    @Test("a record with transitions reads back as written")
    func roundTrip() throws {
        let strategy = try DeploymentStrategy.predefined(named: "Canary10Percent20Minutes").withRollbackSeconds(120)
        let deployment = try makeDeployment(strategy, start: start, signals: [.alarm("checkout-5xx"), .http("https://status.example/health"), .health])
            .pause(at: start + 1_000, by: "local:ana@laptop", reason: "watching")
            .resume(at: start + 5_000, by: "local:ana@laptop", reason: "")
            .rollback(at: start + 9_000, by: "system:monitor", signal: .health, reading: "candidate 3.1× the stable error rate")
        let data = try JSONEncoder().encode(deployment)
        let back = try decode(data)
        #expect(back == deployment)
        #expect(back.strategy.name == "Canary10Percent20Minutes")
        #expect(back.strategy.rollbackSeconds == 120)
        let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        #expect(json?["signals"] as? [String] == ["alarm:checkout-5xx", "http:https://status.example/health", "health"])
        #expect((json?["transitions"] as? [[String: Any]])?.map { $0["state"] as? String } == ["PAUSED", "RESUMED", "ROLLING_BACK"])
        #expect((json?["candidate"] as? [String: Any])?["revision"] as? Int == 42)
        let plain = try decode(try record())
        #expect(plain.prefix.path == "/app/")
        #expect(plain.candidateRevision == 42)
        #expect(plain.strategy.rollbackSeconds == 0)
    }

    @Test("unknown fields, nulls and numbers out of range are refused naming the field")
    func refusesMalformed() throws {
        let cases: [(Data, String, String)] = [
            (try record(["colour": "blue"]), "deployment", "no field \"colour\""),
            (try record(strategy: ["speed": 1]), "strategy", "no field \"speed\""),
            (try record(["message": NSNull()]), "deployment.message", "null"),
            (try record(["id": "0123456789ABCDEF"]), "id", "16 lowercase"),
            (try record(["id": "0123"]), "id", "16 lowercase"),
            (try record(["startedAt": -1]), "startedAt", "unix milliseconds"),
            (try record(["startedAt": 253_402_300_800_000]), "startedAt", "unix milliseconds"),
            (try record(["stableRevision": -1]), "deployment.stableRevision", "whole number"),
            (try record(["stableRevision": 9_223_372_036_854_775_808 as UInt64]), "stableRevision", "at most"),
            (try record(["candidate": ["revision": 1, "where": "x"]]), "candidate", "no field \"where\""),
            (try record(["prefix": "/a//b"]), "deployment.prefix", "empty segment"),
            (try record(["startedBy": ""]), "startedBy", "principal"),
            (try record(["signals": ["sms:123"]]), "signals", "not a signal"),
            (try record(["signals": ["health", "HEALTH"]]), "signals", "twice"),
            (try record(strategy: ["stepBasisPoints": 0]), "strategy", "the step"),
            (try record(strategy: ["stepBasisPoints": 10_001]), "strategy", "the step"),
            (try record(strategy: ["intervalSeconds": 2_592_001]), "strategy", "30 days"),
            (try record(strategy: ["bakeSeconds": -1]), "strategy", "7 days"),
            (try record(strategy: ["growth": "logistic"]), "strategy.growth", "linear or exponential"),
            (try record(strategy: ["name": "Linear20PercentEvery6Minutes"]), "strategy.name", "not the predefined strategy"),
            (try record(strategy: ["name": "Sideways"]), "strategy.name", "not the predefined strategy"),
        ]
        for (data, field, phrase) in cases {
            try expectError(.invalidArgument, field: field, mentioning: [phrase]) { try decode(data) }
        }
        try expectError(.invalidArgument, field: "deployment", mentioning: ["JSON object"]) { try decode(Data("[1]".utf8)) }
    }

    @Test("impossible histories are refused: before the start, out of order, RESUMED without PAUSED, ROLLED_BACK too soon")
    func refusesImpossibleHistories() throws {
        func transition(_ state: String, _ at: Int64) -> [String: Any] { ["state": state, "at": start + at, "by": "a", "reason": ""] }
        let cases: [([[String: Any]], String, String)] = [
            ([transition("PAUSED", -1)], "at", "started at"),
            ([transition("PAUSED", 10), transition("RESUMED", 5)], "at", "before"),
            ([transition("RESUMED", 10)], "state", "only a PAUSED deployment can be resumed"),
            ([transition("PAUSED", 10), transition("PAUSED", 20)], "state", "is PAUSED"),
            ([transition("COMPLETE", 10)], "state", "recorded COMPLETE"),
            ([transition("REVERTED", 10)], "state", "only a COMPLETE deployment can be reverted"),
            ([transition("ROLLING_BACK", 10), transition("RESUMED", 20)], "state", "is ROLLED_BACK"),
            ([transition("ROLLING_BACK", 10), transition("ROLLING_BACK", 20)], "state", "is ROLLED_BACK"),
            ([transition("SKIPPED", 10)], "transitions.state", "PAUSED, RESUMED"),
            ([["state": "PAUSED", "at": start, "by": "a", "extra": 1]], "transitions", "no field \"extra\""),
        ]
        for (transitions, field, phrase) in cases {
            try expectError(.invalidArgument, field: field, mentioning: [phrase]) { try decode(try record(transitions: transitions)) }
        }
        let gradual = try record(strategy: ["rollbackSeconds": 60], transitions: [transition("ROLLING_BACK", 10_000), transition("ROLLED_BACK", 30_000)])
        try expectError(.invalidArgument, field: "state", mentioning: ["is ROLLING_BACK"]) { try decode(gradual) }
        let whole = try record(
            strategy: ["rollbackSeconds": 60],
            transitions: [transition("PAUSED", 1), transition("RESUMED", 2), transition("ROLLING_BACK", 10_000), transition("ROLLED_BACK", 70_000)]
        )
        #expect(try decode(whole).status(at: start + 70_000).state == .rolledBack)
    }

    @Test("signals: alarm:NAME, http:URL (or the URL alone) and health; anything else in one sentence")
    func signals() throws {
        #expect(try DeploymentSignal("alarm:checkout-5xx") == .alarm("checkout-5xx"))
        #expect(try DeploymentSignal("ALARM:Checkout 5xx") == .alarm("Checkout 5xx"))
        #expect(try DeploymentSignal("http:https://status.example/health") == .http("https://status.example/health"))
        #expect(try DeploymentSignal("https://status.example/health") == .http("https://status.example/health"))
        #expect(try DeploymentSignal("http://127.0.0.1:8080/ok") == .http("http://127.0.0.1:8080/ok"))
        #expect(try DeploymentSignal("http:http://127.0.0.1:8080/ok") == .http("http://127.0.0.1:8080/ok"))
        #expect(try DeploymentSignal("Health") == .health)
        let bad: [(String, String)] = [
            ("alarm:", "alarm name"), ("alarm:" + String(repeating: "a", count: 256), "alarm name"), ("alarm:a\u{7}", "control"),
            ("http:ftp://x", "http:// or https://"), ("http:https://", "host"), ("http:https://a b/", "spaces"),
            ("sms:123", "not a signal"), ("", "not a signal"), ("healthy", "not a signal"),
        ]
        for (text, phrase) in bad {
            try expectError(.invalidArgument, field: "--rollback-on", mentioning: [phrase]) { try DeploymentSignal(text) }
        }
    }

    @Test("a new id is 16 lowercase hexadecimal digits and a deployment accepts it")
    func randomIDs() throws {
        var generator = SystemRandomNumberGenerator()
        let ids = (0..<100).map { _ in Deployment.randomID(using: &generator) } + [Deployment.randomID()]
        for id in ids {
            #expect(id.count == 16)
            #expect(id.allSatisfy { "0123456789abcdef".contains($0) })
            _ = try makeDeployment(try .predefined(named: "AllAtOnce"), id: id)
        }
        #expect(Set(ids).count == ids.count)
    }
}
