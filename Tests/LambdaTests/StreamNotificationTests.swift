import Crypto
import DiscfgCore
import DiscfgTestSupport
import DiscfgWire
import Foundation
import Testing

/// DynamoDB Streams batches — the real stream records moto kept for the table — turned
/// into webhook and EventBridge notifications, each change once per target.
@Suite("Lambda: DynamoDB Streams notifications")
struct StreamNotificationTests {
    /// The JSON a webhook receives and EventBridge carries as `detail`.
    struct ChangeNotice: Decodable {
        var config: String
        var event: EventDocument
    }

    static let secret = "s3cret"

    /// A config name no other test's EventBridge rule matches.
    static func uniqueConfig() -> String {
        "notify-\(UUID().uuidString.prefix(8).lowercased())"
    }

    /// The revision of a history insert record (its sort key), if it is one for `config`.
    static func historyRevision(_ record: [String: Any], config: String) -> UInt64? {
        guard MotoServices.isHistoryInsert(record, config: config),
              let dynamodb = record["dynamodb"] as? [String: Any], let keys = dynamodb["Keys"] as? [String: Any],
              let sk = keys["sk"] as? [String: Any], let text = sk["S"] as? String
        else { return nil }
        return UInt64(text)
    }

    static func sequenceNumber(_ record: [String: Any]) -> String? {
        (record["dynamodb"] as? [String: Any])?["SequenceNumber"] as? String
    }

    /// The `itemIdentifier`s of a stream handler's answer; fails the test for another shape.
    static func batchItemFailures(_ answer: [String: Any]) throws -> [String] {
        guard let failures = answer["batchItemFailures"] as? [[String: Any]] else {
            throw LambdaTestFailure("the answer has no batchItemFailures list: \(answer)")
        }
        return failures.compactMap { $0["itemIdentifier"] as? String }
    }

    /// Checks one webhook delivery against the contract and returns its notice.
    static func verify(_ delivery: WebhookReceiver.Delivery, secret: String?) throws -> ChangeNotice {
        #expect(delivery.method == "POST")
        #expect(delivery.path == "/hook")
        #expect(delivery.headers["content-type"]?.hasPrefix("application/json") == true, "\(delivery.headers)")
        #expect(delivery.headers["x-discfg-event"] == "discfg.change")
        let timestamp = try #require(delivery.headers["x-discfg-timestamp"], "\(delivery.headers)")
        let seconds = try #require(TimeInterval(timestamp), "X-Discfg-Timestamp is unix seconds: \(timestamp)")
        #expect(abs(seconds - Date().timeIntervalSince1970) < 300)
        if let secret {
            let signed = Data("\(timestamp).".utf8) + delivery.body
            let mac = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: Data(secret.utf8)))
            let expected = "sha256=" + mac.map { String(format: "%02x", $0) }.joined()
            #expect(delivery.headers["x-discfg-signature"] == expected, "signature over \"<timestamp>.<body>\"")
        } else {
            #expect(delivery.headers["x-discfg-signature"] == nil, "no signature without a secret")
        }
        let notice = try JSONDecoder.discfg().decode(ChangeNotice.self, from: delivery.body)
        #expect(delivery.headers["x-discfg-delivery"] == "\(notice.config)/\(notice.event.revision.rawValue)")
        return notice
    }

    /// Checks one EventBridge event (as the SQS target received it) and returns its notice.
    static func verify(eventBridge event: [String: Any]) throws -> ChangeNotice {
        #expect(event["source"] as? String == "discfg")
        #expect(event["detail-type"] as? String == "discfg.change")
        #expect((event["resources"] as? [Any])?.isEmpty == true, "\(event)")
        let detail = try #require(event["detail"] as? [String: Any], "\(event)")
        let notice = try JSONDecoder.discfg().decode(ChangeNotice.self, from: JSONSerialization.data(withJSONObject: detail))
        if let time = (event["time"] as? String).flatMap(TimestampFormat.date(from:)) {
            #expect(abs(time.timeIntervalSince(notice.event.at)) < 1.01, "Time is the event's time: \(time) vs \(notice.event.at)")
        } else {
            Issue.record("the event has no time: \(event)")
        }
        return notice
    }

    /// Runs `body` with a fresh table, moto's other services and a webhook receiver.
    func withNotificationPeers(_ body: (MotoTable, MotoServices, WebhookReceiver) async throws -> Void) async throws {
        try await withMotoTable { table in
            let services = MotoServices(endpoint: table.moto.endpoint)
            let webhook = try await WebhookReceiver.start()
            do {
                try await body(table, services, webhook)
            } catch {
                await webhook.stop()
                await services.shutdown()
                throw error
            }
            await webhook.stop()
            await services.shutdown()
        }
    }

    @Test("each change reaches the webhook (signed) and EventBridge once, in revision order; a retried batch sends nothing again")
    func deliversOnce() async throws {
        try await withNotificationPeers { table, services, webhook in
            let config = Self.uniqueConfig()
            try await table.createConfig(config)
            let updated = try await table.cli.run(
                "update", config, "--notify", "eventbridge", "--notify", webhook.url, "--allow-http-webhooks", "--allow-private-webhooks", "--webhook-secret", Self.secret
            )
            #expect(updated.status == 0, "\(updated.stderr)")
            let queue = try await services.captureEvents(config: config)

            var changes: [Envelope] = []
            changes.append(try await table.cli.json("set", config, "db/host", "db1.internal", "-m", "move to the new primary"))
            changes.append(try await table.cli.json("set", config, "db/port", "5432"))
            changes.append(try await table.cli.json("set", config, "db/host", "db2.internal"))
            changes.append(try await table.cli.json("delete", config, "db/port"))
            let revisions = changes.compactMap(\.revision)
            #expect(revisions.count == 4)

            let records = try await services.streamRecords(table: table.name)
            let historyRevisions = records.compactMap { Self.historyRevision($0, config: config) }
            #expect(historyRevisions == revisions.map(\.rawValue), "moto's stream holds the four history inserts")

            try await withLambda(table) { lambda in
                let answer = try await lambda.respond(MotoServices.streamEvent(records))
                #expect(try Self.batchItemFailures(answer) == [], "\(answer)\n\(lambda.process.output.logs)")

                let deliveries = webhook.deliveries
                #expect(deliveries.count == 4, "one request per change: \(deliveries.map(\.headers))")
                let notices = try deliveries.map { try Self.verify($0, secret: Self.secret) }
                #expect(notices.map(\.event.revision) == revisions, "in revision order")
                #expect(notices.allSatisfy { $0.config == config })
                #expect(notices.map(\.event.key) == ["/db/host", "/db/port", "/db/host", "/db/port"])
                #expect(notices.map(\.event.type) == [.put, .put, .put, .delete])
                #expect(notices.map { $0.event.item?.value } == ["db1.internal", "5432", "db2.internal", nil])
                #expect(notices[2].event.prevItem?.value == "db1.internal")
                #expect(notices.allSatisfy { $0.event.by?.kind == .local }, "who: the local command's user@host, \(notices.map(\.event.by))")
                #expect(notices.map(\.event.message) == ["move to the new primary", nil, nil, nil], "why, where it was given")
                #expect(notices[3].event.prevItem?.value == "5432")

                let events = try await queue.receive(count: 4)
                let published = try events.map(Self.verify(eventBridge:))
                #expect(published.map(\.event.revision) == revisions, "EventBridge got each change once, in order")
                #expect(published.map { $0.event.item?.value } == ["db1.internal", "5432", "db2.internal", nil])
                #expect(published.allSatisfy { $0.event.by?.kind == .local } && published.first?.event.message == "move to the new primary", "EventBridge's detail says who and why")

                // Lambda retries a batch: nothing goes out a second time.
                let retried = try await lambda.respond(MotoServices.streamEvent(records))
                #expect(try Self.batchItemFailures(retried) == [])
                #expect(webhook.deliveries.count == 4, "the retry sent no webhook")
                #expect(try await queue.drain().isEmpty, "the retry sent no EventBridge event")

                // A later batch holding old and new records sends only the new change.
                let later = try #require(try await table.cli.json("set", config, "feature", "on").revision)
                let grown = try await services.streamRecords(table: table.name)
                let grownAnswer = try await lambda.respond(MotoServices.streamEvent(grown))
                #expect(try Self.batchItemFailures(grownAnswer) == [])
                #expect(webhook.deliveries.count == 5)
                #expect(try webhook.deliveries.last.map { try Self.verify($0, secret: Self.secret).event.revision } == later)
                let more = try await queue.receive(count: 1)
                #expect(try more.map { try Self.verify(eventBridge: $0).event.revision } == [later])
            }
        }
    }

    @Test("a webhook secret sealed with the config's KMS key is stored sealed and opened by the function to sign deliveries")
    func sealedWebhookSecret() async throws {
        try await withNotificationPeers { table, services, webhook in
            let config = Self.uniqueConfig()
            let endpoint = table.moto.endpoint.absoluteString
            let alias = "alias/discfg-\(UUID().uuidString.prefix(8).lowercased())"
            let made = try await ChildProcess.run("python3", ["-c", """
                import boto3, sys
                kms = boto3.client("kms", region_name="us-east-1", endpoint_url=sys.argv[1], aws_access_key_id="testing", aws_secret_access_key="testing")
                kms.create_alias(AliasName=sys.argv[2], TargetKeyId=kms.create_key()["KeyMetadata"]["KeyId"])
                """, endpoint, alias], environment: ChildProcess.environment())
            try #require(made.status == 0, "\(made.stderr)")
            var cli = table.cli
            cli.environment["AWS_ENDPOINT_URL_KMS"] = endpoint
            _ = try await cli.json("create", config, "--encryption", "kms://us-east-1/\(alias)")
            _ = try await cli.json(
                "update", config, "--notify", webhook.url, "--allow-http-webhooks", "--allow-private-webhooks", "--webhook-secret", Self.secret
            )
            let scan = try await ChildProcess.run("python3", ["-c", """
                import boto3, sys, json
                db = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=sys.argv[1], aws_access_key_id="testing", aws_secret_access_key="testing")
                print(json.dumps(db.scan(TableName=sys.argv[2])["Items"]))
                """, endpoint, table.name], environment: ChildProcess.environment())
            #expect(scan.stdout.contains("kms-sealed:") && !scan.stdout.contains(Self.secret), "the table holds the secret sealed: \(scan.stdout.prefix(2000)) \(scan.stderr)")

            let revision = try #require(try await cli.json("set", config, "k", "v").revision)
            let records = try await services.streamRecords(table: table.name)
            try await withLambda(table, environment: ["AWS_ENDPOINT_URL_KMS": endpoint]) { lambda in
                let answer = try await lambda.respond(MotoServices.streamEvent(records))
                #expect(try Self.batchItemFailures(answer) == [], "\(answer)\n\(lambda.process.output.logs)")
                let notices = try webhook.deliveries.map { try Self.verify($0, secret: Self.secret) }
                #expect(notices.map(\.event.revision) == [revision], "signed with the opened secret")
                #expect(!lambda.process.output.stdout.contains(Self.secret), "the secret is not logged")
            }
            // Without KMS at hand the function does not sign with anything else: the
            // batch is retried and the log says why.
            try await withLambda(table, environment: ["AWS_ENDPOINT_URL_KMS": "http://127.0.0.1:9"]) { lambda in
                let again = try #require(try await cli.json("set", config, "k", "w").revision)
                let more = try await services.streamRecords(table: table.name)
                let answer = try await lambda.respond(MotoServices.streamEvent(more), deadline: .seconds(8))
                #expect(try !Self.batchItemFailures(answer).isEmpty, "\(answer)")
                #expect(webhook.deliveries.count == 1, "nothing unsigned went out for revision \(again)")
                // The log line may still be on its way through the pipe when the answer is in.
                let said = try? await lambda.process.waitForOutput(timeout: .seconds(30)) { $0.stdout.contains("cannot open the secret of webhook") ? true : nil }
                #expect(said == true, "\(lambda.process.output.logs)")
            }
        }
    }

    @Test("a webhook that answers 500 once is retried within the invocation and delivered once")
    func retriedOnServerError() async throws {
        try await withNotificationPeers { table, services, webhook in
            let config = Self.uniqueConfig()
            try await table.createConfig(config)
            _ = try await table.cli.json("update", config, "--notify", webhook.url, "--allow-http-webhooks", "--allow-private-webhooks", "--webhook-secret", Self.secret)
            let revision = try #require(try await table.cli.json("set", config, "k", "v").revision)
            let records = try await services.streamRecords(table: table.name)
            webhook.answer(500)
            try await withLambda(table) { lambda in
                let answer = try await lambda.respond(MotoServices.streamEvent(records))
                #expect(try Self.batchItemFailures(answer) == [], "\(answer)\n\(lambda.process.output.logs)")
                let deliveries = webhook.deliveries
                #expect(deliveries.map(\.status) == [500, 200], "retried after the 500")
                let notices = try deliveries.map { try Self.verify($0, secret: Self.secret) }
                #expect(notices.map(\.event.revision) == [revision, revision], "the same change both times")
                #expect(webhook.accepted.count == 1)

                _ = try await lambda.respond(MotoServices.streamEvent(records))
                #expect(webhook.deliveries.count == 2, "delivered once: the retried batch sends nothing")
            }
        }
    }

    @Test("a webhook that keeps failing names the first undelivered record; the retried batch delivers the rest once")
    func persistentFailure() async throws {
        try await withNotificationPeers { table, services, webhook in
            let config = Self.uniqueConfig()
            try await table.createConfig(config)
            _ = try await table.cli.json("update", config, "--notify", "eventbridge", "--notify", webhook.url, "--allow-http-webhooks", "--allow-private-webhooks", "--webhook-secret", Self.secret)
            let queue = try await services.captureEvents(config: config)
            let first = try #require(try await table.cli.json("set", config, "a", "1").revision)
            let second = try #require(try await table.cli.json("set", config, "b", "2").revision)
            let records = try await services.streamRecords(table: table.name)
            let firstRecord = try #require(records.firstIndex { Self.historyRevision($0, config: config) == first.rawValue })
            let firstSequence = try #require(Self.sequenceNumber(records[firstRecord]))

            webhook.answerAlways(503)
            try await withLambda(table) { lambda in
                let failed = try await lambda.respond(MotoServices.streamEvent(records))
                #expect(try Self.batchItemFailures(failed) == [firstSequence], "\(failed)")
                let attempts = webhook.deliveries
                #expect(attempts.count == 3, "3 attempts in one invocation: \(attempts.map(\.headers))")
                #expect(attempts.allSatisfy { $0.headers["x-discfg-delivery"] == "\(config)/\(first.rawValue)" }, "nothing after the stuck change")

                // Lambda retries from the failed record on; the webhook is back.
                webhook.answerAlways(nil)
                let retried = try await lambda.respond(MotoServices.streamEvent(Array(records[firstRecord...])))
                #expect(try Self.batchItemFailures(retried) == [], "\(retried)")
                let delivered = try webhook.accepted.map { try Self.verify($0, secret: Self.secret).event.revision }
                #expect(delivered == [first, second])

                let events = try await queue.receive(count: 2)
                let published = try events.map { try Self.verify(eventBridge: $0).event.revision }
                #expect(published == [first, second], "EventBridge got each change once across both invocations")
                #expect(try await queue.drain().isEmpty)
            }
        }
    }

    @Test("a webhook answering 4xx is a permanent failure: logged, not retried, and it does not block the stream")
    func clientErrorIsPermanent() async throws {
        try await withNotificationPeers { table, services, webhook in
            let config = Self.uniqueConfig()
            try await table.createConfig(config)
            _ = try await table.cli.json("update", config, "--notify", webhook.url, "--allow-http-webhooks", "--allow-private-webhooks")
            _ = try await table.cli.json("set", config, "a", "1")
            _ = try await table.cli.json("set", config, "b", "2")
            let records = try await services.streamRecords(table: table.name)
            webhook.answerAlways(410)
            try await withLambda(table) { lambda in
                let invocation = try await lambda.invoke(MotoServices.streamEvent(records))
                guard case .response(let data) = invocation.result,
                      let answer = try JSONSerialization.jsonObject(with: data) as? [String: Any]
                else {
                    Issue.record("expected a response, got \(invocation.result)")
                    return
                }
                #expect(try Self.batchItemFailures(answer) == [])
                #expect(webhook.deliveries.count == 2, "one attempt per change, no retries")
                _ = try webhook.deliveries.map { try Self.verify($0, secret: nil) }
                #expect(await lambda.logLines(requestID: invocation.requestID) { $0.contains("410") }.contains { $0.contains("410") }, "\(lambda.process.output.stdout)")
                _ = try await lambda.respond(MotoServices.streamEvent(records))
                #expect(webhook.deliveries.count == 2, "counted as delivered")
            }
        }
    }

    @Test("a webhook on a private address is not called when the function does not allow it, whatever the config says")
    func privateTargetRefusedAtDelivery() async throws {
        try await withNotificationPeers { table, services, webhook in
            let config = Self.uniqueConfig()
            try await table.createConfig(config)
            _ = try await table.cli.json("update", config, "--notify", webhook.url, "--allow-http-webhooks", "--allow-private-webhooks")
            _ = try await table.cli.json("set", config, "a", "1")
            let records = try await services.streamRecords(table: table.name)
            try await withLambda(table, environment: ["DISCFG_WEBHOOK_ALLOW": "http"]) { lambda in
                let invocation = try await lambda.invoke(MotoServices.streamEvent(records))
                guard case .response(let data) = invocation.result,
                      let answer = try JSONSerialization.jsonObject(with: data) as? [String: Any]
                else {
                    Issue.record("expected a response, got \(invocation.result)")
                    return
                }
                #expect(try Self.batchItemFailures(answer) == [], "a refused target does not block the stream")
                #expect(webhook.deliveries.isEmpty, "the private webhook was called")
                #expect(await lambda.logLines(requestID: invocation.requestID) { $0.contains("not a public address") }.contains { $0.contains("not a public address") }, "\(lambda.process.output.stdout)")
            }
        }
    }
}
