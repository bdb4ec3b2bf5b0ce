import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// A deployment's transitions are announced through the config's notifications, as its
/// other changes are: each write of its record reaches the webhook and EventBridge as
/// `discfg.deployment`, saying what happened (STARTED, PAUSED, …), by whom and why.
@Suite("Lambda: deployments announced through notifications")
struct DeploymentNotificationTests {
    /// The notice with its `deployment` member, as a receiver reads it.
    struct Notice: Decodable {
        struct Step: Decodable {
            var id: String
            var step: String
            var by: String
            var reason: String
        }

        var config: String
        var deployment: Step?
    }

    @Test("start, pause, rollback and its end reach the webhook and EventBridge as discfg.deployment, in order, with who and why")
    func announced() async throws {
        try await StreamNotificationTests().withNotificationPeers { table, services, webhook in
            let config = StreamNotificationTests.uniqueConfig()
            try await table.createConfig(config)
            _ = try await table.cli.json("set", config, "/app/a", "1")
            let updated = try await table.cli.run(
                "update", config, "--notify", "eventbridge", "--notify", webhook.url, "--allow-http-webhooks", "--allow-private-webhooks"
            )
            #expect(updated.status == 0, "\(updated.stderr)")
            let queue = try await services.captureEvents(config: config)
            let candidate = table.directory.appendingPathComponent("candidate.json")
            try Data(#"{"/app/a": "2"}"#.utf8).write(to: candidate)
            for arguments in [
                ["deploy", "start", config, "--prefix", "/app/", "-d", candidate.path, "--strategy", "linear", "--step", "50", "--interval", "1h", "-m", "raise a"],
                ["deploy", "pause", config, "-m", "watching the graphs"],
                ["deploy", "rollback", config, "-m", "errors up"],
                // A rollback over no time is at 0 at once; status records ROLLED_BACK.
                ["deploy", "status", config],
            ] {
                let result = try await table.cli.run(arguments)
                #expect(result.status == 0, "\(arguments): \(result.stderr)")
            }
            let records = try await services.streamRecords(table: table.name)
            try await withLambda(table) { lambda in
                let answer = try await lambda.respond(MotoServices.streamEvent(records))
                #expect(try StreamNotificationTests.batchItemFailures(answer) == [], "\(answer)\n\(lambda.process.output.logs)")
            }
            let announced = try webhook.deliveries.compactMap { delivery -> (String?, Notice.Step)? in
                let notice = try JSONDecoder().decode(Notice.self, from: delivery.body)
                return notice.deployment.map { (delivery.headers["x-discfg-event"], $0) }
            }
            #expect(announced.map(\.1.step) == ["STARTED", "PAUSED", "ROLLING_BACK", "ROLLED_BACK"], "\(announced.map(\.1))")
            #expect(announced.allSatisfy { $0.0 == "discfg.deployment" }, "\(announced.map(\.0))")
            #expect(announced.map(\.1.reason).prefix(3) == ["raise a", "watching the graphs", "errors up"])
            #expect(Set(announced.map(\.1.id)).count == 1)
            #expect(announced.first?.1.by.hasPrefix("local:") == true, "who: \(announced.first?.1.by ?? "")")
            let plain = webhook.deliveries.filter { $0.headers["x-discfg-event"] == "discfg.change" }
            #expect(!plain.isEmpty, "the key's own change stays discfg.change")

            let events = try await queue.receive(count: announced.count + plain.count)
            let kinds = events.compactMap { $0["detail-type"] as? String }
            #expect(kinds.filter { $0 == "discfg.deployment" }.count == 4, "\(kinds)")
            let steps = events.compactMap { (($0["detail"] as? [String: Any])?["deployment"] as? [String: Any])?["step"] as? String }
            #expect(steps == ["STARTED", "PAUSED", "ROLLING_BACK", "ROLLED_BACK"], "\(steps)")
        }
    }
}
