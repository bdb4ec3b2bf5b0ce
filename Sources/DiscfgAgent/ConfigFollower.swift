import DiscfgCore
import Foundation
import Logging
import Synchronization

/// Keeps a ``ReplicaStore``'s copy of one config current from an ``AgentSource``.
///
/// Each ``refresh()`` asks the source for the revision (one cheap read); only when it
/// moved does it read the changes since the copy's revision, or, when the source no longer
/// has them, the whole config. Idle, that is one request per interval. Every refresh has a
/// deadline; a failed or late one leaves the copy as it was, counted in ``status``.
///
/// Times are the monotonic clock's (``AgentClock``), so a jump of the wall clock changes
/// neither the intervals nor the staleness.
public final class ConfigFollower: Sendable {
    /// What a refresh did.
    public enum Outcome: Hashable, Sendable {
        /// The revision had not moved.
        case unchanged
        /// Events were applied, up to this revision.
        case applied(Revision)
        /// The whole config was loaded, at this revision.
        case loaded(Revision)
        /// The source failed or was late; the copy is unchanged.
        case failed(String)
    }

    /// Counters and times of one follower.
    public struct Status: Hashable, Sendable {
        /// Revision checks made (each one cheap read).
        public var checks = 0
        /// Refreshes that changed the copy (events applied or a load).
        public var refreshes = 0
        /// Whole loads.
        public var loads = 0
        /// Refreshes that failed or passed their deadline.
        public var errors = 0
        /// The last failure, as logged.
        public var lastError: String?
        /// When (``AgentClock/now()``) the source last answered a check.
        public var lastSuccess: Duration?
    }

    /// The config followed.
    public let config: ConfigName
    private let source: any AgentSource
    private let replica: ReplicaStore
    private let clock: AgentClock
    private let deadline: Duration
    private let logger: Logger
    private let state = Mutex(Status())
    /// Called with each new state of the copy (after a change or load), e.g. to cache it.
    private let onChange: @Sendable (PublishedSnapshot) async -> Void

    /// Creates a follower.
    /// - Parameters:
    ///   - deadline: the longest one refresh may take.
    ///   - onChange: called after each change with the copy's new state.
    public init(
        config: ConfigName, source: any AgentSource, replica: ReplicaStore, clock: AgentClock = .continuous, deadline: Duration = .seconds(10),
        logger: Logger = Logger(label: "discfg.agent"), onChange: @escaping @Sendable (PublishedSnapshot) async -> Void = { _ in }
    ) {
        self.config = config
        self.source = source
        self.replica = replica
        self.clock = clock
        self.deadline = deadline
        self.logger = logger
        self.onChange = onChange
    }

    /// The counters so far.
    public var status: Status { state.withLock { $0 } }

    /// Seconds since the source last answered a check; nil before it ever did.
    public var staleness: Duration? {
        state.withLock { $0.lastSuccess }.map { clock.now() - $0 }
    }

    /// One check, and the changes when the revision moved; never throws.
    /// - Parameter limit: a shorter deadline than the follower's, for this refresh only.
    @discardableResult
    public func refresh(within limit: Duration? = nil) async -> Outcome {
        let deadline = min(limit ?? self.deadline, self.deadline)
        do {
            return try await bounded(deadline) { try await Deadline.within(.after(deadline)) { try await self.refreshOnce() } }
        } catch {
            let text = (error as? DiscfgError)?.message ?? String(describing: error)
            state.withLock {
                $0.errors += 1
                $0.lastError = text
            }
            logger.warning("refresh failed; serving the copy held", metadata: ["config": "\(config)", "error": "\(text)"])
            return .failed(text)
        }
    }

    private func refreshOnce() async throws -> Outcome {
        let held = replica.revision(of: config)
        let revision = try await source.revision(of: config)
        state.withLock {
            $0.checks += 1
            $0.lastSuccess = clock.now()
        }
        if let held, revision == held { return .unchanged }
        if let held, revision > held, let changes = try await source.changes(in: config, after: held) {
            replica.apply(changes.events, through: changes.through, in: config)
            state.withLock { $0.refreshes += 1 }
            if let snapshot = replica.snapshot(of: config) {
                await onChange(snapshot)
                return .applied(snapshot.revision)
            }
        }
        // A first load, history gone, or the source went back (a config recreated).
        let snapshot = try await source.load(config)
        replica.install(snapshot)
        state.withLock {
            $0.refreshes += 1
            $0.loads += 1
        }
        await onChange(snapshot)
        return .loaded(snapshot.revision)
    }

    /// Runs `body` but answers by the deadline even when the source never does: the late
    /// call is cancelled and left to end on its own, its result dropped.
    private func bounded<T: Sendable>(_ deadline: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let clock = self.clock
        let config = self.config
        let started = clock.now()
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let settlement = Settlement(continuation)
            let work = Task {
                do { settlement.settle(.success(try await body())) } catch { settlement.settle(.failure(error)) }
            }
            Task {
                while !settlement.isSettled, clock.now() < started + deadline {
                    try? await clock.sleep(min(.milliseconds(50), deadline))
                }
                if settlement.settle(.failure(DiscfgError(.unavailable, "the source did not answer for config \"\(config)\" within \(deadline)", field: "timeout"))) {
                    work.cancel()
                }
            }
        }
    }

    /// Refreshes every `interval` until the task is cancelled, starting at once.
    public func run(every interval: Duration) async {
        while !Task.isCancelled {
            let started = clock.now()
            await refresh()
            let wait = interval - (clock.now() - started)
            do { try await clock.sleep(max(wait, .milliseconds(1))) } catch { return }
        }
    }
}

/// The monotonic time a follower measures intervals and staleness with: the system's
/// continuous clock, or a manual one in tests.
public struct AgentClock: Sendable {
    /// The time since an arbitrary start.
    public let now: @Sendable () -> Duration
    /// Waits; throws `CancellationError` when cancelled.
    public let sleep: @Sendable (Duration) async throws -> Void

    /// A clock from its two functions.
    public init(now: @escaping @Sendable () -> Duration, sleep: @escaping @Sendable (Duration) async throws -> Void) {
        self.now = now
        self.sleep = sleep
    }

    /// `ContinuousClock`: monotonic, unmoved by changes of the wall clock.
    public static var continuous: AgentClock {
        let clock = ContinuousClock()
        let start = clock.now
        return AgentClock(now: { clock.now - start }, sleep: { try await clock.sleep(for: $0) })
    }
}

/// A continuation resumed once, by whichever of a call and its timer ends first.
final class Settlement<T: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<T, any Error>?>

    init(_ continuation: CheckedContinuation<T, any Error>) {
        self.continuation = Mutex(continuation)
    }

    var isSettled: Bool { continuation.withLock { $0 == nil } }

    /// Resumes with `result` unless already resumed; returns whether this call did.
    @discardableResult
    func settle(_ result: Result<T, any Error>) -> Bool {
        guard let continuation = continuation.withLock({ $0.take() }) else { return false }
        continuation.resume(with: result)
        return true
    }
}
