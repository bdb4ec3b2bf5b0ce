import DiscfgAWS
import DiscfgTestSupport
import Foundation
import NIOConcurrencyHelpers
import Testing

/// An endpoint that refuses the connection, or whose name does not resolve, is tried
/// ``RetryPolicy/connectAttempts`` times and then told in one sentence, with nothing of
/// the request sent; what fails after connecting is retried within the whole policy.
@Suite("AWS JSON client: an endpoint that cannot be connected to")
struct ConnectFailureTests {
    /// Records every backoff the client asked for, and sleeps it.
    final class SleepLog: Sendable {
        let delays = NIOLockedValueBox<[Duration]>([])
    }

    static func client(_ endpoint: URL, log: SleepLog, maxAttempts: Int = 8) -> AWSJSONClient {
        let policy = RetryPolicy(
            maxAttempts: maxAttempts, baseDelay: .milliseconds(25), maxDelay: .seconds(5),
            sleep: { delay in
                log.delays.withLockedValue { $0.append(delay) }
                try await Task.sleep(for: delay)
            }
        )
        return AWSJSONClient(
            configuration: .dynamoDB(region: "eu-central-1", endpoint: endpoint, timeout: .seconds(10), retryPolicy: policy),
            credentialProvider: StaticCredentialProvider(AWSCredentials(accessKeyID: "AKIDTEST", secretAccessKey: "s"))
        )
    }

    @Test("a port nothing listens on: three tries within a second, not the deadline's 30 s; the error names the endpoint, nothing was sent", .timeLimit(.minutes(1)))
    func refused() async throws {
        let endpoint = try #require(URL(string: "http://127.0.0.1:\(try MotoServer.freeLoopbackPort())"))
        let log = SleepLog()
        let client = Self.client(endpoint, log: log)
        let start = ContinuousClock.now
        let error = await #expect(throws: AWSError.self) {
            try await client.send(operation: "GetItem", body: Data("{}".utf8), deadline: .now + .seconds(30))
        }
        let took = ContinuousClock.now - start
        try await client.shutdown()
        print("refused DynamoDB endpoint: AWSJSONClient failed in \(took) after \(log.delays.withLockedValue { $0.count } + 1) tries")
        #expect(took < .seconds(5), "a hang guard: \(took)")
        #expect(error?.code == .network)
        #expect(error?.connectFailure == ConnectFailure(.refused, endpoint: endpoint))
        #expect(error?.mayHaveApplied == false, "a refused connection carried nothing")
        #expect(error?.retries == 2)
        #expect(log.delays.withLockedValue { $0.count } == 2)
        #expect(error?.connectFailure?.sentence(service: "DynamoDB") == "the DynamoDB endpoint \(endpoint.absoluteString) refused the connection")
        let metrics = await client.metrics.metrics(for: "GetItem")
        #expect(metrics.roundTrips == 3 && metrics.failures == 1)
    }

    @Test("a host name that does not resolve: a few tries, then the endpoint named as not found", .timeLimit(.minutes(1)))
    func unresolved() async throws {
        // `.invalid` never resolves (RFC 6761).
        let endpoint = try #require(URL(string: "http://dynamodb.discfg-test.invalid:8000"))
        let log = SleepLog()
        let client = Self.client(endpoint, log: log)
        let error = await #expect(throws: AWSError.self) {
            try await client.send(operation: "GetItem", body: Data("{}".utf8), deadline: .now + .seconds(30))
        }
        try await client.shutdown()
        #expect(error?.connectFailure == ConnectFailure(.unresolved, endpoint: endpoint), "\(String(describing: error))")
        #expect(error?.mayHaveApplied == false)
        #expect(error?.retries == 2)
        #expect(error?.connectFailure?.sentence(service: "DynamoDB") == "the DynamoDB endpoint \(endpoint.absoluteString) was not found: its host name does not resolve")
    }

    @Test("a connection reset mid-request is still retried within the whole policy, and may have been carried out")
    func resetIsRetried() async throws {
        let server = try await LocalHTTPServer(responder: { _, _ in .dropConnection })
        let log = SleepLog()
        let client = Self.client(try #require(URL(string: server.baseURL)), log: log, maxAttempts: 5)
        let error = await #expect(throws: AWSError.self) { try await client.send(operation: "PutItem", body: Data("{}".utf8)) }
        try await client.shutdown()
        await server.stop()
        #expect(error?.code == .network && error?.connectFailure == nil)
        #expect(error?.mayHaveApplied == true)
        #expect(error?.retries == 4)
        #expect(server.requests.count == 5)
    }

    @Test("an endpoint that refuses and then answers: the call goes through on the next try")
    func refusedThenBack() async throws {
        // The port refuses until a server listens on it, after the first try's failure.
        let port = try MotoServer.freeLoopbackPort()
        let endpoint = try #require(URL(string: "http://127.0.0.1:\(port)"))
        let started = NIOLockedValueBox<LocalHTTPServer?>(nil)
        let policy = RetryPolicy(
            maxAttempts: 8, baseDelay: .milliseconds(25), maxDelay: .seconds(5),
            sleep: { _ in
                if started.withLockedValue({ $0 }) == nil {
                    let server = try await LocalHTTPServer(port: port, responder: { _, _ in .json(200, "{}") })
                    started.withLockedValue { $0 = server }
                }
            }
        )
        let client = AWSJSONClient(
            configuration: .dynamoDB(region: "eu-central-1", endpoint: endpoint, timeout: .seconds(10), retryPolicy: policy),
            credentialProvider: StaticCredentialProvider(AWSCredentials(accessKeyID: "AKIDTEST", secretAccessKey: "s"))
        )
        let answer = try await client.send(operation: "GetItem", body: Data("{}".utf8))
        try await client.shutdown()
        #expect(String(decoding: answer, as: UTF8.self) == "{}")
        #expect(await client.metrics.metrics(for: "GetItem").retries == 1)
        await started.withLockedValue { $0 }?.stop()
    }
}
