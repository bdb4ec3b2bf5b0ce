import DiscfgCore
import DiscfgService
import Synchronization

/// The REST router's deadlines: each request's, computed from the configured timeout
/// (and a transport's hard deadline, ``run(answerBy:_:)``) and handed to the pipeline,
/// and the router's hold over the request (``DiscfgService/RequestCutoff``), which
/// abandons requests that outlive their deadline, with one shared ticker for all of them
/// instead of a timer per request.
///
/// What the deadline means for the store step is the pipeline's
/// (``DiscfgService/Pipeline/perform(_:by:message:deadline:writeStart:_:)``): a change is
/// never abandoned half-way: once a handler starts writing to the store (``commit(_:)``),
/// the pipeline takes the request out of the ticker's reach and the request answers
/// with what the store did. A deadline that passed before the write began is a 503, and
/// then nothing was written. So a 503 `timeout` always means "not changed". The ticker
/// is the router's own guard for the rest of a request (its admission, its body).
///
/// Each request's body runs in its own task, registered here with its deadline; a single
/// ticker task, running only while requests are in flight, cancels the tasks whose
/// deadline has passed. An abandoned request ends with `unavailable` (503) whatever its
/// body did after the cancellation. A deadline is enforced within one tick (a tenth of
/// the timeout, between 10 ms and 1 s) of when it passes.
///
/// Some transports cannot wait at all past an instant: a Lambda invocation is frozen at its
/// deadline, answer or not. Such a request is run with `answerBy`: at that instant it is
/// answered whatever its body is doing, and a change still being committed then is
/// reported as "may or may not have been applied". The Lambda adapter uses
/// ``answer(by:_:)`` as well, for the body it collects.
///
/// The body is given its deadline for the pipeline, which runs the store step with it as
/// ``Deadline/current``, so a store that retries (DynamoDB) ends its retries by then and
/// answers `unavailable` itself, rather than being cancelled mid-call; a commit started
/// before the deadline thus still ends within it, with what the store knows of its outcome.
///
/// ```swift
/// let deadlines = RequestDeadlines(timeout: .seconds(30))
/// let response = try await deadlines.run { deadline in try await handle(request, deadline) }
/// ```
public final class RequestDeadlines: Sendable {
    private struct Entry {
        let deadline: ContinuousClock.Instant
        let cancel: @Sendable () -> Void
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var expired: Set<UInt64> = []
        var committing: Set<UInt64> = []
        var nextID: UInt64 = 0
        var tickerRunning = false
    }

    /// The router's hold over one request, which the pipeline releases as its write begins.
    private struct Hold: RequestCutoff {
        let deadlines: RequestDeadlines
        let id: UInt64

        func writeBegins() throws(DiscfgError) { try deadlines.beginCommit(id) }
    }

    /// How long a request may take.
    let timeout: Duration
    private let tick: Duration
    private let state = Mutex(State())

    /// Creates the deadlines for requests that may take up to `timeout`.
    init(timeout: Duration) {
        self.timeout = timeout
        tick = min(max(timeout / 10, .milliseconds(10)), .seconds(1))
    }

    /// How long before a transport's hard deadline a request is answered, so the answer
    /// can still reach the caller.
    public static let answerMargin: Duration = .milliseconds(500)

    /// Runs `body` with the request's deadline for the pipeline, cancelling it and throwing
    /// `unavailable` once it has taken longer than the timeout, unless its write began
    /// (``DiscfgService/Pipeline/commit(_:)``). Cancelling the caller cancels `body` too,
    /// unless its write began.
    /// - Parameter answerBy: an instant by which the caller must have its answer whatever
    ///   `body` is doing; a change still being committed then is reported with an
    ///   unknown outcome, and anything else as abandoned.
    func run<T: Sendable>(answerBy cutoff: ContinuousClock.Instant? = nil, _ body: @escaping @Sendable (Deadline) async throws -> T) async throws -> T {
        // A task of its own, so that abandoning the body leaves the caller (the
        // connection, which still has to write the 503) uncancelled.
        let id = reserveID()
        let soft = ContinuousClock.now + timeout
        let deadline = cutoff.map { min($0, soft) } ?? soft
        // The store learns the deadline through the pipeline (``Deadline``), and fits its
        // retries inside it. One tick later than ours, so a request that is not committing
        // is answered by this mechanism (which knows nothing was changed), not by a store
        // giving up at the same instant; a commit, out of our reach, is bounded by the store's.
        let storeDeadline = Deadline(deadline + tick)
        let task = Task {
            try await Pipeline.$cutoff.withValue(Hold(deadlines: self, id: id)) { try await body(storeDeadline) }
        }
        register(id, deadline: deadline) { task.cancel() }
        let result: Result<T, any Error>
        if let cutoff {
            guard let finished = await Self.result(of: task, by: cutoff) else {
                if cut(id) { throw Self.outcomeUnknown }
                task.cancel()
                throw Self.notFinished
            }
            result = finished
        } else {
            result = await withTaskCancellationHandler { await task.result } onCancel: { [self] in
                // The caller is gone (its connection, the server's shutdown): the body goes
                // too, unless its write has begun, which runs to its end all the same.
                if cutUnlessCommitting(id) { task.cancel() }
            }
        }
        if unregister(id) { throw cutoff.map { $0 <= soft } == true ? Self.notFinished : abandoned }
        return try result.get()
    }

    /// Runs `body` and returns its result, or nil when `cutoff` comes first; `body` is
    /// then cancelled. For work a transport must finish before a hard deadline.
    public static func answer<T: Sendable>(by cutoff: ContinuousClock.Instant, _ body: @escaping @Sendable () async -> T) async -> T? {
        let task = Task { await body() }
        guard let result = await result(of: task, by: cutoff) else {
            task.cancel()
            return nil
        }
        return result.get()
    }

    /// The result of `task`, or nil when `cutoff` comes first; `task` is left running.
    private static func result<T: Sendable, Failure: Error>(of task: Task<T, Failure>, by cutoff: ContinuousClock.Instant) async -> Result<T, Failure>? {
        let waiter = Waiter<Result<T, Failure>?>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                waiter.wait(continuation)
                let timer = Task {
                    // Cancelled when the result came first: then it has nothing to say.
                    guard (try? await Task.sleep(until: cutoff, clock: .continuous)) != nil else { return }
                    waiter.resume(nil)
                }
                Task {
                    let result = await task.result
                    waiter.resume(result)
                    timer.cancel()
                }
            }
        } onCancel: {
            task.cancel()
        }
    }

    /// Runs a write to the store to its end, whatever the deadline, as the pipeline
    /// begins writes (``DiscfgService/Pipeline/commit(_:)``): the caller learns what
    /// happened. Throws `unavailable` without running `body` when the request's deadline
    /// has already passed.
    /// The revision of the change it made is noted for the request's audit line.
    static func commit<T>(_ body: () async throws -> T) async throws -> T {
        let result = try await Pipeline.commit(body)
        if let note = AuditNote.current, let change = result as? any ChangeOutcome, let revision = change.changeRevision {
            note.update { $0.revision = revision }
        }
        return result
    }

    private func beginCommit(_ id: UInt64) throws(DiscfgError) {
        let expired = state.withLock { state in
            if state.expired.contains(id) { return true }
            // Out of the ticker's reach: nothing cancels the write from here on.
            state.entries[id] = nil
            state.committing.insert(id)
            return false
        }
        if expired { throw abandoned }
    }

    /// The answer to a request cut off by its transport's deadline before it changed anything.
    static let notFinished = DiscfgError(.unavailable, "the request did not finish before the function's deadline; nothing was changed", field: "timeout")

    /// The answer to a request cut off by its transport's deadline while committing a change.
    static let outcomeUnknown = DiscfgError(
        .unavailable,
        "the function's deadline came before the change was confirmed: it may or may not have been applied; read the key (GET) to see which",
        field: "timeout"
    )

    private var abandoned: DiscfgError {
        DiscfgError(.unavailable, "the request took longer than \(timeout) and was abandoned before anything was changed", field: "timeout")
    }

    private func reserveID() -> UInt64 {
        state.withLock { state in
            defer { state.nextID &+= 1 }
            return state.nextID
        }
    }

    private func register(_ id: UInt64, deadline: ContinuousClock.Instant, _ cancel: @escaping @Sendable () -> Void) {
        let startTicker = state.withLock { state in
            // A body that began its commit before registration stays out of reach.
            if !state.committing.contains(id) { state.entries[id] = Entry(deadline: deadline, cancel: cancel) }
            defer { state.tickerRunning = true }
            return !state.tickerRunning
        }
        if startTicker {
            Task.detached { [self] in await runTicker() }
        }
    }

    /// Removes a request cut off by its transport; whether it was committing a change.
    private func cut(_ id: UInt64) -> Bool {
        state.withLock { state in
            state.entries[id] = nil
            state.expired.remove(id)
            return state.committing.remove(id) != nil
        }
    }

    /// Marks a request as abandoned by its caller, unless its write has begun; whether it was.
    private func cutUnlessCommitting(_ id: UInt64) -> Bool {
        state.withLock { state in
            guard !state.committing.contains(id) else { return false }
            state.expired.insert(id)
            return true
        }
    }

    /// Removes a finished request; whether it had been abandoned.
    private func unregister(_ id: UInt64) -> Bool {
        state.withLock { state in
            state.entries[id] = nil
            state.committing.remove(id)
            return state.expired.remove(id) != nil
        }
    }

    /// Cancels overdue requests every tick, and stops when none are left.
    private func runTicker() async {
        while true {
            try? await Task.sleep(for: tick)
            let now = ContinuousClock.now
            let (overdue, keepRunning) = state.withLock { state in
                var overdue: [@Sendable () -> Void] = []
                for (id, entry) in state.entries where entry.deadline <= now && !state.expired.contains(id) {
                    state.expired.insert(id)
                    overdue.append(entry.cancel)
                }
                if state.entries.isEmpty { state.tickerRunning = false }
                return (overdue, state.tickerRunning)
            }
            // Outside the lock: cancelling runs the tasks' cancellation handlers.
            for cancel in overdue { cancel() }
            if !keepRunning { return }
        }
    }
}

/// A continuation resumed by whichever of several racers comes first; the rest do nothing.
private final class Waiter<Value: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<Value, Never>?>(nil)

    func wait(_ continuation: CheckedContinuation<Value, Never>) {
        self.continuation.withLock { $0 = continuation }
    }

    func resume(_ value: Value) {
        continuation.withLock { $0.take() }?.resume(returning: value)
    }
}
