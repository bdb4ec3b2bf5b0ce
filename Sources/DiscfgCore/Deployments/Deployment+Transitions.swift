/// The deployment's state machine: each method checks a transition against the record at
/// its instant and returns the record with it appended, or refuses in one sentence naming
/// the state. Pure: the CLI and the monitors write the result with compare-and-swap on the
/// record, so two monitors never both apply one transition.
///
/// | transition     | allowed when the deployment is                     |
/// |----------------|----------------------------------------------------|
/// | `pause`        | DEPLOYING or BAKING                                |
/// | `resume`       | PAUSED                                             |
/// | `rollback`     | DEPLOYING, BAKING or PAUSED                        |
/// | `finishRollback` | ROLLED_BACK by the clock, not yet recorded       |
/// | `complete`     | COMPLETE by the clock, not yet recorded            |
/// | `revert`       | COMPLETE                                           |
///
/// A transition is never earlier than the start or than the last one recorded.
extension Deployment {
    /// Stops the share where it is; the schedule waits until ``resume(at:by:reason:)``.
    public func pause(at: Int64, by: String, reason: String) throws -> Deployment {
        try recording(DeploymentTransition(.paused, at: at, by: by, reason: reason))
    }

    /// Returns to the schedule, shifted by the time spent paused.
    public func resume(at: Int64, by: String, reason: String) throws -> Deployment {
        try recording(DeploymentTransition(.resumed, at: at, by: by, reason: reason))
    }

    /// Begins taking the candidate back, over the strategy's ``DeploymentStrategy/rollbackSeconds``.
    public func rollback(at: Int64, by: String, reason: String) throws -> Deployment {
        try recording(DeploymentTransition(.rollingBack, at: at, by: by, reason: reason))
    }

    /// An automatic rollback: ``rollback(at:by:reason:)`` with a reason naming `signal`
    /// and what it read, such as `signal alarm:checkout-5xx: ALARM`.
    public func rollback(at: Int64, by: String, signal: DeploymentSignal, reading: String) throws -> Deployment {
        try rollback(at: at, by: by, reason: "signal \(signal.text): \(reading)")
    }

    /// Records, for the log, that a rollback reached 0.
    public func finishRollback(at: Int64, by: String, reason: String) throws -> Deployment {
        try recording(DeploymentTransition(.rolledBack, at: at, by: by, reason: reason))
    }

    /// Records, for the log, that the schedule and the bake have ended.
    public func complete(at: Int64, by: String, reason: String) throws -> Deployment {
        try recording(DeploymentTransition(.complete, at: at, by: by, reason: reason))
    }

    /// Takes a complete deployment back: everyone on the stable revision.
    public func revert(at: Int64, by: String, reason: String) throws -> Deployment {
        try recording(DeploymentTransition(.reverted, at: at, by: by, reason: reason))
    }

    /// The record with `transition` appended, when the history allows it.
    /// - Throws: `invalidArgument` (field `state`, or `at`, `by`, `reason` for a
    ///   malformed transition) saying why not.
    public func recording(_ transition: DeploymentTransition) throws -> Deployment {
        try Self.checkTime(transition.at, field: "at")
        try Self.checkPrincipal(transition.by, field: "by")
        guard transition.reason.utf8.count <= Attribution.maxMessageBytes else {
            throw DiscfgError.invalid("reason", "the reason is \(transition.reason.utf8.count) bytes; the limit is \(Attribution.maxMessageBytes)")
        }
        let name = "deployment \(id)"
        guard transition.at >= startedAt else {
            throw DiscfgError.invalid("at", "\(name) started at \(startedAt); nothing can happen to it before, at \(transition.at)")
        }
        if let last = transitions.last, transition.at < last.at {
            throw DiscfgError.invalid("at", "\(name) was last \(last.state.rawValue) at \(last.at); a transition cannot be recorded before it, at \(transition.at)")
        }
        let history = History(self, until: transition.at)
        let state = status(at: transition.at).state
        let refusal: String? = switch transition.state {
        case .paused:
            [.deploying, .baking].contains(state) ? nil : "only a DEPLOYING or BAKING deployment can be paused"
        case .resumed:
            state == .paused ? nil : "only a PAUSED deployment can be resumed"
        case .rollingBack:
            [.deploying, .baking, .paused].contains(state)
                ? nil : "only a DEPLOYING, BAKING or PAUSED deployment can be rolled back\(state == .complete ? "; revert a COMPLETE one" : "")"
        case .rolledBack:
            state == .rolledBack && !history.rolledBackRecorded ? nil : "only a rollback that has reached 0 and is not yet recorded can be recorded ROLLED_BACK"
        case .complete:
            state == .complete && !history.completeRecorded ? nil : "only a deployment whose schedule and bake have ended, not yet recorded, can be recorded COMPLETE"
        case .reverted:
            state == .complete ? nil : "only a COMPLETE deployment can be reverted"
        }
        if let refusal {
            let shown = state == .rolledBack && history.rolledBackRecorded || state == .complete && history.completeRecorded ? "already \(state.rawValue)" : state.rawValue
            throw DiscfgError.invalid("state", "\(name) is \(shown); \(refusal)")
        }
        return appending(transition)
    }
}
