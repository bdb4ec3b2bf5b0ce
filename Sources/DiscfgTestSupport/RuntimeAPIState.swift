import Foundation

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
    private let pollers = Waiters<PendingInvocation>()
    private var phases: [String: Phase] = [:]
    private var resultWaiters: [String: Waiters<RuntimeAPIEmulator.Invocation>] = [:]
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
            phases[invocation.requestID] = .delivered(invocation, at: .now)
            pollers.resumeFirst(returning: invocation)
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
        return try await pollers.wait()
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
            resultWaiters.removeValue(forKey: requestID)?.resumeAll(returning: invocation)
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
        let waiters = resultWaiters[requestID] ?? Waiters()
        resultWaiters[requestID] = waiters
        return try await waiters.wait()
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
        pollers.failAll(failure)
        for waiters in resultWaiters.values { waiters.failAll(failure) }
        resultWaiters = [:]
    }
}

extension Duration {
    /// Whole milliseconds, rounded down.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
