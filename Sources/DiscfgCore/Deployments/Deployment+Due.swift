/// What a monitor records on a running deployment: the one decision every monitor (the one
/// `serve` runs, the Lambda's scheduled one) makes, from the record, the clock and what
/// its signals read.
extension Deployment {
    /// A transition a monitor records, and why.
    public struct Due: Hashable, Sendable {
        /// What to record.
        public var kind: DeploymentTransition.Kind
        /// Why, as `discfg log` and `deploy status` show it.
        public var reason: String
    }

    /// The transition due on this running deployment at `now`, given the first signal that
    /// reads unhealthy (nil: none does); nil when nothing is due.
    ///
    /// - COMPLETE by the clock: record COMPLETE (which makes the candidate live).
    /// - ROLLED_BACK by the clock: record it (which drops the staging).
    /// - DEPLOYING, BAKING or PAUSED with a signal unhealthy: roll back, naming the signal.
    ///   A paused deployment still exposes its share, so a signal stops it too.
    public func due(at now: Int64, unhealthy: (signal: DeploymentSignal, reading: String)?) -> Due? {
        switch status(at: now).state {
        case .complete:
            Due(kind: .complete, reason: "the schedule and the bake ended")
        case .rolledBack:
            Due(kind: .rolledBack, reason: "the rollback reached 0 %")
        case .deploying, .baking, .paused:
            unhealthy.map { Due(kind: .rollingBack, reason: "signal \($0.signal.text): \($0.reading)") }
        case .rollingBack, .reverted:
            nil
        }
    }
}
