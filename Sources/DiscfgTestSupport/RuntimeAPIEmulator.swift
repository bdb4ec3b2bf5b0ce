import Foundation
import Hummingbird
import NIOCore

/// The AWS Lambda Runtime API (version 2018-06-01) on a free loopback port, for tests and
/// the cold-start benchmark: a custom runtime such as `discfg lambda` polls it for events
/// and posts its answers, as it would inside Lambda.
///
/// The documented routes are served: `GET …/runtime/invocation/next` blocks until a test
/// calls ``invoke(eventJSON:deadline:timeout:)`` and then hands out the event with the
/// `Lambda-Runtime-*` headers; `POST …/invocation/{id}/response` and `…/error` finish that
/// invocation; `POST …/runtime/init/error` records an initialization failure. Anything a
/// runtime does out of order (answering an invocation twice, or one it was never given) is
/// refused as Lambda does and kept in ``protocolViolations``.
///
/// ```swift
/// let runtime = try await RuntimeAPIEmulator.start()
/// // start the runtime with AWS_LAMBDA_RUNTIME_API=\(runtime.address)
/// let result = try await runtime.invoke(eventJSON: Data(#"{"source":"aws.events"}"#.utf8))
/// await runtime.stop()
/// ```
public final class RuntimeAPIEmulator: Sendable {
    /// One finished invocation.
    public struct Invocation: Sendable {
        /// What the runtime answered.
        public enum Result: Sendable, Equatable {
            /// `POST …/response` with this body.
            case response(Data)
            /// `POST …/error` with this `errorType` and `errorMessage`.
            case error(type: String, message: String)
        }

        /// The `Lambda-Runtime-Aws-Request-Id` it was handed out with.
        public let requestID: String
        /// The `Lambda-Runtime-Trace-Id` it was handed out with.
        public let traceID: String
        /// What the runtime answered.
        public let result: Result
        /// The `Lambda-Runtime-Function-Error-Type` header of an error answer, if sent.
        public let errorTypeHeader: String?
        /// When the test asked for the invocation.
        public let queuedAt: ContinuousClock.Instant
        /// When a `next` request took it.
        public let deliveredAt: ContinuousClock.Instant
        /// When the response or error arrived.
        public let finishedAt: ContinuousClock.Instant
    }

    /// What a runtime posted to `…/runtime/init/error`.
    public struct InitError: Sendable, Equatable {
        /// The body's `errorType` (or the header's, when the body is not the documented JSON).
        public let type: String
        /// The body's `errorMessage`.
        public let message: String
        /// The `Lambda-Runtime-Function-Error-Type` header, if sent.
        public let errorTypeHeader: String?
        /// The raw body.
        public let body: Data
        /// When it arrived.
        public let at: ContinuousClock.Instant
    }

    /// A failure of the emulator or of the runtime under test: a timeout, or a stopped emulator.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong, with what the emulator saw.
        public let description: String
    }

    /// The largest response Lambda accepts from a function (6 MB).
    public static let maxResponseBytes = 6 * 1024 * 1024

    /// The loopback port the API listens on.
    public let port: Int
    /// `127.0.0.1:PORT`, the value for `AWS_LAMBDA_RUNTIME_API`.
    public var address: String { "127.0.0.1:\(port)" }
    /// The `Lambda-Runtime-Invoked-Function-Arn` of every invocation.
    public let functionARN: String
    /// When the API started listening.
    public let startedAt: ContinuousClock.Instant

    private let state: RuntimeAPIState
    private let server: Task<Void, any Error>

    private init(port: Int, functionARN: String, startedAt: ContinuousClock.Instant, state: RuntimeAPIState, server: Task<Void, any Error>) {
        self.port = port
        self.functionARN = functionARN
        self.startedAt = startedAt
        self.state = state
        self.server = server
    }

    /// Starts the API on a free loopback port and returns once it accepts connections.
    ///
    /// - Parameter functionARN: The ARN handed to the runtime with each invocation.
    /// - Throws: ``Failure`` when the server does not start.
    public static func start(
        functionARN: String = "arn:aws:lambda:us-east-1:123456789012:function:discfg"
    ) async throws -> RuntimeAPIEmulator {
        let state = RuntimeAPIState()
        let router = Router(context: BasicRequestContext.self)
        RuntimeAPIRoutes(state: state, functionARN: functionARN).register(on: router)
        let (port, server) = try await LoopbackApplication.start(router, name: "the Lambda Runtime API emulator")
        return RuntimeAPIEmulator(port: port, functionARN: functionARN, startedAt: .now, state: state, server: server)
    }

    /// Queues one event, waits for the runtime to take it and answer, and returns the answer.
    ///
    /// - Parameters:
    ///   - eventJSON: The event, as Lambda would pass it.
    ///   - deadline: How long the function may run; sent as `Lambda-Runtime-Deadline-Ms`.
    ///   - timeout: How long to wait for the answer (default: the deadline plus 10 seconds).
    /// - Throws: ``Failure`` when no answer arrives in time, saying whether the runtime ever
    ///   asked for the event.
    public func invoke(eventJSON: Data, deadline: Duration = .seconds(30), timeout: Duration? = nil) async throws -> Invocation.Result {
        try await invocation(eventJSON: eventJSON, deadline: deadline, timeout: timeout).result
    }

    /// Like ``invoke(eventJSON:deadline:timeout:)``, with the request id, trace id and timings.
    public func invocation(
        eventJSON: Data, deadline: Duration = .seconds(30), timeout: Duration? = nil, requestID: String = UUID().uuidString.lowercased()
    ) async throws -> Invocation {
        let deadlineMs = Int64((Date().timeIntervalSince1970 * 1000).rounded()) + deadline.milliseconds
        let pending = PendingInvocation(
            requestID: requestID, event: eventJSON, deadlineMs: deadlineMs, traceID: Self.traceID(), queuedAt: .now
        )
        try await state.enqueue(pending)
        let limit = timeout ?? deadline + .seconds(10)
        let state = state
        return try await withThrowingTaskGroup(of: Invocation?.self) { group in
            group.addTask { try await state.result(of: requestID) }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let invocation = first else {
                let seen = await state.describe(requestID)
                throw Failure(description: "invocation \(requestID) got no answer within \(limit): \(seen)")
            }
            return invocation
        }
    }

    /// What the runtime posted to `…/init/error`, if it did.
    public var initError: InitError? {
        get async { await state.initError }
    }

    /// Waits for an init error; throws ``Failure`` if none arrives within `timeout`.
    public func waitForInitError(timeout: Duration = .seconds(20)) async throws -> InitError {
        let clock = ContinuousClock()
        let end = clock.now + timeout
        while clock.now < end {
            if let error = await state.initError { return error }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw Failure(description: "no init error was posted within \(timeout); \(await state.summary())")
    }

    /// When the first `next` request arrived: the end of the runtime's initialization.
    public var firstNextRequestAt: ContinuousClock.Instant? {
        get async { await state.firstNextAt }
    }

    /// Waits until the runtime has asked for its first invocation and returns when it did.
    public func waitForFirstNextRequest(timeout: Duration = .seconds(20)) async throws -> ContinuousClock.Instant {
        let clock = ContinuousClock()
        let end = clock.now + timeout
        while clock.now < end {
            if let at = await state.firstNextAt { return at }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw Failure(description: "the runtime did not ask for an invocation within \(timeout); \(await state.summary())")
    }

    /// How many `next` requests have arrived.
    public var nextRequestCount: Int {
        get async { await state.nextRequests }
    }

    /// When each response or error arrived, in order of arrival.
    public var answerArrivals: [ContinuousClock.Instant] {
        get async { await state.answerArrivals }
    }

    /// Requests the API refused because they broke the protocol, described.
    public var protocolViolations: [String] {
        get async { await state.violations }
    }

    /// Stops the server; waiting `next` requests and `invoke` calls fail.
    public func stop() async {
        await state.stop()
        server.cancel()
        _ = await server.result
    }

    /// An X-Ray trace header as Lambda sends it.
    private static func traceID() -> String {
        func hex(_ count: Int) -> String {
            String((0..<count).map { _ in "0123456789abcdef".randomElement()! })
        }
        let seconds = String(Int(Date().timeIntervalSince1970), radix: 16)
        return "Root=1-\(seconds)-\(hex(24));Parent=\(hex(16));Sampled=0"
    }
}
