import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Tracing

/// A signed, retrying client for AWS "JSON 1.0" protocol services such as DynamoDB.
///
/// discfg needs only a handful of calls, so instead of an SDK it posts JSON to `/` with an
/// `X-Amz-Target` header, signs with SigV4, retries throttling and transient failures with
/// full-jitter backoff, turns error bodies into ``AWSError`` and records consumed capacity.
/// The client owns one `HTTPClient`; call ``shutdown()`` when done (releasing it shuts
/// the pool down too).
public final class AWSJSONClient: Sendable {
    /// Where and how to talk to the service.
    public struct Configuration: Sendable {
        /// The signing region.
        public var region: String
        /// The signing service name, e.g. `dynamodb`.
        public var service: String
        /// The `X-Amz-Target` prefix, e.g. `DynamoDB_20120810`; the operation name follows a dot.
        public var targetPrefix: String
        /// A custom endpoint (e.g. `http://127.0.0.1:8000` for a local server); nil for the AWS one.
        public var endpoint: URL?
        /// The `Content-Type`, which carries the JSON protocol version.
        public var contentType: String
        /// Deadline for each HTTP attempt.
        public var timeout: Duration
        /// Retry budget and backoff.
        public var retryPolicy: RetryPolicy
        /// Largest response body accepted, to bound memory on a misbehaving endpoint.
        public var maxResponseBytes: Int
        /// Where each call's span goes (one client span per operation, its retries
        /// inside it); nil for the tracer `InstrumentationSystem` was bootstrapped with,
        /// as it is when the call is made.
        public var tracer: (any Tracer)?

        /// Creates a configuration.
        public init(
            region: String,
            service: String,
            targetPrefix: String,
            endpoint: URL? = nil,
            contentType: String = "application/x-amz-json-1.0",
            timeout: Duration = .seconds(10),
            retryPolicy: RetryPolicy = RetryPolicy(),
            maxResponseBytes: Int = 32 << 20,
            tracer: (any Tracer)? = nil
        ) {
            self.region = region
            self.service = service
            self.targetPrefix = targetPrefix
            self.endpoint = endpoint
            self.contentType = contentType
            self.timeout = timeout
            self.retryPolicy = retryPolicy
            self.maxResponseBytes = maxResponseBytes
            self.tracer = tracer
        }

        /// The DynamoDB settings (service `dynamodb`, target prefix `DynamoDB_20120810`).
        public static func dynamoDB(
            region: String,
            endpoint: URL? = nil,
            timeout: Duration = .seconds(10),
            retryPolicy: RetryPolicy = RetryPolicy(),
            tracer: (any Tracer)? = nil
        ) -> Configuration {
            Configuration(region: region, service: "dynamodb", targetPrefix: "DynamoDB_20120810",
                          endpoint: endpoint, timeout: timeout, retryPolicy: retryPolicy, tracer: tracer)
        }

        /// The endpoint in use: the custom one, or `https://SERVICE.REGION.amazonaws.com` (`.com.cn` in China).
        public var resolvedEndpoint: URL {
            if let endpoint { return endpoint }
            let suffix = region.hasPrefix("cn-") ? "amazonaws.com.cn" : "amazonaws.com"
            return URL(string: "https://\(service).\(region).\(suffix)")!
        }
    }

    /// The settings this client was created with.
    public let configuration: Configuration
    /// Where credentials come from for every attempt (cached by the provider, not here).
    public let credentialProvider: any CredentialProvider
    /// Round trips and consumed capacity per operation.
    public let metrics: ConsumedCapacityRecorder
    /// The endpoint's clock as its latest answer (success or refusal) gave it, for
    /// telling a refused signature from a machine whose clock is off.
    public let serverClock = ServerClock()
    private let httpClient: HTTPClient
    private let signer: SigV4Signer
    private let now: @Sendable () -> Date

    /// Creates a client and its `HTTPClient`.
    ///
    /// - Parameters:
    ///   - configuration: Endpoint, signing names, timeout and retries.
    ///   - credentialProvider: Usually a ``CredentialChain``.
    ///   - metrics: A recorder to share across clients, or a fresh one.
    ///   - now: The signing clock, injectable for tests.
    public init(
        configuration: Configuration,
        credentialProvider: any CredentialProvider,
        metrics: ConsumedCapacityRecorder = ConsumedCapacityRecorder(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.configuration = configuration
        self.credentialProvider = credentialProvider
        self.metrics = metrics
        self.now = now
        self.signer = SigV4Signer(region: configuration.region, service: configuration.service)
        self.httpClient = HTTPClient.forAWS(timeout: configuration.timeout)
    }

    /// Closes the connection pool. Call it when done; a client released without it
    /// closes the pool as it goes.
    public func shutdown() async throws {
        try await httpClient.shutdown()
    }

    deinit {
        // A no-op after shutdown(), which an error path may never reach: AsyncHTTPClient
        // stops the process when a client that was not shut down is freed.
        httpClient.shutdown { _ in }
    }

    /// Calls `operation` with a JSON `body` and returns the raw JSON response.
    ///
    /// Retries throttling, 5xx and connection failures within the retry policy; any other
    /// failure is thrown at once as an ``AWSError``. Credential failures are thrown unchanged.
    /// An endpoint that refuses the connection, or whose name does not resolve, is tried
    /// only ``RetryPolicy/connectAttempts`` times: the error then carries the
    /// ``AWSError/connectFailure``, and nothing was sent.
    ///
    /// - Parameter deadline: when the caller must have its answer (its request's
    ///   deadline), or nil for none. Each attempt ends by it, and no retry starts whose
    ///   backoff would leave less than ``minimumAttempt`` before it: the call fails with
    ///   its last failure instead (a ``AWSError/Code/network`` "timed out" for an attempt
    ///   the deadline cut off).
    public func send(operation: String, body: Data, deadline: ContinuousClock.Instant? = nil) async throws -> Data {
        try await traced(operation) { span in try await sendRetrying(operation: operation, body: body, deadline: deadline, span: span) }
    }

    /// ``send(operation:body:deadline:)``, its attempts and retries, in the call's span
    /// (nil when nobody traces), which learns how many retries there were.
    private func sendRetrying(operation: String, body: Data, deadline: ContinuousClock.Instant?, span: (any Span)?) async throws -> Data {
        let policy = configuration.retryPolicy
        var retries = 0
        var roundTrips = 0
        // Attempts that could not connect at all (``ConnectFailure``), which have a budget of their own.
        var unconnected = 0
        var refreshedExpiredCredentials = false
        // Whether an earlier attempt may have been carried out without a success coming
        // back; the retries send the same body (for a transaction, the same idempotency
        // token), and the caller hears of it if the call fails in the end.
        var mayHaveApplied = false
        while true {
            let credentials = try await credentialProvider.credentials()
            let outcome: Result<Data, AWSError>
            do {
                roundTrips += 1
                outcome = try await attempt(operation: operation, body: body, credentials: credentials, deadline: deadline)
            } catch let error as CancellationError {
                throw error
            } catch {
                outcome = .failure(Self.transportFailure(error, endpoint: configuration.resolvedEndpoint))
            }
            switch outcome {
            case .success(let data):
                span?.attributes[Self.retriesAttribute] = retries
                await metrics.record(operation: operation, roundTrips: roundTrips, retries: retries, failed: false,
                                     capacity: ConsumedCapacity.parse(responseBody: data))
                return data
            case .failure(let error):
                if error.connectFailure != nil {
                    unconnected += 1
                } else if error.code == .network || (error.httpStatus ?? 0) >= 500 {
                    mayHaveApplied = true
                }
                if error.isRetryable, retries + 1 < policy.maxAttempts, error.connectFailure == nil || unconnected < policy.connectAttempts {
                    let delay = policy.delay(forRetry: retries)
                    if deadline.map({ ContinuousClock.now + delay + Self.minimumAttempt <= $0 }) ?? true {
                        try await policy.sleep(delay)
                        retries += 1
                        continue
                    }
                }
                // Temporary credentials can expire between the cache check and the call; refresh once.
                if error.code == .authentication, error.awsCode.hasPrefix("ExpiredToken"), !refreshedExpiredCredentials,
                   await credentialProvider.invalidate() {
                    refreshedExpiredCredentials = true
                    retries += 1
                    continue
                }
                span?.attributes[Self.retriesAttribute] = retries
                await metrics.record(operation: operation, roundTrips: roundTrips, retries: retries, failed: true, capacity: [])
                throw error.withRetries(retries, mayHaveApplied: mayHaveApplied)
            }
        }
    }

    /// Encodes `input`, calls `operation`, and decodes the response as `Output`.
    public func send<Input: Encodable, Output: Decodable>(
        operation: String,
        input: Input,
        as output: Output.Type = Output.self,
        encoder: JSONEncoder = JSONEncoder(),
        decoder: JSONDecoder = JSONDecoder(),
        deadline: ContinuousClock.Instant? = nil
    ) async throws -> Output {
        let data = try await send(operation: operation, body: try encoder.encode(input), deadline: deadline)
        return try decoder.decode(Output.self, from: data)
    }

    /// The ``AWSError`` for an attempt that failed in the network: an endpoint that could
    /// not be connected to at all (``ConnectFailure``), or one that failed mid-request or
    /// did not answer in time, in a few plain words.
    static func transportFailure(_ error: any Error, endpoint: URL) -> AWSError {
        if let failure = ConnectFailure(error, endpoint: endpoint) {
            return AWSError(code: .network, awsCode: "NetworkError", message: failure.words, httpStatus: nil, connectFailure: failure)
        }
        return AWSError(code: .network, awsCode: "NetworkError", message: describeTransportError(error), httpStatus: nil)
    }

    /// The least time worth starting an attempt with: a retry that would begin closer
    /// than this to the caller's deadline is not made.
    public static let minimumAttempt: Duration = .milliseconds(50)

    /// One exchange, ended by the configured timeout or `deadline`, whichever comes
    /// first: its answer's head and its body alike.
    private func attempt(operation: String, body: Data, credentials: AWSCredentials, deadline: ContinuousClock.Instant?) async throws -> Result<Data, AWSError> {
        let now = ContinuousClock.now
        let cutoff = deadline.map { min($0, now + configuration.timeout) } ?? now + configuration.timeout
        guard cutoff > now else { throw HTTPClientError.deadlineExceeded }
        return try await withThrowingTaskGroup(of: Result<Data, AWSError>?.self) { group in
            group.addTask { try await self.exchange(operation: operation, body: body, credentials: credentials, timeout: cutoff - now) }
            group.addTask {
                try await Task.sleep(until: cutoff, clock: .continuous)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let outcome = first else { throw HTTPClientError.deadlineExceeded }
            return outcome
        }
    }

    /// One signed HTTP exchange: success data, or the service's error for a non-2xx answer.
    private func exchange(operation: String, body: Data, credentials: AWSCredentials, timeout: Duration) async throws -> Result<Data, AWSError> {
        let endpoint = configuration.resolvedEndpoint
        let unsigned = SigV4Request(method: "POST", url: endpoint, headers: [
            HTTPHeaderField(name: "Content-Type", value: configuration.contentType),
            HTTPHeaderField(name: "X-Amz-Target", value: "\(configuration.targetPrefix).\(operation)"),
        ])
        let signed = signer.sign(unsigned, payload: .bytes(body), credentials: credentials, date: now())

        var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false)
        if components?.path.isEmpty ?? false { components?.path = "/" }
        var request = HTTPClientRequest(url: components?.string ?? endpoint.absoluteString)
        request.method = .POST
        for field in signed.headers { request.headers.add(name: field.name, value: field.value) }
        request.headers.add(name: "User-Agent", value: "discfg")
        request.body = .bytes(ByteBuffer(bytes: body))

        let response = try await httpClient.execute(request, timeout: TimeAmount(timeout))
        serverClock.record(dateHeader: response.headers.first(name: "Date"), at: Date())
        let buffer: ByteBuffer
        do {
            buffer = try await response.body.collect(upTo: configuration.maxResponseBytes)
        } catch is NIOTooManyBytesError {
            // Not a network failure: the same call would bring the same answer.
            return .failure(AWSError(code: .other, awsCode: "TooLarge", message: "the answer is larger than the \(configuration.maxResponseBytes) bytes read",
                                     httpStatus: Int(response.status.code)))
        }
        let data = Data(buffer.readableBytesView)
        if (200..<300).contains(response.status.code) {
            return .success(data)
        }
        return .failure(AWSError.from(
            status: Int(response.status.code),
            body: data,
            errorTypeHeader: response.headers.first(name: "x-amzn-ErrorType"),
            requestID: response.headers.first(name: "x-amzn-RequestId")
        ))
    }
}
