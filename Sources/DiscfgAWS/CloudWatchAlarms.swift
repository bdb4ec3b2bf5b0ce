import Foundation

/// Reads the state of named Amazon CloudWatch alarms (`DescribeAlarms`), metric and
/// composite alike: what a staged deployment watches to roll itself back.
///
/// It speaks CloudWatch's AWS JSON 1.0 protocol (`POST /`, `X-Amz-Target:
/// GraniteServiceVersion20100801.DescribeAlarms`, `Content-Type:
/// application/x-amz-json-1.0`) through ``AWSJSONClient``, the client DynamoDB and KMS
/// calls go through, so signing, retries, deadlines, the bound on an answer's size and
/// the reading of error bodies are the ones every other AWS call of discfg has, and no
/// XML parser reads what an endpoint sends. CloudWatch has always served the query
/// protocol (`Action=DescribeAlarms&Version=2010-08-01`, XML answers); its published
/// service model (`monitoring` 2010-08-01, `awsQueryCompatible`) now lists
/// `smithy-rpc-v2-cbor`, `json` and `query` as the protocols the service serves, and its
/// JSON errors carry the query error names (`ResourceNotFound`, `Throttling`). moto 5.2.1
/// serves both JSON and query for CloudWatch, picked by the request's `Content-Type`, so
/// the tests run this very protocol against it.
///
/// `DescribeAlarms` takes up to 100 names a call; more are asked for in calls of 100. It
/// returns only metric alarms unless `AlarmTypes` names composite ones too, so both are
/// named. A name CloudWatch does not answer for is ``Answer/missing``, not an error.
///
/// ```swift
/// let alarms = CloudWatchAlarms(configuration: .init(region: "eu-west-1"), credentialProvider: chain)
/// let answers = try await alarms.states(of: ["checkout-5xx"])
/// // ["checkout-5xx": .found(CloudWatchAlarmState(value: .alarm, reason: "Threshold Crossed: …", kind: .metric))]
/// ```
public final class CloudWatchAlarms: Sendable {
    /// Where and how to talk to CloudWatch.
    public struct Configuration: Sendable {
        /// The signing region.
        public var region: String
        /// A custom endpoint (`http://127.0.0.1:5000`); nil for AWS's
        /// (`https://monitoring.REGION.amazonaws.com`).
        public var endpoint: URL?
        /// Deadline for each attempt, its answer's body included.
        public var timeout: Duration
        /// Retries of throttling, 5xx and unreachable endpoints.
        public var retryPolicy: RetryPolicy
        /// The largest answer read: 100 alarms' definitions take tens of kilobytes, so a
        /// larger body is a misbehaving endpoint, refused unread past this.
        public var maxResponseBytes: Int

        /// Creates a configuration; the retries are the AWS clients' defaults.
        public init(
            region: String,
            endpoint: URL? = nil,
            timeout: Duration = .seconds(10),
            retryPolicy: RetryPolicy = RetryPolicy(),
            maxResponseBytes: Int = 4 << 20
        ) {
            self.region = region
            self.endpoint = endpoint
            self.timeout = timeout
            self.retryPolicy = retryPolicy
            self.maxResponseBytes = maxResponseBytes
        }

        /// The endpoint the environment names, the AWS way: `AWS_ENDPOINT_URL_CLOUDWATCH`,
        /// then `AWS_ENDPOINT_URL`; nil for AWS's own.
        public static func endpoint(environment: [String: String]) -> URL? {
            [environment["AWS_ENDPOINT_URL_CLOUDWATCH"], environment["AWS_ENDPOINT_URL"]]
                .compactMap { $0 }.first { !$0.isEmpty }.flatMap(URL.init(string:))
        }

        /// The JSON-protocol settings of CloudWatch: service `monitoring`, its target prefix.
        var json: AWSJSONClient.Configuration {
            AWSJSONClient.Configuration(
                region: region, service: "monitoring", targetPrefix: "GraniteServiceVersion20100801", endpoint: endpoint,
                contentType: "application/x-amz-json-1.0", timeout: timeout, retryPolicy: retryPolicy,
                maxResponseBytes: maxResponseBytes
            )
        }
    }

    /// What CloudWatch said of one name.
    public enum Answer: Sendable, Hashable {
        /// The alarm exists and is in this state.
        case found(CloudWatchAlarmState)
        /// CloudWatch has no alarm of that name (in this account and region).
        case missing
    }

    /// The most names one `DescribeAlarms` call takes.
    public static let namesPerCall = 100

    /// The settings this client was created with.
    public let configuration: Configuration
    /// The JSON client every call goes through; exposed for its metrics and clock.
    public let client: AWSJSONClient

    /// Creates a client and its connection pool; call ``shutdown()`` when done.
    public init(configuration: Configuration, credentialProvider: any CredentialProvider, now: @escaping @Sendable () -> Date = { Date() }) {
        self.configuration = configuration
        self.client = AWSJSONClient(configuration: configuration.json, credentialProvider: credentialProvider, now: now)
    }

    /// Closes the connection pool.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    /// The state of each alarm in `names` (duplicates asked for once), in calls of up to
    /// ``namesPerCall`` names, each followed through its pages.
    ///
    /// - Parameter deadline: when the answer must be in, or nil for each attempt's timeout alone.
    /// - Throws: ``AWSError``: what the service or the network said, after the retries;
    ///   an answer that is not `DescribeAlarms` JSON is ``AWSError/Code/other`` with
    ///   `awsCode` `MalformedAnswer`. A call that fails fails the whole reading.
    public func states(of names: [String], deadline: ContinuousClock.Instant? = nil) async throws -> [String: Answer] {
        var unique: [String] = []
        var seen = Set<String>()
        for name in names where seen.insert(name).inserted { unique.append(name) }
        var answers: [String: Answer] = [:]
        var start = 0
        while start < unique.count {
            let chunk = Array(unique[start..<min(start + Self.namesPerCall, unique.count)])
            let found = try await describe(chunk, deadline: deadline)
            for name in chunk { answers[name] = found[name].map(Answer.found) ?? .missing }
            start += chunk.count
        }
        return answers
    }

    /// One `DescribeAlarms` of at most 100 names, through every page of its answer.
    private func describe(_ names: [String], deadline: ContinuousClock.Instant?) async throws -> [String: CloudWatchAlarmState] {
        var found: [String: CloudWatchAlarmState] = [:]
        var token: String?
        // 100 names answer in one page of 100; a few more pages is an endpoint that loops.
        for _ in 0..<8 {
            let input = DescribeAlarmsInput(AlarmNames: names, NextToken: token)
            let body = try await client.send(operation: "DescribeAlarms", body: try JSONEncoder().encode(input), deadline: deadline)
            let output: DescribeAlarmsOutput
            do {
                output = try JSONDecoder().decode(DescribeAlarmsOutput.self, from: body)
            } catch {
                throw AWSError(code: .other, awsCode: "MalformedAnswer",
                               message: "the DescribeAlarms answer (\(body.count) bytes) is not CloudWatch's JSON", httpStatus: 200)
            }
            for alarm in output.MetricAlarms ?? [] { found[alarm.AlarmName] = alarm.state(.metric) }
            for alarm in output.CompositeAlarms ?? [] { found[alarm.AlarmName] = alarm.state(.composite) }
            guard let next = output.NextToken, !next.isEmpty else { return found }
            token = next
        }
        throw AWSError(code: .other, awsCode: "MalformedAnswer", message: "the DescribeAlarms answer kept naming a next page", httpStatus: 200)
    }

    private struct DescribeAlarmsInput: Encodable {
        let AlarmNames: [String]
        let AlarmTypes = ["CompositeAlarm", "MetricAlarm"]
        let MaxRecords = CloudWatchAlarms.namesPerCall
        let NextToken: String?
    }

    private struct DescribeAlarmsOutput: Decodable {
        struct Alarm: Decodable {
            let AlarmName: String
            let StateValue: String
            let StateReason: String?

            func state(_ kind: CloudWatchAlarmState.Kind) -> CloudWatchAlarmState {
                CloudWatchAlarmState(value: CloudWatchAlarmState.Value(StateValue), reason: StateReason ?? "", kind: kind)
            }
        }

        let MetricAlarms: [Alarm]?
        let CompositeAlarms: [Alarm]?
        let NextToken: String?
    }
}

/// An alarm's state as CloudWatch reports it: its value and the reason it gives.
public struct CloudWatchAlarmState: Sendable, Hashable {
    /// `StateValue`.
    public enum Value: Sendable, Hashable, CustomStringConvertible {
        /// `OK`: the metric or rule is within its threshold.
        case ok
        /// `ALARM`: the threshold is crossed.
        case alarm
        /// `INSUFFICIENT_DATA`: too little data to tell (a new alarm, a silent metric).
        case insufficientData
        /// A value CloudWatch did not have when this was written.
        case other(String)

        /// Reads CloudWatch's spelling.
        public init(_ text: String) {
            switch text {
            case "OK": self = .ok
            case "ALARM": self = .alarm
            case "INSUFFICIENT_DATA": self = .insufficientData
            default: self = .other(text)
            }
        }

        /// CloudWatch's spelling.
        public var description: String {
            switch self {
            case .ok: "OK"
            case .alarm: "ALARM"
            case .insufficientData: "INSUFFICIENT_DATA"
            case .other(let text): text
            }
        }
    }

    /// Which list of the answer the alarm came in.
    public enum Kind: Sendable, Hashable {
        /// A metric alarm (a threshold on a metric or a metric math expression).
        case metric
        /// A composite alarm (a rule over other alarms).
        case composite
    }

    /// `StateValue`.
    public var value: Value
    /// `StateReason`, possibly empty.
    public var reason: String
    /// Metric or composite.
    public var kind: Kind

    /// Creates a state.
    public init(value: Value, reason: String, kind: Kind) {
        self.value = value
        self.reason = reason
        self.kind = kind
    }
}
