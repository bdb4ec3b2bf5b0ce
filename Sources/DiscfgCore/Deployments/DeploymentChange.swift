import Foundation

/// A change to a config's deployments, made by a store as one atomic change
/// (``ConfigStore/changeDeployment(_:in:)``): the CLI, the REST API and the monitors
/// say what they want, and ``ChangeTransaction/changeDeployment(_:)`` decides.
public enum DeploymentChange: Hashable, Sendable {
    /// Stages a candidate and records a new deployment of it.
    case start(DeploymentPlan)
    /// Records a transition of deployment `id`: a pause, a resume, a rollback, or what the
    /// clock has made true (complete, rolled back), or a revert. `after` is the number of
    /// transitions the caller read: when the record has moved on since, nothing is written
    /// (compare-and-swap, so two monitors never both apply one transition); nil writes
    /// over whatever is there.
    case transition(id: String, DeploymentTransition.Kind, reason: String, after: Int?)
}

/// What a new deployment deploys, and how.
public struct DeploymentPlan: Hashable, Sendable {
    /// The new deployment's id (``Deployment/randomID()``).
    public var id: String
    /// The keys it covers; `/` for the whole config.
    public var prefix: KeyPrefix
    /// The candidate's keys under ``prefix``, as an import takes them.
    public var entries: [ConfigSnapshot.Entry]
    /// Whether the live keys under ``prefix`` that ``entries`` does not name are removed by
    /// the candidate (a promotion from another config), or kept (a file of changes).
    public var replace: Bool
    /// How the share grows.
    public var strategy: DeploymentStrategy
    /// What rolls it back by itself.
    public var signals: [DeploymentSignal]
    /// Why, in the words of whoever starts it.
    public var message: String

    /// A plan.
    public init(
        id: String = Deployment.randomID(), prefix: KeyPrefix, entries: [ConfigSnapshot.Entry], replace: Bool,
        strategy: DeploymentStrategy, signals: [DeploymentSignal] = [], message: String = ""
    ) {
        self.id = id
        self.prefix = prefix
        self.entries = entries
        self.replace = replace
        self.strategy = strategy
        self.signals = signals
        self.message = message
    }

    /// The most keys one deployment changes: completing it swaps each staged key with its
    /// live one in one change, two writes a key, and moves the record.
    public static let maxKeys = (Limits.maxTransactionChanges - 2) / 2
}

/// What a deployment change did.
public struct DeploymentOutcome: Hashable, Sendable {
    /// The deployment's record as the change left it.
    public var deployment: Deployment
    /// The change's events, records and staging included, in key order.
    public var events: [Event]
    /// The config's revision after the change.
    public var revision: Revision

    /// An outcome.
    public init(deployment: Deployment, events: [Event], revision: Revision) {
        self.deployment = deployment
        self.events = events
        self.revision = revision
    }

    /// The events on the config's own keys: those a completion, or a revert, made live.
    public var liveEvents: [Event] { events.filter { !SchemaTarget.isReserved($0.key) } }
}

/// The marker a staged key holds for "absent in this version": a candidate that removes a
/// key stages this in its place, and a completion stages it for the keys the candidate
/// added, so a revert removes them again.
public enum StagedAbsence {
    /// The content type of the marker; its value is empty.
    public static let contentType = "application/vnd.discfg.absent"

    /// Whether a staged item stands for an absent key.
    public static func marks(_ item: Item) -> Bool { item.contentType == contentType && item.value.isEmpty }
}
