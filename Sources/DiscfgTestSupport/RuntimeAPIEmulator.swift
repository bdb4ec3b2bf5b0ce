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
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        var app = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0), serverName: "lambda-runtime-api"),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            }
        )
        // Quiet: the server's own start and stop messages are not the tests' output.
        app.logger.logLevel = .critical
        let server = Task { [app] in
            defer { portContinuation.finish() }
            try await app.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            server.cancel()
            let outcome = await server.result
            throw Failure(description: "the Lambda Runtime API emulator did not start: \(outcome)")
        }
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

/// An invocation the test queued, before the runtime answers it.
struct PendingInvocation: Sendable {
    let requestID: String
    let event: Data
    let deadlineMs: Int64
    let traceID: String
    let queuedAt: ContinuousClock.Instant
}

/// The emulator's book-keeping: queued events, waiting `next` requests, and each
/// invocation's state. Continuations are resumed only after the state is updated, and a
/// cancelled waiter is removed before it is resumed, so each is resumed exactly once.
actor RuntimeAPIState {
    enum Phase {
        case queued(PendingInvocation)
        case delivered(PendingInvocation, at: ContinuousClock.Instant)
        case finished(RuntimeAPIEmulator.Invocation)
    }

    enum AnswerOutcome {
        case accepted
        case unknownRequest
        case notDelivered
        case alreadyFinished
    }

    private var queue: [PendingInvocation] = []
    private var pollers: [(id: UUID, continuation: CheckedContinuation<PendingInvocation, any Error>)] = []
    private var phases: [String: Phase] = [:]
    private var resultWaiters: [String: [(id: UUID, continuation: CheckedContinuation<RuntimeAPIEmulator.Invocation, any Error>)]] = [:]
    private var stopped = false
    private(set) var initError: RuntimeAPIEmulator.InitError?
    private(set) var firstNextAt: ContinuousClock.Instant?
    private(set) var nextRequests = 0
    private(set) var answerArrivals: [ContinuousClock.Instant] = []
    private(set) var violations: [String] = []

    func enqueue(_ invocation: PendingInvocation) throws {
        guard !stopped else { throw RuntimeAPIEmulator.Failure(description: "the Runtime API emulator was stopped") }
        guard phases[invocation.requestID] == nil else {
            throw RuntimeAPIEmulator.Failure(description: "request id \(invocation.requestID) was already used")
        }
        if pollers.isEmpty {
            phases[invocation.requestID] = .queued(invocation)
            queue.append(invocation)
        } else {
            let poller = pollers.removeFirst()
            phases[invocation.requestID] = .delivered(invocation, at: .now)
            poller.continuation.resume(returning: invocation)
        }
    }

    /// The next event for a `next` request, waiting for one if none is queued.
    func next() async throws -> PendingInvocation {
        let now = ContinuousClock.now
        nextRequests += 1
        if firstNextAt == nil { firstNextAt = now }
        guard !stopped else { throw RuntimeAPIEmulator.Failure(description: "the Runtime API emulator was stopped") }
        if !queue.isEmpty {
            let invocation = queue.removeFirst()
            phases[invocation.requestID] = .delivered(invocation, at: now)
            return invocation
        }
        let id = UUID()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    pollers.append((id, continuation))
                }
            }
        } onCancel: {
            Task { await self.cancelPoller(id) }
        }
    }

    private func cancelPoller(_ id: UUID) {
        guard let index = pollers.firstIndex(where: { $0.id == id }) else { return }
        let poller = pollers.remove(at: index)
        poller.continuation.resume(throwing: CancellationError())
    }

    /// Records a response or error for `requestID`.
    func answer(
        _ requestID: String, result: RuntimeAPIEmulator.Invocation.Result, errorTypeHeader: String?, route: String
    ) -> AnswerOutcome {
        let now = ContinuousClock.now
        let outcome: AnswerOutcome
        switch phases[requestID] {
        case nil: outcome = .unknownRequest
        case .queued: outcome = .notDelivered
        case .finished: outcome = .alreadyFinished
        case .delivered(let pending, let at):
            let invocation = RuntimeAPIEmulator.Invocation(
                requestID: requestID, traceID: pending.traceID, result: result, errorTypeHeader: errorTypeHeader,
                queuedAt: pending.queuedAt, deliveredAt: at, finishedAt: now
            )
            phases[requestID] = .finished(invocation)
            answerArrivals.append(now)
            let waiters = resultWaiters.removeValue(forKey: requestID) ?? []
            for waiter in waiters { waiter.continuation.resume(returning: invocation) }
            return .accepted
        }
        violations.append("\(route) for request id \(requestID): \(outcome)")
        return outcome
    }

    func recordInitError(_ error: RuntimeAPIEmulator.InitError) {
        if initError != nil { violations.append("a second init/error: \(error.type): \(error.message)") }
        initError = initError ?? error
    }

    func recordViolation(_ text: String) {
        violations.append(text)
    }

    /// The finished invocation, waiting for it if needed.
    func result(of requestID: String) async throws -> RuntimeAPIEmulator.Invocation {
        if case .finished(let invocation) = phases[requestID] { return invocation }
        guard !stopped else { throw RuntimeAPIEmulator.Failure(description: "the Runtime API emulator was stopped") }
        let id = UUID()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    resultWaiters[requestID, default: []].append((id, continuation))
                }
            }
        } onCancel: {
            Task { await self.cancelResultWaiter(requestID, id) }
        }
    }

    private func cancelResultWaiter(_ requestID: String, _ id: UUID) {
        guard var waiters = resultWaiters[requestID], let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        let waiter = waiters.remove(at: index)
        resultWaiters[requestID] = waiters.isEmpty ? nil : waiters
        waiter.continuation.resume(throwing: CancellationError())
    }

    /// Where an invocation stands, for a timeout's message.
    func describe(_ requestID: String) -> String {
        let status: String = switch phases[requestID] {
        case nil: "unknown to the emulator"
        case .queued: "the runtime never took it (no next request arrived for it)"
        case .delivered(_, let at): "handed to the runtime \(ContinuousClock.now - at) ago, but no response or error was posted"
        case .finished: "finished"
        }
        return "\(status); \(summary())"
    }

    func summary() -> String {
        var parts = ["\(nextRequests) next request(s)", "\(answerArrivals.count) answer(s)"]
        if let initError { parts.append("init error \(initError.type): \(initError.message)") }
        if !violations.isEmpty { parts.append("protocol violations: \(violations.joined(separator: "; "))") }
        return parts.joined(separator: ", ")
    }

    func stop() {
        stopped = true
        let failure = RuntimeAPIEmulator.Failure(description: "the Runtime API emulator was stopped")
        let pollers = self.pollers
        self.pollers = []
        let waiters = resultWaiters.values.flatMap { $0 }
        resultWaiters = [:]
        for poller in pollers { poller.continuation.resume(throwing: failure) }
        for waiter in waiters { waiter.continuation.resume(throwing: failure) }
    }
}

extension Duration {
    /// Whole milliseconds, rounded down.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
