import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// A request still running when the invocation deadline nears is answered in time (Lambda
/// freezes the function at its deadline, answer or not), and the answer says truthfully
/// whether a change may have been applied.
@Suite("Lambda: the invocation deadline")
struct DeadlineTests {
    typealias Request = GatewayEvent.Request

    @Test("a change whose transaction outlasts the deadline is answered in time with an unknown outcome; it was in fact applied")
    func commitCutOff() async throws {
        try await withMotoTable { table in
            try await table.createConfig("app")
            try await Self.withSlowFunction(table, delaying: ["TransactWriteItems"]) { lambda in
                let message = try await Self.cutOff(Request("PUT", "/v1/app/keys/slow", text: "v"), lambda)
                #expect(message?.contains("may or may not have been applied") == true, "\(message ?? "")")
                // The transaction went on without its caller: "may" was the truth.
                let value = try await eventually("the cut-off transaction is applied", timeout: .seconds(15), interval: .milliseconds(250)) {
                    let got = try await table.cli.run("get", "app", "slow")
                    return got.status == 0 ? got.stdout.trimmingCharacters(in: .newlines) : nil
                }
                #expect(value == "v")
            }
        }
    }

    @Test("a read that outlasts the deadline is answered in time, saying nothing was changed")
    func readCutOff() async throws {
        try await withMotoTable { table in
            try await table.createConfig("app")
            _ = try await table.cli.json("set", "app", "k", "v")
            try await Self.withSlowFunction(table, delaying: ["GetItem", "Query"]) { lambda in
                let message = try await Self.cutOff(Request("GET", "/v1/app/keys/k"), lambda)
                #expect(message?.contains("nothing was changed") == true, "\(message ?? "")")
            }
        }
    }

    /// Runs `body` with the function on `table`, its DynamoDB calls named in `operations`
    /// arriving 4 s late (through a fault proxy).
    static func withSlowFunction(_ table: MotoTable, delaying operations: Set<String>, _ body: (RunningLambda) async throws -> Void) async throws {
        try await withServer(try await FaultProxy.start(upstream: table.moto.endpoint, seed: 1, rates: [.delay: 1], delay: .seconds(4), only: operations)) { proxy in
            let store = "dynamodb://us-east-1/\(table.name)?endpoint=\(proxy.endpoint.absoluteString)"
            try await withLambda(table, environment: ["DISCFG_STORE": store], body)
        }
    }

    /// Sends `request` with a 2 s deadline; expects a 503 `timeout` answer before the
    /// deadline and returns its message.
    static func cutOff(_ request: Request, _ lambda: RunningLambda) async throws -> String? {
        let invocation = try await lambda.invoke(GatewayEvent.httpAPI(request), deadline: .seconds(2))
        let took = invocation.finishedAt - invocation.deliveredAt
        #expect(took < .seconds(2), "answered before the 2 s deadline, took \(took)")
        guard case .response(let data) = invocation.result else {
            Issue.record("expected a response, got \(invocation.result)")
            return nil
        }
        let answer = try GatewayResponse(data)
        #expect(answer.statusCode == 503, "\(answer.raw)")
        let error = try answer.envelope().error
        #expect(error?.field == "timeout")
        return error?.message
    }
}
