import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// The built binary on a DynamoDB table behind a fault-injecting proxy (see
/// ``FaultProxy``): several processes counting with compare-and-swap, and the one line a
/// person reads when the faults win.
@Suite("CLI: DynamoDB behind injected faults")
struct DynamoDBFaultTests {
    /// The runner, the store URL straight to moto, and moto's endpoint.
    static func setUp() async throws -> (CLIRunner, table: String, moto: URL) {
        let (cli, store) = try await CLIRunner.onDynamoDB()
        let moto = try await SharedMotoServer.shared.server().endpoint
        let table = String(store.split(separator: "/")[2].split(separator: "?")[0])
        #expect(try await cli.run("create", "faults", "--store", store).status == 0)
        #expect(try await cli.run("set", "faults", "counter", "0", "--store", store).status == 0)
        return (cli, table, moto)
    }

    static func store(_ table: String, _ endpoint: URL) -> String {
        "dynamodb://us-east-1/\(table)?endpoint=\(endpoint.absoluteString)"
    }

    @Test("processes counting with compare-and-swap through throttling, 500s, lost answers and delays lose nothing and apply nothing twice", .timeLimit(.minutes(5)))
    func crossProcessCounters() async throws {
        let (cli, table, moto) = try await Self.setUp()
        defer { cli.cleanUp() }
        let proxy = try await FaultProxy.start(upstream: moto, seed: 9, rates: [
            .throughputExceeded: 0.04, .throttling: 0.03, .serverError: 0.03,
            .serverErrorAfterApplying: 0.05, .dropAfterSending: 0.06, .delay: 0.04,
        ])
        try await withServer(proxy) { proxy in
            let processes = 3
            let increments = 10
            // The value at version v is v - 1; exit 4 is a lost race, anything else but 0 a failure.
            let script = """
                for i in $(seq 1 \(increments)); do
                  while true; do
                    v=$("$DISCFG" get faults counter --store "$STORE") || { echo "get failed" >&2; exit 1; }
                    "$DISCFG" set faults counter $((v + 1)) --if-version $((v + 1)) --store "$STORE" -f silent
                    status=$?
                    if [ $status -eq 0 ]; then break; fi
                    if [ $status -ne 4 ]; then echo "set failed with $status" >&2; exit 1; fi
                  done
                done
                """
            var loops: [ChildProcess] = []
            for _ in 0..<processes {
                loops.append(try cli.launchShell(script, environment: ["STORE": Self.store(table, proxy.endpoint)], stdout: .discard))
            }
            for loop in loops {
                let finished = try await loop.wait(timeout: .seconds(240))
                #expect(finished.status == 0, "a counting process failed: \(finished.stderr)")
            }
            let got = try await cli.run("get", "faults", "counter", "-f", "json", "--store", Self.store(table, moto)).envelope()
            #expect(got.item?.value == String(processes * increments))
            #expect(got.item?.version == UInt64(processes * increments + 1))
            let calls = try proxy.calls()
            var byKind: [FaultProxy.Fault: Int] = [:]
            for call in calls { byKind[call.fault, default: 0] += 1 }
            let lost = calls.filter { $0.operation == "TransactWriteItems" && [.dropAfterSending, .serverErrorAfterApplying].contains($0.fault) }
            for call in lost {
                #expect(calls.contains { $0.number > call.number && $0.token == call.token }, "a lost transaction answer was retried with the same token")
            }
            let summary = byKind.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")
            print("CLI DynamoDB faults: \(processes) processes × \(increments) increments, all stored once; \(calls.count) calls (\(summary))")
        }
    }

    @Test("every answer to the transaction lost: set still reports success and applies once")
    func lostTransactionAnswers() async throws {
        let (cli, table, moto) = try await Self.setUp()
        defer { cli.cleanUp() }
        // Only TransactWriteItems loses its answers: moto applies the first attempt and
        // refuses the retries (it does not honour the token), whose answers are lost too.
        try await withServer(try await FaultProxy.start(upstream: moto, seed: 1, rates: [.dropAfterSending: 1], only: ["TransactWriteItems"])) { onlyTransactions in
            let set = try await cli.run("set", "faults", "counter", "1", "--if-version", "1", "--store", Self.store(table, onlyTransactions.endpoint))
            #expect(set.status == 0, "\(set.stderr)")
            let got = try await cli.run("get", "faults", "counter", "-f", "json", "--store", Self.store(table, moto)).envelope()
            #expect(got.item?.value == "1")
            #expect(got.item?.version == 2, "applied once")
        }
    }

    @Test("faults that outlast the retries end in one clear line; a write with no answer says its outcome is unknown and how to check")
    func clearErrors() async throws {
        let (cli, table, moto) = try await Self.setUp()
        defer { cli.cleanUp() }
        let cases: [(FaultProxy.Fault, [String])] = [
            (.throughputExceeded, ["throttled", "ProvisionedThroughputExceededException", "after 7 retries", "hint:"]),
            (.throttling, ["throttled", "ThrottlingException", "after 7 retries"]),
            (.serverError, ["service unavailable", "HTTP 500", "after 7 retries"]),
            (.dropAfterSending, ["endpoint unreachable", "the connection closed before the response arrived"]),
        ]
        for (fault, words) in cases {
            try await withServer(try await FaultProxy.start(upstream: moto, seed: 3, rates: [fault: 1])) { proxy in
                let got = try await cli.run("get", "faults", "counter", "--store", Self.store(table, proxy.endpoint))
                #expect(got.status == 1)
                Self.expectOneClearLine(got.stderr, containing: words)
            }
        }

        // The first transaction is applied, then the network goes: the answer and every
        // later call are lost, so discfg cannot tell whether the change was made.
        try await withServer(try await FaultProxy.start(upstream: moto, seed: 4, rates: [:], blackoutAfter: "TransactWriteItems")) { blackout in
            let set = try await cli.run("set", "faults", "counter", "5", "--store", Self.store(table, blackout.endpoint))
            #expect(set.status == 1)
            Self.expectOneClearLine(set.stderr, containing: ["may or may not have been applied", "modRevision of 2", "counter"])
            let got = try await cli.run("get", "faults", "counter", "-f", "json", "--store", Self.store(table, moto)).envelope()
            #expect(got.item?.modRevision == 2, "here it was applied, as the message allowed")
        }
    }

    static func expectOneClearLine(_ stderr: String, containing words: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        let lines = stderr.split(separator: "\n")
        #expect(lines.count == 1, "one line, got: \(stderr)", sourceLocation: sourceLocation)
        for word in words {
            #expect(stderr.contains(word), "\"\(word)\" missing from: \(stderr)", sourceLocation: sourceLocation)
        }
        for dump in ["HTTPClientError", "NIO", "Error Domain", "Optional(", "errno"] {
            #expect(!stderr.contains(dump), "a library dump (\(dump)) in: \(stderr)", sourceLocation: sourceLocation)
        }
    }
}
