import DiscfgAWS
import DiscfgCore
import DiscfgSignals
import DiscfgTestSupport
import Foundation
import Testing

/// What a reading of alarms says when CloudWatch's endpoint misbehaves: one sentence
/// naming the alarm, CloudWatch and what went wrong, after the retries every AWS call
/// has, and never a crash or a hang.
@Suite("CloudWatch failures")
struct CloudWatchFailureTests {
    /// A reader of the peer's `/aws/NAME` with `attempts` quick attempts.
    static func reader(_ endpoint: String, attempts: Int = 3, timeout: Duration = .seconds(5)) -> SignalReader {
        let alarms = CloudWatchAlarms(
            configuration: .init(region: "us-east-1", endpoint: URL(string: endpoint), timeout: timeout,
                                 retryPolicy: RetryPolicy(maxAttempts: attempts, baseDelay: .milliseconds(1), maxDelay: .milliseconds(4))),
            credentialProvider: MotoS3.credentials
        )
        return SignalReader(alarms: .client(alarms))
    }

    @Test("403 is permission denied, at once; throttling and 503 are retried, then named with the retries")
    func refusals() async throws {
        try await withServer(try await SignalPeer.start()) { peer in
            let cases: [(String, DiscfgError.Code, String, Int)] = [
                ("forbidden", .permissionDenied,
                 "cannot read CloudWatch alarm \"checkout-5xx\" (and 1 more): CloudWatch refused the request (AccessDenied, HTTP 403): User is not authorized to perform: cloudwatch:DescribeAlarms; check the credentials, their expiry and the cloudwatch:DescribeAlarms permission", 1),
                ("throttled", .throttled,
                 "cannot read CloudWatch alarm \"checkout-5xx\" (and 1 more): CloudWatch throttled DescribeAlarms (Throttling, HTTP 400) after 2 retries", 3),
                ("unavailable", .unavailable,
                 "cannot read CloudWatch alarm \"checkout-5xx\" (and 1 more): CloudWatch failed (ServiceUnavailable, HTTP 503) after 2 retries: Service is unavailable", 3),
            ]
            for (route, code, message, requests) in cases {
                let reader = Self.reader("\(peer.base)/aws/\(route)")
                let error = try await #require(throws: DiscfgError.self) { try await reader.alarmStates(["checkout-5xx", "latency"]) }
                #expect(error.code == code)
                #expect(error.message == message)
                #expect(peer.requests(route) == requests, "\(route)")
                let readings = await reader.read([.alarm("checkout-5xx"), .alarm("latency")])
                #expect(readings[.alarm("checkout-5xx")] == .unknown(message))
                #expect(readings[.alarm("latency")] == .unknown(message))
                await reader.shutdown()
            }
        }
    }

    @Test("a composite alarm is asked for by AlarmTypes and read from its list, and a second page is followed")
    func compositeOnSecondPage() async throws {
        try await withServer(try await SignalPeer.start()) { peer in
            let reader = Self.reader("\(peer.base)/aws/paged")
            let answers = try await reader.alarmStates(["checkout-5xx", "site-down", "gone"])
            #expect(answers == [
                "checkout-5xx": .found(CloudWatchAlarmState(value: .alarm, reason: "Threshold Crossed: 1 datapoint [12.0] was greater than the threshold (5.0).", kind: .metric)),
                "site-down": .found(CloudWatchAlarmState(value: .insufficientData, reason: "Unchecked: Initial alarm creation", kind: .composite)),
                "gone": .missing,
            ])
            #expect(peer.requests("paged") == 2)
            let readings = await reader.read([.alarm("site-down")])
            #expect(readings[.alarm("site-down")] == .unhealthy("the alarm is in INSUFFICIENT_DATA: Unchecked: Initial alarm creation"))
            await reader.shutdown()
        }
    }

    @Test("an answer that is not JSON, and one of 100 MB, are refused in one sentence, the large one unread")
    func unusableAnswers() async throws {
        try await withServer(try await SignalPeer.start()) { peer in
            let garbage = Self.reader("\(peer.base)/aws/garbage")
            let notJSON = try await #require(throws: DiscfgError.self) { try await garbage.alarmStates(["checkout-5xx"]) }
            #expect(notJSON.code == .unavailable)
            #expect(notJSON.message == "cannot read CloudWatch alarm \"checkout-5xx\": the CloudWatch endpoint \(peer.base)/aws/garbage sent no usable answer: the DescribeAlarms answer (29 bytes) is not CloudWatch's JSON")
            #expect(peer.requests("garbage") == 1)
            await garbage.shutdown()

        }
        try await withServer(try HugeBodyPort()) { port in
            let endpoint = "http://127.0.0.1:\(port.port)"
            let huge = Self.reader(endpoint)
            let tooLarge = try await #require(throws: DiscfgError.self) { try await huge.alarmStates(["checkout-5xx"]) }
            #expect(tooLarge.message == "cannot read CloudWatch alarm \"checkout-5xx\": the CloudWatch endpoint \(endpoint) sent no usable answer: the answer is larger than the 4194304 bytes read")
            // Read up to the limit, then the connection closed: the kernel's buffers, grown while it read, and no more.
            #expect(await port.bytesSent() < HugeBodyPort.bodyBytes / 2)
            await huge.shutdown()
        }
    }

    @Test("a connection that closes mid-answer, a closed port and a silent one are unavailable, each within its bound")
    func vanishingEndpoints() async throws {
        try await withServer(try await SignalPeer.start()) { peer in
            let vanish = Self.reader("\(peer.base)/aws/vanish")
            let closedMidAnswer = try await #require(throws: DiscfgError.self) { try await vanish.alarmStates(["checkout-5xx"]) }
            #expect(closedMidAnswer.code == .unavailable)
            #expect(closedMidAnswer.message.hasPrefix("cannot read CloudWatch alarm \"checkout-5xx\": the CloudWatch endpoint \(peer.base)/aws/vanish did not answer ("))
            #expect(closedMidAnswer.message.hasSuffix(") after 2 retries"))
            #expect(peer.requests("vanish") == 3)
            await vanish.shutdown()
        }

        let port = try MotoServer.freeLoopbackPort()
        let refused = Self.reader("http://127.0.0.1:\(port)")
        let refusal = try await #require(throws: DiscfgError.self) { try await refused.alarmStates(["checkout-5xx"]) }
        #expect(refusal.message == "cannot read CloudWatch alarm \"checkout-5xx\": the CloudWatch endpoint http://127.0.0.1:\(port) refused the connection after 2 retries")
        await refused.shutdown()

        try await withServer(try SilentPort()) { silent in
            let reader = Self.reader("http://127.0.0.1:\(silent.port)", attempts: 2, timeout: .milliseconds(300))
            let started = ContinuousClock.now
            let reading = await reader.read([.alarm("checkout-5xx")])[.alarm("checkout-5xx")]
            #expect(ContinuousClock.now - started < .seconds(3))
            #expect(reading == .unknown("cannot read CloudWatch alarm \"checkout-5xx\": the CloudWatch endpoint http://127.0.0.1:\(silent.port) did not answer (timed out) after 1 retry"))
            await reader.shutdown()
        }
    }
}
