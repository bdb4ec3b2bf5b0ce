import DiscfgAWS
import DiscfgConformance
import DiscfgCore
@testable import DiscfgDynamoDB
import DiscfgTestSupport
import Foundation
import Testing

/// The DynamoDB store behind a proxy that throttles, fails, drops connections after
/// forwarding and delays calls to moto (run one request at a time, as DynamoDB isolates
/// transactions).
@Suite("DynamoDB: injected faults")
struct FaultInjectionTests {
    static let writers = 4
    static let incrementsPerWriter = 20

    /// Every kind of fault, about a quarter of all calls together.
    static let rates: [FaultProxy.Fault: Double] = [
        .throughputExceeded: 0.04, .throttling: 0.03, .serverError: 0.03,
        .serverErrorAfterApplying: 0.05, .dropAfterSending: 0.06, .delay: 0.04,
    ]

    /// A store on `table` whose calls go through `endpoint`, with a retry budget that
    /// outlasts a run of faults.
    static func store(table: String, endpoint: URL) async throws -> DynamoDBStore {
        let shared = try await MotoDynamoDB.shared.client()
        let client = AWSJSONClient(
            configuration: .dynamoDB(
                region: "us-east-1", endpoint: endpoint,
                retryPolicy: RetryPolicy(maxAttempts: 12, baseDelay: .milliseconds(5), maxDelay: .milliseconds(100))
            ),
            credentialProvider: shared.credentialProvider
        )
        MotoClientsKeepAlive.keep(client)
        return DynamoDBStore(client: client, configuration: DynamoDBStore.Configuration(table: table, pollInterval: .milliseconds(100)))
    }

    @Test("concurrent compare-and-swap counters through the faults lose nothing and apply nothing twice", .timeLimit(.minutes(5)))
    func countersSurviveFaults() async throws {
        let direct = try await makeStore()
        let config = try await direct.makeConfig("faults")
        let key = try Key("/counter")
        let moto = try await SharedMotoServer.shared.server()
        try await withServer(try await FaultProxy.start(upstream: moto.endpoint, seed: 20_261_122, rates: Self.rates)) { proxy in

            let conflicts = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<Self.writers {
                    // A store (and HTTP client) per writer, as separate processes would have.
                    let store = try await Self.store(table: direct.configuration.table, endpoint: proxy.endpoint)
                    group.addTask { try await CompareAndSwapCounter.increment(key, in: config, of: store, times: Self.incrementsPerWriter) }
                }
                return try await group.reduce(0, +)
            }

            let total = Self.writers * Self.incrementsPerWriter
            let item = try #require(try await direct.get(key, in: config))
            #expect(item.text == String(total), "every acknowledged increment is stored once")
            #expect(item.version == UInt64(total))
            #expect(try await direct.revision(of: config) == Revision(UInt64(total)))
            let history = try await direct.history(of: key, in: config, HistoryQuery(limit: Limits.maxPageSize)).events
            #expect(history.map(\.item?.text) == (1...total).reversed().map { Optional(String($0)) })

            let calls = try proxy.calls()
            var byKind: [FaultProxy.Fault: Int] = [:]
            for call in calls { byKind[call.fault, default: 0] += 1 }
            // Every fault drawn at a rate (a black hole is the proxy's mode, set by a test).
            for kind in FaultProxy.Fault.allCases where kind != .none && kind != .blackHole {
                #expect(byKind[kind, default: 0] > 0, "no \(kind) was injected in \(calls.count) calls")
            }
            // A token names one transaction: every call carrying it sent the same body.
            let transactions = Dictionary(grouping: calls.filter { $0.operation == "TransactWriteItems" }) { $0.token ?? "" }
            #expect(transactions[""] == nil, "every transaction carries a ClientRequestToken")
            for (token, sent) in transactions {
                #expect(Set(sent.map(\.bodyHash)).count == 1, "token \(token) was reused for a different transaction")
            }
            // A transaction whose answer was lost is retried with the same token.
            let lostAnswers = calls.filter { $0.operation == "TransactWriteItems" && [.dropAfterSending, .serverErrorAfterApplying].contains($0.fault) }
            #expect(!lostAnswers.isEmpty)
            for lost in lostAnswers {
                let retried = transactions[lost.token ?? ""]?.contains { $0.number > lost.number } ?? false
                #expect(retried, "transaction \(lost.token ?? "?") lost its answer (\(lost.fault)) and was not retried with its token")
            }
            // moto does not honour the token: a retry of a transaction that had committed fails
            // its conditions there, and the store recognised its own commit by the token it
            // left on the first event.
            let appliedAndRetried = lostAnswers.filter { $0.upstreamStatus == 200 }.count
            let retriesRefusedByMoto = calls.filter { $0.operation == "TransactWriteItems" && $0.upstreamError == "TransactionCanceledException" }.count
            let summary = byKind.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")
            print("DynamoDB faults: \(calls.count) calls (\(summary)); \(total) increments acknowledged, counter at \(item.text ?? "?"), \(conflicts) lost races; \(appliedAndRetried) transactions committed without an answer, \(retriesRefusedByMoto) transactions cancelled by moto")
        }
    }

    @Test("the retry of a committed transaction is recognised by its token even where the server does not honour it")
    func committedTransactionRecognised() async throws {
        let direct = try await makeStore()
        let config = try await direct.makeConfig("landed")
        let moto = try await SharedMotoServer.shared.server()
        // A third of the answers are lost after moto carried the call out. One writer, so
        // the calls, and with the seed the faults, are the same on every run.
        try await withServer(try await FaultProxy.start(upstream: moto.endpoint, seed: 1, rates: [.dropAfterSending: 0.3])) { proxy in
            let store = try await Self.store(table: direct.configuration.table, endpoint: proxy.endpoint)
            for index in 1...10 {
                let event = try await store.set(Key("/k"), to: Data("\(index)".utf8), in: config, options: SetOptions(conditions: [.version(UInt64(index - 1))]))
                #expect(event.revision == Revision(UInt64(index)))
            }
            #expect(try await direct.get(Key("/k"), in: config)?.text == "10")
            #expect(try await direct.revision(of: config) == Revision(10), "no change was applied twice")
            let dropped = try proxy.calls().filter { $0.operation == "TransactWriteItems" && $0.fault == .dropAfterSending && $0.upstreamStatus == 200 }
            #expect(!dropped.isEmpty)
        }
    }

    @Test("a config whose creation landed but whose answer was lost is created, not refused as already existing")
    func createdConfigRecognised() async throws {
        let direct = try await makeStore()
        let moto = try await SharedMotoServer.shared.server()
        try await withServer(try await FaultProxy.start(upstream: moto.endpoint, seed: 3, rates: [.dropAfterSending: 0.3])) { proxy in
            let store = try await Self.store(table: direct.configuration.table, endpoint: proxy.endpoint)
            for index in 1...12 {
                _ = try await store.createConfig(try ConfigName("c\(index)"), settings: ConfigSettings())
            }
            let dropped = try proxy.calls().filter { $0.operation == "TransactWriteItems" && $0.fault == .dropAfterSending && $0.upstreamStatus == 200 }
            #expect(!dropped.isEmpty, "some creation landed with its answer lost")
            // A config that truly exists is still refused.
            let refused = await #expect(throws: DiscfgError.self) { try await store.createConfig(try ConfigName("c1"), settings: ConfigSettings()) }
            #expect(refused?.code == .configExists)
        }
        #expect(try await direct.listConfigs().map(\.name.rawValue).sorted() == (1...12).map { "c\($0)" }.sorted())
    }
}
