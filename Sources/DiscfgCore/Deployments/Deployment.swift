/// A staged deployment: a candidate revision reaching a growing share of entities on a
/// schedule, recorded as data in the config (later at a key under `/.discfg/deployments/`).
///
/// Nothing has to run for a deployment to progress: every evaluator — `serve`, the agent,
/// the Lambda, the Swift client — computes from this record and its clock, offline and
/// identically, what state it is in (``status(at:)``) and which version an entity sees
/// (``seesCandidate(entity:at:)``). Only what a clock cannot tell is written: the
/// ``transitions`` people and monitors record (pause, resume, rollback, …), each with
/// compare-and-swap on the record, through the pure state machine in
/// `Deployment+Transitions.swift`.
///
/// Times are unix milliseconds, as ``WallClock`` gives them.
///
/// ```swift
/// var deployment = try Deployment(
///     id: Deployment.randomID(), prefix: .root, stableRevision: 41, candidate: .init(revision: 42),
///     strategy: try .predefined(named: "Linear20PercentEvery6Minutes"), startedAt: now,
///     message: "raise the pool size", startedBy: "token:ci", signals: [.alarm("checkout-5xx")])
/// deployment.status(at: now + 7 * 60_000).shareBasisPoints   // 4000
/// deployment = try deployment.pause(at: now + 8 * 60_000, by: "local:ana@laptop", reason: "watching")
/// ```
public struct Deployment: Hashable, Sendable {
    /// The latest instant a record may name: the end of the year 9999, in unix milliseconds.
    /// Bounding times keeps every sum of them exact in 64 bits.
    public static let maxMilliseconds: Int64 = 253_402_300_799_999
    /// The most signals one deployment watches.
    public static let maxSignals = 16
    /// The most bytes of UTF-8 a principal (``startedBy``, a transition's `by`) may hold.
    public static let maxPrincipalBytes = 1024

    /// 16 lowercase hexadecimal digits, random at creation; part of every entity's bucket.
    public let id: String
    /// The keys the deployment covers; `/` for the whole config.
    public let prefix: KeyPrefix
    /// The revision readers outside the candidate's share see.
    public let stableRevision: Revision
    /// Where the candidate's values are.
    public let candidate: DeploymentCandidate
    /// How the share grows, bakes and rolls back.
    public let strategy: DeploymentStrategy
    /// When the deployment started, in unix milliseconds: step 1 begins here.
    public let startedAt: Int64
    /// Why, in the words of whoever started it (may be empty).
    public let message: String
    /// Who started it: a principal as `discfg log` names it (`token:ci`, `local:ana@laptop`).
    public let startedBy: String
    /// What rolls it back by itself, in the order given.
    public let signals: [DeploymentSignal]
    /// What was recorded since the start, in order; see ``DeploymentTransition``.
    public private(set) var transitions: [DeploymentTransition]

    /// The candidate's revision.
    public var candidateRevision: Revision { candidate.revision }

    /// A deployment starting at `startedAt` with no transitions yet.
    /// - Throws: `invalidArgument` naming the field at fault: an `id` that is not 16
    ///   lowercase hex digits, a time out of range, an empty `startedBy`, a message over
    ///   ``Attribution/maxMessageBytes``, repeated signals or more than ``maxSignals``.
    public init(
        id: String, prefix: KeyPrefix, stableRevision: Revision, candidate: DeploymentCandidate, strategy: DeploymentStrategy,
        startedAt: Int64, message: String, startedBy: String, signals: [DeploymentSignal]
    ) throws {
        try Self.checkID(id)
        try Self.checkTime(startedAt, field: "startedAt")
        guard stableRevision <= .max, candidate.revision <= .max else {
            throw DiscfgError.invalid("stableRevision", "a deployment's revisions are at most \(Revision.max)")
        }
        guard message.utf8.count <= Attribution.maxMessageBytes else {
            throw DiscfgError.invalid("message", "the message is \(message.utf8.count) bytes; the limit is \(Attribution.maxMessageBytes)")
        }
        try Self.checkPrincipal(startedBy, field: "startedBy")
        guard signals.count <= Self.maxSignals else {
            throw DiscfgError.invalid("signals", "a deployment watches at most \(Self.maxSignals) signals, got \(signals.count)")
        }
        guard Set(signals).count == signals.count else {
            throw DiscfgError.invalid("signals", "a signal is named twice; name each once")
        }
        self.id = id
        self.prefix = prefix
        self.stableRevision = stableRevision
        self.candidate = candidate
        self.strategy = strategy
        self.startedAt = startedAt
        self.message = message
        self.startedBy = startedBy
        self.signals = signals
        self.transitions = []
    }

    /// Refuses text that is not a deployment id: 16 lowercase hexadecimal digits, as
    /// ``randomID()`` makes them.
    /// - Throws: `invalidArgument` (`id`).
    public static func checkID(_ id: String) throws {
        guard id.utf8.count == 16, id.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw DiscfgError.invalid("id", "a deployment id is 16 lowercase hexadecimal digits, got \"\(String(id.prefix(40)).debugEscaped)\"")
        }
    }

    /// A new deployment id: 16 lowercase hexadecimal digits from `generator`.
    public static func randomID(using generator: inout some RandomNumberGenerator) -> String {
        let value = generator.next()
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// A new deployment id from the system's random numbers.
    public static func randomID() -> String {
        var generator = SystemRandomNumberGenerator()
        return randomID(using: &generator)
    }

    /// This record with `transition` appended; only the state machine calls it, after
    /// checking the transition against the history.
    func appending(_ transition: DeploymentTransition) -> Deployment {
        var next = self
        next.transitions.append(transition)
        return next
    }

    static func checkTime(_ milliseconds: Int64, field: String) throws {
        guard (0...maxMilliseconds).contains(milliseconds) else {
            throw DiscfgError.invalid(field, "\(field) must be unix milliseconds from 0 to \(maxMilliseconds) (the end of 9999), got \(milliseconds)")
        }
    }

    static func checkPrincipal(_ principal: String, field: String) throws {
        guard !principal.isEmpty, principal.utf8.count <= maxPrincipalBytes else {
            throw DiscfgError.invalid(field, "\(field) must name a principal in 1 to \(maxPrincipalBytes) bytes, such as token:ci")
        }
    }
}

/// Where a deployment's candidate values are. Later steps add where they are staged; a
/// revision is always there.
public struct DeploymentCandidate: Hashable, Sendable {
    /// The revision holding the candidate's values.
    public var revision: Revision

    /// A candidate at `revision`.
    public init(revision: Revision) { self.revision = revision }
}

/// One thing recorded about a deployment after its start, by a person or a monitor.
///
/// The clock alone moves a deployment from DEPLOYING to BAKING to COMPLETE and a rollback
/// down to ROLLED_BACK; these record what it cannot tell (a pause, a rollback, a revert),
/// and for the log the moments it reached COMPLETE or ROLLED_BACK.
public struct DeploymentTransition: Hashable, Sendable {
    /// What happened.
    public enum Kind: String, Hashable, Sendable, Codable, CaseIterable {
        /// The share stopped growing; paused time does not count towards the schedule.
        case paused = "PAUSED"
        /// Back to the schedule, shifted by the time spent paused.
        case resumed = "RESUMED"
        /// The share began falling to 0 (``DeploymentStrategy/rollbackSeconds``).
        case rollingBack = "ROLLING_BACK"
        /// The rollback reached 0, recorded for the log.
        case rolledBack = "ROLLED_BACK"
        /// The schedule and bake ended, recorded for the log.
        case complete = "COMPLETE"
        /// A complete deployment taken back: everyone is on the stable revision.
        case reverted = "REVERTED"
    }

    /// What happened.
    public var state: Kind
    /// When, in unix milliseconds.
    public var at: Int64
    /// Who: a principal, or a monitor such as `system:monitor`.
    public var by: String
    /// Why; an automatic rollback names its signal.
    public var reason: String

    /// A transition; the state machine checks it against the history.
    public init(_ state: Kind, at: Int64, by: String, reason: String) {
        self.state = state
        self.at = at
        self.by = by
        self.reason = reason
    }
}
