import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// Health reports reach the Lambda function's monitor through the table's stream: an agent
/// reports to the function's API, the report's write arrives on the stream, and the stream
/// handler checks that config's deployments at once instead of at the next scheduled event.
@Suite("Lambda: health reports on the stream")
struct StreamHealthTests {
    typealias Request = GatewayEvent.Request

    /// The stream records of health reports for config `config` (pk `CONFIG#r`).
    static func healthRecords(_ records: [[String: Any]], config: String) -> [[String: Any]] {
        records.filter { record in
            let keys = (record["dynamodb"] as? [String: Any])?["Keys"] as? [String: Any]
            return (keys?["pk"] as? [String: Any])?["S"] as? String == "\(config)#r"
        }
    }

    @Test("a report of errors on the candidate, arriving on the stream, rolls the deployment back by system:monitor; the app-facing route answers 202")
    func rollsBackOnTheStream() async throws {
        try await withMotoTable { table in
            let services = MotoServices(endpoint: table.moto.endpoint)
            try await ScheduledMonitorTests.prepare(table)
            try await ScheduledMonitorTests.start(table, ["--strategy", "linear", "--step", "50", "--interval", "1h", "--rollback-on", "health"])
            let status = try await table.cli.run("deploy", "status", "app", "-f", "json")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
            let id = try #require((object["deployment"] as? [String: Any])?["id"] as? String)
            try await withLambda(table) { lambda in
                let observed = #"{"version": "stable", "requests": 10, "errors": 0}"#
                let (posted, _) = try await lambda.request(GatewayEvent.restAPI(Request("POST", "/v1/app/health", headers: [("content-type", "application/json")], text: observed)))
                #expect(posted.statusCode == 202, "\(posted.raw)")

                let report = #"{"reporter": "agent-1#0000beef", "stable": {"requests": 1000, "errors": 2, "readers": 40}, "candidate": {"requests": 1000, "errors": 60, "readers": 38}, "at": \#(Int64(Date().timeIntervalSince1970 * 1000))}"#
                let (put, _) = try await lambda.request(GatewayEvent.restAPI(Request("PUT", "/v1/app/deployments/\(id)/health", headers: [("content-type", "application/json")], text: report)))
                #expect(put.statusCode == 200, "\(put.raw)")
                #expect(try await ScheduledMonitorTests.transitions(table).isEmpty, "nothing is decided before the stream brings the report")

                let records = Self.healthRecords(try await services.streamRecords(table: table.name), config: "app")
                #expect(records.count >= 2, "the function's own report and the agent's are on the stream: \(records.count)")
                let answer = try await lambda.respond(MotoServices.streamEvent(records))
                #expect((answer["batchItemFailures"] as? [Any])?.isEmpty == true, "\(answer)\n\(lambda.process.output.logs)")
            }
            let transitions = try await ScheduledMonitorTests.transitions(table)
            #expect(transitions.first?.state == "ROLLING_BACK" && transitions.first?.by == "system:monitor", "\(transitions)")
            #expect(transitions.first?.reason.contains("signal health") == true, "\(transitions)")
            #expect(try await table.cli.json("get", "app", "/db/host").item?.value == "db1")
        }
    }
}
