import AsyncHTTPClient
import DiscfgAPI
import DiscfgAWS
import DiscfgCore
import DiscfgDynamoDB
import DiscfgNetwork
import DiscfgSecrets
import DiscfgSignals
import Foundation
import Logging

/// The Lambda face of discfg: a custom runtime (`provided.al2023`) that takes events from
/// the Lambda Runtime API and answers them.
///
/// One binary serves every function of the deployment, telling events apart by shape:
/// API Gateway requests (payload 1.0 and 2.0, Function URLs) go through the same router
/// as `discfg serve`; DynamoDB Streams batches become notifications; scheduled events
/// move running deployments along (a ``DeploymentMonitor`` pass) and sweep expired keys.
public enum LambdaRuntime {
    /// What the function runs on, made once per process (the "init" phase).
    public struct Setup: Sendable {
        public var store: any ConfigStore
        /// Where delivery progress is kept; the store itself when it is DynamoDB.
        public var ledger: any DeliveryLedger
        /// The EventBridge client, or nil when no region is known.
        public var eventBridge: AWSJSONClient?
        public var access: LambdaAccess
        public var options: ConfigAPI.Options

        public init(store: any ConfigStore, ledger: any DeliveryLedger, eventBridge: AWSJSONClient?, access: LambdaAccess, options: ConfigAPI.Options) {
            self.store = store
            self.ledger = ledger
            self.eventBridge = eventBridge
            self.access = access
            self.options = options
        }
    }

    /// API options for a function behind API Gateway, which ends requests after 29–30 s.
    /// Other requests are bounded by the invocation's deadline.
    public static func apiOptions(environment: [String: String]) throws -> ConfigAPI.Options {
        var options = ConfigAPI.Options()
        let seconds = try NumberField("DISCFG_POLL_TIMEOUT", 1...900).parse(environment["DISCFG_POLL_TIMEOUT"] ?? "25")
        options.maxPollTimeout = .seconds(seconds)
        options.webhookPolicy = try WebhookPolicy(allowing: environment["DISCFG_WEBHOOK_ALLOW"], field: "DISCFG_WEBHOOK_ALLOW")
        options.defaultPollTimeout = .seconds(min(seconds, 20))
        return options
    }

    /// The EventBridge client for the function's region (`DISCFG_EVENTS_ENDPOINT` overrides
    /// the endpoint), or nil when no region is set.
    public static func eventBridgeClient(environment: [String: String]) -> AWSJSONClient? {
        guard let region = environment["AWS_REGION"] ?? environment["AWS_DEFAULT_REGION"], !region.isEmpty else { return nil }
        let endpoint = environment["DISCFG_EVENTS_ENDPOINT"].flatMap { $0.isEmpty ? nil : URL(string: $0) }
        return AWSJSONClient(
            configuration: AWSJSONClient.Configuration(
                region: region, service: "events", targetPrefix: "AWSEvents", endpoint: endpoint,
                contentType: "application/x-amz-json-1.1"
            ),
            credentialProvider: CredentialChain.standard(explicit: nil, environment: environment, profile: nil)
        )
    }

    /// Runs the Runtime API loop until the process is stopped; returns an exit status
    /// when it cannot go on (no Runtime API, or set-up failed and was reported).
    public static func run(environment: [String: String], setup: @Sendable (Logger) async throws -> Setup) async -> Int32 {
        let level = environment["DISCFG_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0.lowercased()) } ?? .info
        let logger = Logger(label: "discfg") { _ in LambdaLogHandler(level: level) }
        guard let address = environment["AWS_LAMBDA_RUNTIME_API"], !address.isEmpty else {
            FileHandle.standardError.write(Data("""
            discfg: AWS_LAMBDA_RUNTIME_API is not set: 'discfg lambda' runs inside AWS Lambda (runtime provided.al2023) as its bootstrap.
            See deploy/README.md to package and deploy it; use 'discfg serve' to run the API anywhere else.\n
            """.utf8))
            return 2
        }
        var configuration = HTTPClient.Configuration(timeout: .init(connect: .seconds(5)))
        // A webhook that redirects could send a delivery anywhere, past the address checks.
        configuration.redirectConfiguration = .disallow
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let status = await loop(address: address, http: http, logger: logger, setup: setup)
        try? await http.shutdown()
        return status
    }

    private static func loop(address: String, http: HTTPClient, logger: Logger, setup: @Sendable (Logger) async throws -> Setup) async -> Int32 {
        let runtime = RuntimeAPIClient(address: address, http: http)
        let function: LambdaFunction
        do {
            let made = try await setup(logger)
            function = LambdaFunction(setup: made, http: http)
        } catch {
            let failure = LambdaFailure(type: "discfg.InitError", message: Self.describe(error))
            logger.critical("cannot start: \(failure.message)")
            do {
                try await runtime.failInit(failure)
            } catch {
                logger.critical("cannot report the init error: \(error)")
            }
            return 1
        }
        let status = await serve(function, runtime: runtime, logger: logger)
        await function.monitoring.signals.shutdown()
        return status
    }

    /// Takes invocations one after another until the Runtime API fails.
    private static func serve(_ function: LambdaFunction, runtime: RuntimeAPIClient, logger: Logger) async -> Int32 {
        while true {
            let invocation: Invocation
            do {
                invocation = try await runtime.next()
            } catch {
                logger.critical("the Runtime API failed: \(error)")
                return 1
            }
            if let trace = invocation.traceID { setenv("_X_AMZN_TRACE_ID", trace, 1) }
            var scoped = logger
            scoped[metadataKey: LambdaLogHandler.requestIDKey] = "\(invocation.requestID)"
            do {
                let body = try await function.handle(invocation, logger: scoped)
                try await runtime.respond(invocation.requestID, body: body)
            } catch let failure as LambdaFailure {
                scoped.error("invocation failed: \(failure)")
                do { try await runtime.fail(invocation.requestID, failure) } catch {
                    logger.critical("the Runtime API failed: \(error)")
                    return 1
                }
            } catch let error as RuntimeAPIClient.TransportError {
                // The response itself was refused (e.g. too large): report it as the invocation's error.
                scoped.error("\(error)")
                do { try await runtime.fail(invocation.requestID, LambdaFailure(type: "discfg.ResponseRefused", message: error.description)) } catch {
                    logger.critical("the Runtime API failed: \(error)")
                    return 1
                }
            } catch {
                // The failure policy: the invoker reads what it may see, the log the rest.
                let failure = LambdaFailure(type: "discfg.Error", message: FailurePolicy.shown(error, logger: scoped).message)
                scoped.error("invocation failed: \(failure)")
                do { try await runtime.fail(invocation.requestID, failure) } catch {
                    logger.critical("the Runtime API failed: \(error)")
                    return 1
                }
            }
        }
    }

    /// An init failure for the operator (no caller waits on it): its whole message.
    static func describe(_ error: any Error) -> String {
        if let error = error as? DiscfgError { return error.message }
        return String(describing: error)
    }
}

/// What one function instance does with each event.
struct LambdaFunction: Sendable {
    let setup: LambdaRuntime.Setup
    let api: LambdaHTTPHandler
    let notifications: NotificationDispatcher
    let publishing: SnapshotPublishing
    let monitoring: ScheduledMonitoring

    init(setup: LambdaRuntime.Setup, http: HTTPClient) {
        self.setup = setup
        api = LambdaHTTPHandler(store: setup.store, access: setup.access, options: setup.options)
        notifications = NotificationDispatcher(
            store: setup.store, ledger: setup.ledger,
            eventBridge: setup.eventBridge.map(EventBridgeSender.init(client:)),
            webhooks: WebhookSender(http: http, policy: setup.options.webhookPolicy),
            keys: StandardKeyResolver(environment: ProcessInfo.processInfo.environment)
        )
        publishing = SnapshotPublishing(store: setup.store, s3: SnapshotPublishing.client(environment: ProcessInfo.processInfo.environment))
        // Once per execution environment: its CloudWatch client and probe keep their connections.
        monitoring = ScheduledMonitoring(store: setup.store, signals: SignalReader.standard(environment: ProcessInfo.processInfo.environment))
    }

    func handle(_ invocation: Invocation, logger: Logger) async throws -> Data {
        let decoder = JSONDecoder()
        let shape: EventShape
        do {
            shape = try decoder.decode(EventShape.self, from: invocation.event)
        } catch {
            throw LambdaFailure(type: "discfg.UnknownEvent", message: "the event is not a JSON object discfg knows (\(invocation.event.count) bytes)")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let deadline = invocation.deadlineInstant
        switch shape.kind {
        case .apiGatewayV1:
            let event = try decode(APIGatewayV1Request.self, invocation.event, what: "API Gateway REST (payload 1.0) request")
            let response = await api.handle(try PayloadFormat.request(event), deadline: deadline, logger: logger)
            return try encoder.encode(PayloadFormat.v1(response))
        case .apiGatewayV2:
            let event = try decode(APIGatewayV2Request.self, invocation.event, what: "HTTP API / Function URL (payload 2.0) request")
            let response = await api.handle(try PayloadFormat.request(event), deadline: deadline, logger: logger)
            return try encoder.encode(PayloadFormat.v2(response))
        case .dynamoDBStream:
            let event = try decode(DynamoDBStreamEvent.self, invocation.event, what: "DynamoDB Streams batch")
            var answer = await notifications.handle(event, deadline: deadline, logger: logger)
            // Snapshots after notifications; the batch is retried from the earlier record either needs.
            if let record = await publishing.handle(event, deadline: deadline, logger: logger),
               let sequence = event.Records[record].dynamodb?.SequenceNumber {
                let notified = answer.batchItemFailures.first.flatMap { failure in
                    event.Records.firstIndex { $0.dynamodb?.SequenceNumber == failure.itemIdentifier }
                }
                if notified.map({ record < $0 }) ?? true { answer = StreamBatchResponse(batchItemFailures: [.init(itemIdentifier: sequence)]) }
            }
            // Health reports agents wrote: their configs' deployments are checked now, not
            // at the next scheduled event. A failed check waits for that event; the batch
            // is not retried for it.
            var reported: [ConfigName] = []
            for record in event.Records {
                if let image = record.dynamodb?.NewImage, let config = StreamedHealthReport.config(newImage: image), !reported.contains(config) { reported.append(config) }
            }
            if !reported.isEmpty { _ = await monitoring.pass(over: reported, deadline: deadline, logger: logger) }
            return try encoder.encode(answer)
        case .scheduled:
            // Deployments first: a rollback a signal calls for waits on no sweep.
            let monitored = await monitoring.pass(deadline: deadline, logger: logger)
            let expired = try await setup.store.sweepExpired()
            logger.info("sweep: expired \(expired.count) key(s)")
            return try encoder.encode(ScheduledAnswer(expired: expired.count, deployments: monitored))
        case .unknown:
            throw LambdaFailure(
                type: "discfg.UnknownEvent",
                message: "discfg handles API Gateway (payload 1.0/2.0), Function URL, DynamoDB Streams and scheduled events; this event is none of them"
            )
        }
    }

    /// Where and why an event did not decode, in words rather than the decoder's dump.
    private static func explain(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "it is not the JSON expected" }
        let (path, reason): ([any CodingKey], String) = switch error {
        case .keyNotFound(let key, let context): (context.codingPath + [key], "is missing")
        case .typeMismatch(_, let context), .valueNotFound(_, let context): (context.codingPath, "has the wrong type")
        case .dataCorrupted(let context): (context.codingPath, "is not valid JSON there")
        @unknown default: ([], "is not the JSON expected")
        }
        let field = path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        return field.isEmpty ? "the event \(reason)" : "\(field) \(reason)"
    }

    private func decode<T: Decodable>(_ type: T.Type, _ data: Data, what: String) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw LambdaFailure(type: "discfg.BadEvent", message: "the event looks like a \(what) but is not a valid one: \(Self.explain(error))")
        }
    }
}
