import DiscfgCore
import Foundation
import Testing

/// The scheduled event sweeps expired keys of every config into `expire` events (and makes a
/// deployment monitor pass: ScheduledMonitorTests).
@Suite("Lambda: scheduled sweep")
struct ScheduledSweepTests {
    @Test("a scheduled event expires keys past their TTL in every config; history shows the expire event and the key is gone")
    func sweep() async throws {
        try await withMotoTable { table in
            try await table.createConfig("app")
            try await table.createConfig("jobs")
            // Keys with a TTL last: any later change to their config would expire them itself,
            // leaving nothing for the sweep.
            _ = try await table.cli.json("set", "app", "keep", "forever")
            let session = try await table.cli.json("set", "app", "session/token", "abc", "--ttl", "1")
            let lock = try await table.cli.json("set", "jobs", "lock", "worker-1", "--ttl", "1")
            let setRevision = try #require(session.revision)
            let expiries = [session, lock].compactMap { $0.item?.expiresAt }
            #expect(expiries.count == 2, "the CLI reports when the keys expire")
            let latest = try #require(expiries.max())

            try await withLambda(table) { lambda in
                // Wait until both keys are past their expiry time (a known instant, not a guess).
                let wait = latest.timeIntervalSinceNow + 0.2
                if wait > 0 { try await Task.sleep(for: .milliseconds(Int(wait * 1000))) }

                let answer = try await lambda.respond(GatewayEvent.scheduled())
                #expect(answer["expired"] as? Int == 2, "\(answer)\n\(lambda.process.output.logs)")
                #expect(Set(answer.keys) == ["expired", "deployments"], "the answer is {\"expired\": N, \"deployments\": {…}}: \(answer)")

                let again = try await lambda.respond(GatewayEvent.scheduled())
                #expect(again["expired"] as? Int == 0, "nothing left to expire: \(again)")
            }

            let history = try await table.cli.json("history", "app", "session/token")
            let events = history.events ?? []
            #expect(events.first?.type == .expire, "newest first: \(events.map(\.type))")
            #expect(events.first.map { $0.revision > setRevision } == true, "the expire event is at a new revision")
            #expect(events.first?.prevItem?.value == "abc")
            #expect(try await table.cli.json("history", "jobs", "lock").events?.first?.type == .expire)

            let gone = try await table.cli.run("get", "app", "session/token")
            #expect(gone.status != 0)
            #expect(gone.stderr.contains("not found"), "\(gone.stderr)")
            #expect(try await table.cli.json("get", "app", "keep").item?.value == "forever", "keys without a TTL stay")
        }
    }
}
