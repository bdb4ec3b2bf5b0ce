import DiscfgAWS
import Foundation

/// Signed clients for the moto services these tests read and set up beside discfg:
/// DynamoDB and DynamoDB Streams (JSON 1.0, signing name `dynamodb`), SQS (JSON 1.0,
/// `AmazonSQS`) and EventBridge (JSON 1.1, `AWSEvents`).
struct MotoServices: Sendable {
    static let region = "us-east-1"
    static let account = "123456789012"

    let dynamoDB: AWSJSONClient
    let streams: AWSJSONClient
    let sqs: AWSJSONClient
    let events: AWSJSONClient

    init(endpoint: URL) {
        let credentials = StaticCredentialProvider(AWSCredentials(accessKeyID: "testing", secretAccessKey: "testing"))
        func client(_ service: String, _ prefix: String, _ contentType: String) -> AWSJSONClient {
            AWSJSONClient(
                configuration: AWSJSONClient.Configuration(
                    region: Self.region, service: service, targetPrefix: prefix, endpoint: endpoint, contentType: contentType
                ),
                credentialProvider: credentials
            )
        }
        dynamoDB = client("dynamodb", "DynamoDB_20120810", "application/x-amz-json-1.0")
        streams = client("dynamodb", "DynamoDBStreams_20120810", "application/x-amz-json-1.0")
        sqs = client("sqs", "AmazonSQS", "application/x-amz-json-1.0")
        events = client("events", "AWSEvents", "application/x-amz-json-1.1")
    }

    func shutdown() async {
        for client in [dynamoDB, streams, sqs, events] { try? await client.shutdown() }
    }

    /// Calls `operation` with a JSON object and returns the answer as a JSON object.
    static func call(_ client: AWSJSONClient, _ operation: String, _ input: [String: Any]) async throws -> [String: Any] {
        let body = try JSONSerialization.data(withJSONObject: input)
        let data = try await client.send(operation: operation, body: body)
        guard !data.isEmpty else { return [:] }
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw LambdaTestFailure("\(operation) answered \(String(decoding: data, as: UTF8.self))")
        }
        return object
    }

    // MARK: DynamoDB Streams

    /// Every record of `table`'s stream so far, shaped as Lambda delivers them: the
    /// GetRecords records with `eventSourceARN` added and the creation time in epoch seconds.
    func streamRecords(table: String) async throws -> [[String: Any]] {
        let described = try await Self.call(dynamoDB, "DescribeTable", ["TableName": table])
        guard let tableDescription = described["Table"] as? [String: Any], let streamARN = tableDescription["LatestStreamArn"] as? String else {
            throw LambdaTestFailure("table \(table) has no stream: \(described)")
        }
        let listed = try await Self.call(streams, "ListStreams", ["TableName": table])
        guard let listedStreams = listed["Streams"] as? [[String: Any]], listedStreams.contains(where: { $0["StreamArn"] as? String == streamARN }) else {
            throw LambdaTestFailure("ListStreams does not name \(streamARN): \(listed)")
        }
        let stream = try await Self.call(streams, "DescribeStream", ["StreamArn": streamARN])
        guard let description = stream["StreamDescription"] as? [String: Any], let shards = description["Shards"] as? [[String: Any]] else {
            throw LambdaTestFailure("DescribeStream answered \(stream)")
        }
        var records: [[String: Any]] = []
        for shard in shards {
            guard let shardID = shard["ShardId"] as? String else { continue }
            let iterator = try await Self.call(streams, "GetShardIterator", [
                "StreamArn": streamARN, "ShardId": shardID, "ShardIteratorType": "TRIM_HORIZON",
            ])
            var next = iterator["ShardIterator"] as? String
            while let current = next {
                let page = try await Self.call(streams, "GetRecords", ["ShardIterator": current, "Limit": 1000])
                let pageRecords = page["Records"] as? [[String: Any]] ?? []
                records += pageRecords.map { Self.lambdaRecord($0, streamARN: streamARN) }
                // moto hands out a fresh iterator even at the end of an open shard.
                next = pageRecords.isEmpty ? nil : page["NextShardIterator"] as? String
            }
        }
        return records
    }

    /// A GetRecords record as the Lambda event source mapping passes it on.
    private static func lambdaRecord(_ record: [String: Any], streamARN: String) -> [String: Any] {
        var record = record
        record["eventSourceARN"] = streamARN
        if var dynamodb = record["dynamodb"] as? [String: Any] {
            if let text = dynamodb["ApproximateCreationDateTime"] as? String, let date = ISO8601DateFormatter().date(from: text) {
                dynamodb["ApproximateCreationDateTime"] = Int(date.timeIntervalSince1970)
            }
            record["dynamodb"] = dynamodb
        }
        return record
    }

    /// The Lambda event for stream `records`.
    static func streamEvent(_ records: [[String: Any]]) throws -> Data {
        try JSONSerialization.data(withJSONObject: ["Records": records])
    }

    /// Whether a stream record is the insert of a history event (pk `CONFIG#h`).
    static func isHistoryInsert(_ record: [String: Any], config: String) -> Bool {
        guard record["eventName"] as? String == "INSERT",
              let dynamodb = record["dynamodb"] as? [String: Any], let keys = dynamodb["Keys"] as? [String: Any],
              let pk = keys["pk"] as? [String: Any]
        else { return false }
        return pk["S"] as? String == "\(config)#h"
    }

    // MARK: EventBridge to SQS

    /// A new SQS queue and an EventBridge rule on the default bus that sends it discfg's
    /// events for `config`.
    func captureEvents(config: String) async throws -> EventQueue {
        let name = "discfg-\(config)-\(UUID().uuidString.prefix(8))"
        let created = try await Self.call(sqs, "CreateQueue", ["QueueName": name])
        guard let url = created["QueueUrl"] as? String else { throw LambdaTestFailure("CreateQueue answered \(created)") }
        let queueARN = "arn:aws:sqs:\(Self.region):\(Self.account):\(name)"
        let pattern = try JSONSerialization.data(withJSONObject: ["source": ["discfg"], "detail": ["config": [config]]])
        _ = try await Self.call(events, "PutRule", [
            "Name": name, "EventPattern": String(decoding: pattern, as: UTF8.self), "State": "ENABLED",
        ])
        _ = try await Self.call(events, "PutTargets", ["Rule": name, "Targets": [["Id": "queue", "Arn": queueARN]]])
        return EventQueue(url: url, sqs: sqs)
    }
}

/// An SQS queue that receives EventBridge events.
struct EventQueue: Sendable {
    let url: String
    let sqs: AWSJSONClient

    /// Receives (and deletes) messages until `count` have arrived or `timeout` passes;
    /// returns each message body parsed as JSON, in order of arrival.
    func receive(count: Int, timeout: Duration = .seconds(10)) async throws -> [[String: Any]] {
        let clock = ContinuousClock()
        let end = clock.now + timeout
        var bodies: [[String: Any]] = []
        repeat {
            bodies += try await receiveOnce(waitSeconds: bodies.count < count ? 1 : 0)
        } while bodies.count < count && clock.now < end
        return bodies
    }

    /// What is in the queue right now (deleting it).
    func drain() async throws -> [[String: Any]] {
        try await receiveOnce(waitSeconds: 0)
    }

    private func receiveOnce(waitSeconds: Int) async throws -> [[String: Any]] {
        let answer = try await MotoServices.call(sqs, "ReceiveMessage", [
            "QueueUrl": url, "MaxNumberOfMessages": 10, "WaitTimeSeconds": waitSeconds, "VisibilityTimeout": 300,
        ])
        var bodies: [[String: Any]] = []
        for message in answer["Messages"] as? [[String: Any]] ?? [] {
            guard let body = message["Body"] as? String, let handle = message["ReceiptHandle"] as? String,
                  let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
            else { throw LambdaTestFailure("an SQS message is not an EventBridge event: \(message)") }
            bodies.append(object)
            _ = try await MotoServices.call(sqs, "DeleteMessage", ["QueueUrl": url, "ReceiptHandle": handle])
        }
        return bodies
    }
}
