import DiscfgCore
import Synchronization

/// The requests an application reports through a ``RemoteConfig``, counted against the
/// version its entity sees of each running deployment that covers a key the handle has
/// read, and sent to the server the config is read from: `POST /v1/{config}/health`, one
/// report per deployment and version that has counts, every ``interval`` and on
/// ``flush()``.
///
/// Recording never waits: it adds to counts in memory. A send the server does not answer
/// keeps its counts for the next; a deployment that has ended (404) drops its counts, as
/// does a refusal the next try would meet again (a bad report, a token that may not
/// report, a server with nowhere to pass reports).
final class HealthTally: Sendable {
    /// One deployment's version.
    struct Slot: Hashable, Sendable {
        var deployment: String
        var candidate: Bool
    }

    /// Requests and the failed ones among them, since they were last sent (readers are the
    /// server's to count), added up without wrapping.
    typealias Counts = HealthReport.Counts

    private struct State {
        /// The running deployments covering a key this handle read, by id, as last read.
        var charged: [String: Deployment] = [:]
        var counts: [Slot: Counts] = [:]
        /// The loop sending every interval; started by the first count.
        var sender: Task<Void, Never>?
        /// The last flush: the next one waits for it, so a flush returns only once
        /// every count recorded before it was sent or kept.
        var flushing: Task<Void, any Error>?
        var stopped = false
    }

    /// The codes of refusals that trying again would meet again: the counts are dropped.
    static let refusals: Set<DiscfgError.Code> = [.invalidArgument, .unauthenticated, .permissionDenied, .tooLarge, .readOnly]

    /// Where reports go; nil when the config is read through a store that is not a
    /// server, where nothing is counted.
    let store: RemoteStore?
    let config: ConfigName
    /// How long the loop waits between two sends.
    let interval: Duration
    private let state = Mutex(State())

    init(store: RemoteStore?, config: ConfigName, interval: Duration) {
        self.store = store
        self.config = config
        self.interval = interval
    }

    /// Marks `deployment` as covering something the application reads.
    func read(_ deployment: Deployment) {
        guard store != nil else { return }
        state.withLock { state in
            if state.charged[deployment.id] == nil { state.charged[deployment.id] = deployment }
        }
    }

    /// Follows the running deployments as the handle last read them: an ended one is no
    /// longer charged, a running one is charged as its record now stands.
    func observe(_ overlay: DeploymentOverlay) {
        guard store != nil else { return }
        state.withLock { state in
            guard !state.charged.isEmpty else { return }
            var charged: [String: Deployment] = [:]
            for running in overlay.running where state.charged[running.deployment.id] != nil {
                charged[running.deployment.id] = running.deployment
            }
            state.charged = charged
        }
    }

    /// Counts `counts` against the version `entity` sees now of each charged deployment.
    func record(_ counts: Counts, entity: String?) {
        guard store != nil, counts.requests > 0 else { return }
        let now = SystemClock().now().milliseconds
        state.withLock { state in
            guard !state.charged.isEmpty, !state.stopped else { return }
            for deployment in state.charged.values {
                let slot = Slot(deployment: deployment.id, candidate: DeploymentOverlay.sees(deployment, entity: entity, at: now))
                state.counts[slot] = state.counts[slot, default: Counts()] + counts
            }
            if state.sender == nil { state.sender = sendingLoop() }
        }
    }

    /// Sends every count there is (after any flush under way), and throws the first
    /// failure: a server not answering (its counts kept) or a refusal (its counts dropped).
    func flush() async throws {
        let task = state.withLock { state in
            let previous = state.flushing
            let task = Task { [self] in
                _ = await previous?.result
                try await send()
            }
            state.flushing = task
            return task
        }
        try await task.value
    }

    /// Stops the loop; counts not yet sent are dropped with the tally.
    func stop() {
        state.withLock { state in
            state.stopped = true
            state.sender?.cancel()
            state.sender = nil
        }
    }

    /// Sends every interval until stopped or dropped.
    private func sendingLoop() -> Task<Void, Never> {
        Task { [weak self, interval] in
            while true {
                do { try await Task.sleep(for: interval) } catch { return }
                guard let self else { return }
                // A failure keeps or drops its counts; the next tick tries what was kept.
                try? await self.flush()
            }
        }
    }

    private func send() async throws {
        guard let store else { return }
        let pending = state.withLock { state in
            defer { state.counts = [:] }
            return state.counts
        }
        var failure: (any Error)?
        var unsent: [(Slot, Counts)] = []
        for (slot, counts) in pending.sorted(by: { ($0.key.deployment, $0.key.candidate ? 1 : 0) < ($1.key.deployment, $1.key.candidate ? 1 : 0) }) {
            // After a send the server did not answer, the rest wait for the next try too.
            if let failure, Self.keepsCounts(failure) {
                unsent.append((slot, counts))
                continue
            }
            do {
                for part in Self.parts(of: counts) {
                    try await store.recordHealth(deployment: slot.deployment, candidate: slot.candidate, requests: part.requests, errors: part.errors, in: config)
                }
            } catch let error as DiscfgError where error.code == .keyNotFound || error.code == .configNotFound {
                // The deployment ended (or the config is gone): no monitor tests it any more.
                state.withLock { _ = $0.charged.removeValue(forKey: slot.deployment) }
            } catch {
                if Self.keepsCounts(error) { unsent.append((slot, counts)) }
                failure = failure ?? error
            }
        }
        if !unsent.isEmpty {
            state.withLock { state in
                for (slot, counts) in unsent { state.counts[slot] = state.counts[slot, default: Counts()] + counts }
            }
        }
        if let failure { throw failure }
    }

    /// Whether a send failing with `error` keeps its counts for the next try: yes unless
    /// the server refused them for a reason the next try would meet again.
    private static func keepsCounts(_ error: any Error) -> Bool {
        guard let error = error as? DiscfgError else { return true }
        return !refusals.contains(error.code)
    }

    /// `counts` as reports of at most ``HealthObservation/maxCount`` each, errors
    /// first, so that no report counts more errors than requests.
    static func parts(of counts: Counts) -> [Counts] {
        var left = counts
        var parts: [Counts] = []
        while left.requests > 0 {
            let requests = min(left.requests, HealthObservation.maxCount)
            let errors = min(left.errors, requests)
            parts.append(Counts(requests: requests, errors: errors))
            left.requests -= requests
            left.errors -= errors
        }
        return parts
    }
}
