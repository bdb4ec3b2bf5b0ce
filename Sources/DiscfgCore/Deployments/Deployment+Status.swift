extension Deployment {
    /// The deployment at `now` (unix milliseconds): its effective state, share, step and
    /// what comes next, from the record and the clock alone.
    ///
    /// Only transitions recorded at or before `now` count, so any instant can be
    /// evaluated, past ones included. The rules:
    /// - Deployment time is `now − startedAt` less the time spent paused (a pause still
    ///   running counts up to `now`), so a pause freezes the share and shifts the rest of
    ///   the schedule by its length.
    /// - Step k holds over deployment time [(k−1)·interval, k·interval); after
    ///   stepCount·interval it is BAKING at 100 % for the bake, then COMPLETE. No
    ///   transition needs writing for any of that.
    /// - A rollback recorded at time r, with step j in effect, walks the shares back
    ///   down the steps it went up — share(j), share(j−1), …, share(1), 0 — one step each
    ///   rollbackSeconds/j, so the entities that got the candidate last lose it first and
    ///   the share never rises again; at 0 it is ROLLED_BACK. A rollback over 0 seconds
    ///   is ROLLED_BACK at once.
    /// - REVERTED (after COMPLETE) is share 0 from the moment it is recorded.
    ///
    /// Instants before 1970 or after ``maxMilliseconds`` are evaluated as those bounds.
    public func status(at now: Int64) -> DeploymentStatus {
        let now = min(max(now, 0), Self.maxMilliseconds)
        let history = History(self, until: now)
        let count = strategy.stepCount
        if history.reverted {
            return DeploymentStatus(state: .reverted, shareBasisPoints: 0, step: 0, stepCount: count)
        }
        if let rollback = history.rollback {
            return rollingBack(from: rollback, at: now)
        }
        var status = scheduled(deploymentTime: history.deploymentTime(at: now, startedAt: startedAt), at: now)
        if history.pausedSince != nil {
            status.pausedIn = status.state
            status.state = .paused
            status.nextStepAt = nil
        }
        return status
    }

    /// The deployment time still to run at `now` before the schedule reaches COMPLETE, in
    /// milliseconds: the steps and bake left, frozen while paused (a pause shifts the rest
    /// of the schedule by its length), 0 once complete. Nil when the deployment will not
    /// complete by its schedule: rolling back, rolled back or reverted.
    public func scheduleLeft(at now: Int64) -> Int64? {
        let now = min(max(now, 0), Self.maxMilliseconds)
        let history = History(self, until: now)
        guard !history.reverted, history.rollback == nil else { return nil }
        let left = strategy.deployingMilliseconds + strategy.bakeSeconds * 1000 - history.deploymentTime(at: now, startedAt: startedAt)
        return max(left, 0)
    }

    /// When the deployment is COMPLETE by its schedule, in unix milliseconds, as the
    /// transitions recorded up to `now` have shifted it (each pause by its length); an
    /// instant at or before `now` once it is complete. Nil while paused (the rest waits for
    /// a resume: ``scheduleLeft(at:)`` says how long it will take then), rolling back,
    /// rolled back or reverted.
    ///
    /// ```swift
    /// deployment.completesAt(after: now)   // startedAt + steps + bake + the time paused
    /// ```
    public func completesAt(after now: Int64) -> Int64? {
        let now = min(max(now, 0), Self.maxMilliseconds)
        let history = History(self, until: now)
        guard !history.reverted, history.rollback == nil, history.pausedSince == nil else { return nil }
        // With no pause running, deployment time is now − startedAt − pausedTotal.
        return startedAt + history.pausedTotal + strategy.deployingMilliseconds + strategy.bakeSeconds * 1000
    }

    /// Where the schedule stands after `time` milliseconds of deployment time.
    private func scheduled(deploymentTime time: Int64, at now: Int64) -> DeploymentStatus {
        let count = strategy.stepCount
        let interval = strategy.intervalSeconds * 1000
        let deploying = strategy.deployingMilliseconds
        let bake = strategy.bakeSeconds * 1000
        if time < 0 {
            return DeploymentStatus(state: .deploying, shareBasisPoints: 0, step: 0, stepCount: count, nextStepAt: now - time)
        }
        if time < deploying {
            let step = Int(time / interval) + 1
            return DeploymentStatus(
                state: .deploying, shareBasisPoints: strategy.shares[step - 1], step: step, stepCount: count,
                nextStepAt: now + (Int64(step) * interval - time)
            )
        }
        if time < deploying + bake {
            return DeploymentStatus(
                state: .baking, shareBasisPoints: DeploymentStrategy.fullShare, step: count, stepCount: count,
                bakeLeftMilliseconds: deploying + bake - time
            )
        }
        return DeploymentStatus(state: .complete, shareBasisPoints: DeploymentStrategy.fullShare, step: count, stepCount: count)
    }

    /// Where a rollback begun at `rollback.at` from step `rollback.step` stands at `now`.
    private func rollingBack(from rollback: (at: Int64, step: Int), at now: Int64) -> DeploymentStatus {
        let count = strategy.stepCount
        let steps = Int64(rollback.step)
        let duration = strategy.rollbackSeconds * 1000
        let elapsed = now - rollback.at
        guard steps > 0, elapsed < duration else {
            return DeploymentStatus(state: .rolledBack, shareBasisPoints: 0, step: 0, stepCount: count)
        }
        // Steps down taken so far: ⌊elapsed·j / duration⌋; the next is taken at the first
        // elapsed time with elapsed·j ≥ (down+1)·duration.
        let down = elapsed * steps / duration
        let step = Int(steps - down)
        let next = ((down + 1) * duration + steps - 1) / steps
        return DeploymentStatus(
            state: .rollingBack, shareBasisPoints: strategy.shares[step - 1], step: step, stepCount: count, nextStepAt: rollback.at + next
        )
    }

    /// The step in effect when a rollback is recorded at `at`: the step the schedule
    /// (shifted by pauses) had reached, 0 before the start.
    func stepForRollback(at: Int64, history: History) -> Int {
        scheduled(deploymentTime: history.deploymentTime(at: at, startedAt: startedAt), at: at).step
    }
}

/// What a deployment's transitions up to an instant amount to.
struct History {
    /// The time spent in pauses that have ended.
    var pausedTotal: Int64 = 0
    /// When the running pause began.
    var pausedSince: Int64?
    /// When a rollback began and the step it began from.
    var rollback: (at: Int64, step: Int)?
    var rolledBackRecorded = false
    var completeRecorded = false
    var reverted = false

    /// The transitions of `deployment` at or before `now`, in order.
    init(_ deployment: Deployment, until now: Int64) {
        for transition in deployment.transitions {
            guard transition.at <= now else { break }
            apply(transition, of: deployment)
        }
    }

    mutating func apply(_ transition: DeploymentTransition, of deployment: Deployment) {
        switch transition.state {
        case .paused:
            pausedSince = transition.at
        case .resumed:
            pausedTotal += transition.at - (pausedSince ?? transition.at)
            pausedSince = nil
        case .rollingBack:
            rollback = (transition.at, deployment.stepForRollback(at: transition.at, history: self))
            pausedSince = nil
        case .rolledBack:
            rolledBackRecorded = true
        case .complete:
            completeRecorded = true
        case .reverted:
            reverted = true
        }
    }

    /// Deployment time at `now`: time since the start less the time spent paused.
    func deploymentTime(at now: Int64, startedAt: Int64) -> Int64 {
        now - startedAt - pausedTotal - (pausedSince.map { now - $0 } ?? 0)
    }
}
