import Foundation
import Hummingbird
import NIOCore

/// The AWS Lambda Extensions API (version 2020-01-01) on a free loopback port, for tests:
/// an external extension such as `discfg agent --lambda-extension` registers with it and
/// takes INVOKE and SHUTDOWN events from it, as it would inside Lambda.
///
/// The documented routes are served: `POST …/extension/register` answers a
/// `Lambda-Extension-Identifier`; `GET …/extension/event/next` blocks until a test calls
/// ``invoke(requestID:deadline:timeout:)`` or ``shutdown(reason:deadline:)``; `POST
/// …/init/error` and `…/exit/error` are recorded. Every call is kept in order in
/// ``calls``, with when it arrived, and each delivered event with when the extension
/// asked for the next one (``Delivery/nextRequestAt``). ``setAnswerDelay(_:)`` makes
/// every answer wait. Calls without a registered identifier are refused (403) and kept in
/// ``protocolViolations``. One extension at a time: events go to whoever asks first.
///
/// ```swift
/// let api = try await ExtensionsAPIEmulator.start()
/// // start the extension with AWS_LAMBDA_RUNTIME_API=\(api.address)
/// let delivery = try await api.invoke()
/// try await api.shutdown()
/// await api.stop()
/// ```
public final class ExtensionsAPIEmulator: Sendable {
    /// The kinds of event an extension can receive.
    public enum EventKind: String, Sendable, Equatable {
        case invoke = "INVOKE"
        case shutdown = "SHUTDOWN"
    }

    /// The API's routes, as recorded in ``calls``.
    public enum Route: String, Sendable, Equatable, CustomStringConvertible {
        case register
        case next = "event/next"
        case initError = "init/error"
        case exitError = "exit/error"

        public var description: String { rawValue }
    }

    /// One request, in order of arrival.
    public struct Call: Sendable {
        public let route: Route
        /// Its `Lambda-Extension-Identifier` header.
        public let identifier: String?
        public let at: ContinuousClock.Instant
    }

    /// One accepted registration.
    public struct Registration: Sendable, Equatable {
        /// `Lambda-Extension-Name`.
        public let name: String
        /// The body's `events`.
        public let events: [String]
        /// The `Lambda-Extension-Identifier` it was given.
        public let identifier: String
        public let at: ContinuousClock.Instant
    }

    /// One event handed out.
    public struct Delivery: Sendable {
        public let kind: EventKind
        /// The INVOKE's `requestId`; empty for SHUTDOWN.
        public let requestID: String
        /// When the test queued it.
        public let queuedAt: ContinuousClock.Instant
        /// When an `event/next` took it.
        public let deliveredAt: ContinuousClock.Instant
        /// When the extension next called `event/next`: the end of its part in the invoke.
        public internal(set) var nextRequestAt: ContinuousClock.Instant?

        /// How long the extension took to ask again after this event, if it has.
        public var heldFor: Duration? { nextRequestAt.map { $0 - deliveredAt } }
    }

    /// What an extension posted to `init/error` or `exit/error`.
    public struct ReportedError: Sendable {
        public let route: Route
        /// The body's `errorType` (or the header's, when the body is not the documented JSON).
        public let type: String
        /// The body's `errorMessage`.
        public let message: String
        /// The `Lambda-Extension-Function-Error-Type` header, if sent.
        public let errorTypeHeader: String?
        public let at: ContinuousClock.Instant
    }

    /// A failure of the emulator or of the extension under test: a timeout, or a stopped emulator.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The loopback port the API listens on.
    public let port: Int
    /// `127.0.0.1:PORT`, the value for `AWS_LAMBDA_RUNTIME_API`.
    public var address: String { "127.0.0.1:\(port)" }
    /// The `invokedFunctionArn` of every INVOKE.
    public let functionARN: String

    private let state: ExtensionsAPIState
    private let server: Task<Void, any Error>

    private init(port: Int, functionARN: String, state: ExtensionsAPIState, server: Task<Void, any Error>) {
        self.port = port
        self.functionARN = functionARN
        self.state = state
        self.server = server
    }

    /// Starts the API on a free loopback port and returns once it accepts connections.
    public static func start(functionName: String = "discfg-test") async throws -> ExtensionsAPIEmulator {
        let state = ExtensionsAPIState()
        let router = Router(context: BasicRequestContext.self)
        ExtensionsAPIRoutes(state: state, functionName: functionName).register(on: router)
        let (port, server) = try await LoopbackApplication.start(router, name: "the Lambda Extensions API emulator")
        let arn = "arn:aws:lambda:us-east-1:123456789012:function:\(functionName)"
        return ExtensionsAPIEmulator(port: port, functionARN: arn, state: state, server: server)
    }

    /// Makes every later answer wait `delay` before it is sent.
    public func setAnswerDelay(_ delay: Duration) async {
        await state.setAnswerDelay(delay)
    }

    /// Queues an INVOKE and waits until the extension has taken it and asked for the next
    /// event, as Lambda waits before it ends the invoke.
    ///
    /// - Throws: ``Failure`` when that does not happen within `timeout`, saying how far it got.
    @discardableResult
    public func invoke(
        requestID: String = UUID().uuidString.lowercased(), deadline: Duration = .seconds(30), timeout: Duration = .seconds(20)
    ) async throws -> Delivery {
        let deadlineMs = Int64((Date().timeIntervalSince1970 * 1000).rounded()) + deadline.milliseconds
        let body: [String: any Sendable] = [
            "eventType": "INVOKE", "requestId": requestID, "deadlineMs": deadlineMs, "invokedFunctionArn": functionARN,
            "tracing": ["type": "X-Amzn-Trace-Id", "value": "Root=1-00000000-000000000000000000000000;Sampled=0"],
        ]
        try await state.enqueue(PendingExtensionEvent(
            kind: .invoke, requestID: requestID, body: try JSONSerialization.data(withJSONObject: body), queuedAt: .now
        ))
        return try await waitFor("INVOKE \(requestID) to be taken and followed by event/next", timeout: timeout) { state in
            await state.deliveries.last(where: { $0.requestID == requestID && $0.nextRequestAt != nil })
        }
    }

    /// Queues a SHUTDOWN whose deadline is `deadline` from now.
    public func shutdown(reason: String = "SPINDOWN", deadline: Duration = .seconds(2)) async throws {
        let deadlineMs = Int64((Date().timeIntervalSince1970 * 1000).rounded()) + deadline.milliseconds
        let body: [String: any Sendable] = ["eventType": "SHUTDOWN", "shutdownReason": reason, "deadlineMs": deadlineMs]
        try await state.enqueue(PendingExtensionEvent(
            kind: .shutdown, requestID: "", body: try JSONSerialization.data(withJSONObject: body), queuedAt: .now
        ))
    }

    /// Every request so far, in order of arrival.
    public var calls: [Call] {
        get async { await state.calls }
    }

    /// The accepted registrations.
    public var registrations: [Registration] {
        get async { await state.registrations }
    }

    /// The events handed out, in order.
    public var deliveries: [Delivery] {
        get async { await state.deliveries }
    }

    /// What the extension posted to `init/error` and `exit/error`.
    public var reportedErrors: [ReportedError] {
        get async { await state.errors }
    }

    /// Requests the API refused because they broke the protocol, described.
    public var protocolViolations: [String] {
        get async { await state.violations }
    }

    /// Waits for the extension's first `event/next`, the end of its init phase, and returns when it arrived.
    public func waitForFirstNextRequest(timeout: Duration = .seconds(20)) async throws -> ContinuousClock.Instant {
        try await waitFor("the first event/next", timeout: timeout) { state in
            await state.calls.first(where: { $0.route == .next })?.at
        }
    }

    /// Waits for an `init/error` or `exit/error` on `route`.
    public func waitForError(_ route: Route = .initError, timeout: Duration = .seconds(20)) async throws -> ReportedError {
        try await waitFor("\(route)", timeout: timeout) { state in
            await state.errors.first(where: { $0.route == route })
        }
    }

    /// Stops the server; waiting `event/next` requests fail.
    public func stop() async {
        await state.stop()
        server.cancel()
        _ = await server.result
    }

    private func waitFor<T: Sendable>(
        _ what: String, timeout: Duration, _ found: @Sendable (ExtensionsAPIState) async -> T?
    ) async throws -> T {
        let clock = ContinuousClock()
        let end = clock.now + timeout
        while clock.now < end {
            if let value = await found(state) { return value }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw Failure(description: "waited \(timeout) for \(what); \(await state.summary())")
    }
}
