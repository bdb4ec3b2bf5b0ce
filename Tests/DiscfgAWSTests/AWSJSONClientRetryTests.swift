import DiscfgAWS
import Foundation
import NIOConcurrencyHelpers
import Testing

/// Retry, backoff and error classification against a scripted local server.
@Suite("AWS JSON client retries")
struct AWSJSONClientRetryTests {
    static let okBody = #"{"ConsumedCapacity": [{"TableName": "a", "CapacityUnits": 1.5, "WriteCapacityUnits": 1.5}, {"TableName": "b", "CapacityUnits": 0.5, "ReadCapacityUnits": 0.5}]}"#

    static func awsError(_ status: Int, _ code: String, _ message: String = "scripted failure") -> LocalHTTPServer.Reply {
        .json(status, ##"{"__type": "com.amazonaws.dynamodb.v20120810#\##(code)", "message": "\##(message)"}"##,
              headers: [("x-amzn-RequestId", "REQ123")])
    }

    /// Records every backoff the client asked for, instead of sleeping.
    final class SleepLog: Sendable {
        let delays = NIOLockedValueBox<[Duration]>([])
    }

    func run(
        maxAttempts: Int = 8,
        credentials: any CredentialProvider = StaticCredentialProvider(AWSCredentials(accessKeyID: "AKIDRETRY", secretAccessKey: "s", sessionToken: "tok")),
        script: @escaping LocalHTTPServer.Responder,
        _ body: (AWSJSONClient, LocalHTTPServer, SleepLog) async throws -> Void
    ) async throws {
        let server = try await LocalHTTPServer(responder: script)
        let log = SleepLog()
        let policy = RetryPolicy(
            maxAttempts: maxAttempts,
            baseDelay: .milliseconds(10),
            maxDelay: .milliseconds(50),
            sleep: { delay in log.delays.withLockedValue { $0.append(delay) } },
            random: { 1.0 }
        )
        let client = AWSJSONClient(
            configuration: .dynamoDB(region: "eu-central-1", endpoint: URL(string: server.baseURL)!, timeout: .seconds(5), retryPolicy: policy),
            credentialProvider: credentials
        )
        do {
            try await body(client, server, log)
        } catch {
            try await client.shutdown()
            await server.stop()
            throw error
        }
        try await client.shutdown()
        await server.stop()
    }

    @Test func serverErrorsAreRetriedUntilSuccess() async throws {
        try await run(script: { _, index in index < 3 ? .text(500, "oops") : .json(200, Self.okBody) }) { client, server, log in
            _ = try await client.send(operation: "PutItem", body: Data("{}".utf8))
            #expect(server.requests.count == 4)
            let metrics = await client.metrics.metrics(for: "PutItem")
            #expect(metrics.roundTrips == 4)
            #expect(metrics.retries == 3)
            #expect(metrics.capacityUnits == 2.0)
            #expect(metrics.writeCapacityUnits == 1.5)
            #expect(metrics.readCapacityUnits == 0.5)
            // With the jitter pinned to its maximum the waits are the exponential caps.
            #expect(log.delays.withLockedValue { $0 } == [.milliseconds(10), .milliseconds(20), .milliseconds(40)])
        }
    }

    /// Hands out a new access key on every call, and counts the calls.
    struct IssuingProvider: CredentialProvider {
        let issued = NIOLockedValueBox(0)
        var name: String { "issuing" }
        func credentials() async throws -> AWSCredentials {
            let number = issued.withLockedValue { $0 += 1; return $0 }
            return AWSCredentials(accessKeyID: "AKIDISSUED\(number)", secretAccessKey: "s", sessionToken: "tok")
        }
    }

    @Test("expired credentials from a caching chain are fetched again once, and the call goes through")
    func expiredTokenRefreshesTheChain() async throws {
        let provider = IssuingProvider()
        let chain = CredentialChain(providers: [provider])
        try await run(credentials: chain, script: { _, index in
            index == 0 ? Self.awsError(400, "ExpiredTokenException", "The security token included in the request is expired") : .json(200, "{}")
        }) { client, server, _ in
            _ = try await client.send(operation: "GetItem", body: Data("{}".utf8))
            let keys = server.requests.enumerated().map { $1.header("authorization")?.contains("Credential=AKIDISSUED\($0 + 1)/") }
            #expect(server.requests.count == 2)
            #expect(provider.issued.withLockedValue { $0 } == 2)
            #expect(keys == [true, true], "the retry is signed with the fresh key")
        }
    }

    @Test("expired credentials that nothing caches are not retried: the error says so at once")
    func expiredTokenWithoutCacheFails() async throws {
        try await run(script: { _, _ in Self.awsError(400, "ExpiredTokenException") }) { client, server, _ in
            let error = await #expect(throws: AWSError.self) { _ = try await client.send(operation: "GetItem", body: Data("{}".utf8)) }
            #expect(error?.awsCode == "ExpiredTokenException")
            #expect(server.requests.count == 1)
        }
    }

    @Test func http429AndThrottlingCodesAreRetried() async throws {
        try await run(script: { _, index in
            switch index {
            case 0: return .text(429, "slow down")
            case 1: return Self.awsError(400, "ThrottlingException")
            case 2: return Self.awsError(400, "ProvisionedThroughputExceededException")
            case 3: return Self.awsError(400, "RequestLimitExceeded")
            default: return .json(200, "{}")
            }
        }) { client, server, _ in
            _ = try await client.send(operation: "GetItem", body: Data("{}".utf8))
            #expect(server.requests.count == 5)
            #expect(await client.metrics.metrics(for: "GetItem").retries == 4)
        }
    }

    @Test func throttlingBeyondTheBudgetIsATypedError() async throws {
        try await run(maxAttempts: 4, script: { _, _ in Self.awsError(400, "ProvisionedThroughputExceededException") }) { client, server, log in
            let error = await #expect(throws: AWSError.self) { try await client.send(operation: "Query", body: Data("{}".utf8)) }
            #expect(error?.code == .throttling)
            #expect(error?.retries == 3)
            #expect(error?.requestID == "REQ123")
            #expect(error?.description.contains("after 3 retries") == true)
            #expect(server.requests.count == 4)
            // Four attempts mean three waits.
            #expect(log.delays.withLockedValue { $0 } == [.milliseconds(10), .milliseconds(20), .milliseconds(40)])
            let metrics = await client.metrics.metrics(for: "Query")
            #expect(metrics.failures == 1 && metrics.roundTrips == 4)
        }
    }

    @Test func validationAndConditionalErrorsAreNotRetried() async throws {
        try await run(script: { request, _ in
            request.header("X-Amz-Target") == "DynamoDB_20120810.PutItem"
                ? Self.awsError(400, "ConditionalCheckFailedException", "The conditional request failed")
                : Self.awsError(400, "ValidationException", "One or more parameter values were invalid")
        }) { client, server, log in
            let conditional = await #expect(throws: AWSError.self) { try await client.send(operation: "PutItem", body: Data("{}".utf8)) }
            #expect(conditional?.code == .conditionalCheckFailed)
            let validation = await #expect(throws: AWSError.self) { try await client.send(operation: "UpdateItem", body: Data("{}".utf8)) }
            #expect(validation?.code == .validation)
            #expect(validation?.retries == 0)
            #expect(server.requests.count == 2)
            #expect(log.delays.withLockedValue { $0 }.isEmpty)
        }
    }

    @Test func authErrorsAreTypedAndNotRetried() async throws {
        try await run(script: { _, _ in Self.awsError(400, "UnrecognizedClientException", "The security token included in the request is invalid.") }) { client, server, _ in
            let error = await #expect(throws: AWSError.self) { try await client.send(operation: "GetItem", body: Data("{}".utf8)) }
            #expect(error?.code == .authentication)
            #expect(server.requests.count == 1)
        }
    }

    @Test func droppedConnectionsAreRetried() async throws {
        try await run(script: { _, index in index < 2 ? .dropConnection : .json(200, "{}") }) { client, server, _ in
            _ = try await client.send(operation: "GetItem", body: Data("{}".utf8))
            #expect(server.requests.count == 3)
            #expect(await client.metrics.metrics(for: "GetItem").retries == 2)
        }
    }

    @Test func requestsAreSignedAndShapedForJSON10() async throws {
        try await run(script: { _, _ in .json(200, "{}") }) { client, server, _ in
            _ = try await client.send(operation: "DescribeTable", body: Data(#"{"TableName":"t"}"#.utf8))
            let request = try #require(server.requests.first)
            #expect(request.method == "POST")
            #expect(request.uri == "/")
            #expect(request.header("X-Amz-Target") == "DynamoDB_20120810.DescribeTable")
            #expect(request.header("Content-Type") == "application/x-amz-json-1.0")
            #expect(request.header("Host") == "127.0.0.1:\(server.port)")
            #expect(request.header("X-Amz-Security-Token") == "tok")
            let authorization = try #require(request.header("Authorization"))
            #expect(authorization.hasPrefix("AWS4-HMAC-SHA256 Credential=AKIDRETRY/"))
            #expect(authorization.contains("/eu-central-1/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token;x-amz-target, Signature="))
            #expect(String(decoding: request.body, as: UTF8.self) == #"{"TableName":"t"}"#)
        }
    }
}

@Suite("Retry policy, errors and capacity parsing")
struct RetryPolicyAndErrorTests {
    @Test func fullJitterStaysWithinTheCappedWindow() {
        let policy = RetryPolicy(baseDelay: .milliseconds(100), maxDelay: .seconds(1))
        for retry in 0..<12 {
            let cap = min(Duration.milliseconds(100) * (1 << retry), .seconds(1))
            #expect(policy.backoffCap(forRetry: retry) == cap)
            for _ in 0..<20 {
                let delay = policy.delay(forRetry: retry)
                #expect(delay >= .zero && delay <= cap)
            }
        }
        #expect(RetryPolicy(random: { 0 }).delay(forRetry: 5) == .zero)
    }

    @Test func errorCodesLoseTheirNamespace() {
        #expect(AWSError.from(status: 400, body: Data(##"{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException","message":"m"}"##.utf8), errorTypeHeader: nil).awsCode == "ResourceNotFoundException")
        let fromHeader = AWSError.from(status: 400, body: Data(), errorTypeHeader: "ExpiredTokenException:http://internal.amazon.com/coral/com.amazon.coral.service/")
        #expect(fromHeader.awsCode == "ExpiredTokenException")
        #expect(fromHeader.code == .authentication)
        let unknown = AWSError.from(status: 503, body: Data("<html>busy</html>".utf8), errorTypeHeader: nil)
        #expect(unknown.code == .serviceUnavailable)
        #expect(unknown.awsCode == "HTTP503")
        #expect(unknown.message == "<html>busy</html>")
    }

    @Test func cancellationReasonsFallBackToTheMessage() {
        let error = AWSError.from(
            status: 400,
            body: Data(##"{"__type":"#TransactionCanceledException","Message":"Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed, TransactionConflict]"}"##.utf8),
            errorTypeHeader: nil
        )
        #expect(error.code == .transactionCanceled)
        #expect(error.cancellationReasons.map(\.code) == ["None", "ConditionalCheckFailed", "TransactionConflict"])
    }

    @Test func consumedCapacityObjectOrArray() {
        let single = ConsumedCapacity.parse(responseBody: Data(#"{"ConsumedCapacity":{"TableName":"t","CapacityUnits":0.5}}"#.utf8))
        #expect(single == [ConsumedCapacity(tableName: "t", capacityUnits: 0.5)])
        let many = ConsumedCapacity.parse(responseBody: Data(#"{"ConsumedCapacity":[{"CapacityUnits":1},{"CapacityUnits":2,"WriteCapacityUnits":2}]}"#.utf8))
        #expect(many.map(\.capacityUnits) == [1, 2])
        #expect(ConsumedCapacity.parse(responseBody: Data(#"{"Item":{}}"#.utf8)).isEmpty)
    }

    @Test func defaultEndpointFollowsRegion() {
        #expect(AWSJSONClient.Configuration.dynamoDB(region: "eu-west-1").resolvedEndpoint.absoluteString == "https://dynamodb.eu-west-1.amazonaws.com")
        #expect(AWSJSONClient.Configuration.dynamoDB(region: "cn-north-1").resolvedEndpoint.absoluteString == "https://dynamodb.cn-north-1.amazonaws.com.cn")
    }
}
