/// The state a deployment is in at an instant, as ``Deployment/status(at:)`` computes it.
public enum DeploymentState: String, Hashable, Sendable, Codable, CaseIterable {
    /// Following its steps: the share grows each interval.
    case deploying = "DEPLOYING"
    /// At 100 %, waiting out the bake before it is complete.
    case baking = "BAKING"
    /// Done: everyone sees the candidate.
    case complete = "COMPLETE"
    /// Stopped by a person; the share holds and the schedule waits.
    case paused = "PAUSED"
    /// The share is falling to 0, the last exposed first.
    case rollingBack = "ROLLING_BACK"
    /// Everyone is back on the stable revision.
    case rolledBack = "ROLLED_BACK"
    /// A complete deployment taken back: everyone is on the stable revision.
    case reverted = "REVERTED"

    /// Whether nothing more can happen to the deployment but recording it for the log.
    public var isFinal: Bool { self == .rolledBack || self == .reverted }
}

/// Where a deployment stands at one instant: its state, the share of entities that see
/// the candidate, and what comes next.
public struct DeploymentStatus: Hashable, Sendable {
    /// The effective state.
    public var state: DeploymentState
    /// The share of entities that see the candidate, in basis points (0…10,000).
    public var shareBasisPoints: Int
    /// The step whose share is in effect (1…``stepCount``); 0 when the share is 0
    /// (before the start, rolled back, reverted). While rolling back it counts down.
    public var step: Int
    /// How many steps the strategy has.
    public var stepCount: Int
    /// When the share next changes, in unix milliseconds: the next step while deploying,
    /// the next step down while rolling back; nil otherwise (paused, baking, at rest).
    public var nextStepAt: Int64?
    /// The bake still to run, in milliseconds, while baking (frozen while paused during
    /// the bake); nil otherwise.
    public var bakeLeftMilliseconds: Int64?
    /// For a paused deployment, the state its schedule was in when paused (DEPLOYING or
    /// BAKING); nil otherwise.
    public var pausedIn: DeploymentState?

    /// A status as given (``Deployment/status(at:)`` computes them; tests and faces that
    /// read one back make them).
    public init(
        state: DeploymentState, shareBasisPoints: Int, step: Int, stepCount: Int, nextStepAt: Int64? = nil,
        bakeLeftMilliseconds: Int64? = nil, pausedIn: DeploymentState? = nil
    ) {
        self.state = state
        self.shareBasisPoints = shareBasisPoints
        self.step = step
        self.stepCount = stepCount
        self.nextStepAt = nextStepAt
        self.bakeLeftMilliseconds = bakeLeftMilliseconds
        self.pausedIn = pausedIn
    }

    /// Whether an entity in `bucket` (``Deployment/bucket(deploymentID:entity:)``) sees
    /// the candidate now: exactly when its bucket is below the share.
    public func exposes(bucket: Int) -> Bool { bucket < shareBasisPoints }
}
