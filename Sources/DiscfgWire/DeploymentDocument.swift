import DiscfgCore
import DiscfgJSON
import Foundation

/// The JSON form of a staged deployment, as the REST API answers it
/// (`GET /v1/{config}/deployments[/{id}]`, a start or a transition) and the remote store
/// reads it back: the record exactly as ``Deployment`` encodes it, with three fields
/// beside it, all at the server's clock:
///
/// ```json
/// {"id": "3f9c0a1b2c3d4e5f", "prefix": "/", "stableRevision": 41, "candidate": {"revision": 42},
///  "strategy": {…}, "startedAt": 1767225600000, "message": "…", "startedBy": "token:ci",
///  "signals": [], "transitions": [],
///  "running": true, "now": 1767226020000,
///  "status": {"state": "DEPLOYING", "shareBasisPoints": 4000, "step": 2, "stepCount": 5, "nextStepAt": 1767226320000}}
/// ```
///
/// `running` says whether the record is still among the config's running deployments
/// (`/.discfg/deploying/`): a deployment COMPLETE by the clock stays running until its
/// completion is recorded, which makes the candidate live.
public struct DeploymentDocument: Hashable, Sendable {
    /// The record.
    public var deployment: Deployment
    /// Whether it is still running (its completion or rollback not yet recorded).
    public var running: Bool
    /// Where it stands at ``now``.
    public var status: DeploymentStatusDocument
    /// The server's clock when it answered, in unix milliseconds.
    public var now: Int64
    /// The health reports added up, for a running deployment someone reported on; nil
    /// otherwise.
    public var health: HealthDocument?

    /// The document of `deployment` at `now`.
    public init(_ deployment: Deployment, running: Bool, at now: Int64) {
        self.deployment = deployment
        self.running = running
        self.status = DeploymentStatusDocument(deployment.status(at: now))
        self.now = now
    }

    /// The fields the document adds to the record's.
    fileprivate enum Extra: String, CodingKey, CaseIterable {
        case running, status, now, health
    }
}

extension DeploymentDocument: Codable {
    /// Reads the document: its own three fields, and the record from the rest, as strictly
    /// as a stored record is read (``Deployment/init(from:)``).
    public init(from decoder: any Decoder) throws {
        let extra = try decoder.container(keyedBy: Extra.self)
        running = try extra.decode(Bool.self, forKey: .running)
        status = try extra.decode(DeploymentStatusDocument.self, forKey: .status)
        now = try extra.decode(Int64.self, forKey: .now)
        health = try extra.decodeIfPresent(HealthDocument.self, forKey: .health)
        guard case .object(var fields) = try JSONValue(from: decoder) else {
            throw DiscfgError.invalid("deployment", "a deployment document must be a JSON object")
        }
        for field in Extra.allCases { fields[field.rawValue] = nil }
        deployment = try JSONDecoder.discfg().decode(Deployment.self, from: Data(try JSONSerializer.serialize(.object(fields))))
    }

    /// Writes the record's fields and the document's own in one object.
    public func encode(to encoder: any Encoder) throws {
        try deployment.encode(to: encoder)
        var extra = encoder.container(keyedBy: Extra.self)
        try extra.encode(running, forKey: .running)
        try extra.encode(status, forKey: .status)
        try extra.encode(now, forKey: .now)
        try extra.encodeIfPresent(health, forKey: .health)
    }
}

/// The JSON form of a ``DeploymentStatus``: the state, the share in basis points, the
/// step in effect of how many, and when they apply, what comes next (`nextStepAt`,
/// `bakeLeftMilliseconds`) and the state a paused deployment was paused in (`pausedIn`).
public struct DeploymentStatusDocument: Codable, Hashable, Sendable {
    public var state: DeploymentState
    public var shareBasisPoints: Int
    public var step: Int
    public var stepCount: Int
    public var nextStepAt: Int64?
    public var bakeLeftMilliseconds: Int64?
    public var pausedIn: DeploymentState?

    /// The document of `status`.
    public init(_ status: DeploymentStatus) {
        state = status.state
        shareBasisPoints = status.shareBasisPoints
        step = status.step
        stepCount = status.stepCount
        nextStepAt = status.nextStepAt
        bakeLeftMilliseconds = status.bakeLeftMilliseconds
        pausedIn = status.pausedIn
    }

    /// The status this document describes.
    public var status: DeploymentStatus {
        DeploymentStatus(
            state: state, shareBasisPoints: shareBasisPoints, step: step, stepCount: stepCount, nextStepAt: nextStepAt,
            bakeLeftMilliseconds: bakeLeftMilliseconds, pausedIn: pausedIn
        )
    }
}

/// What `POST /v1/{config}/deployments/{id}/{action}` may record, by the word its path
/// takes: the one spelling of those words for the server and the remote store.
public enum DeploymentAction: String, CaseIterable, Sendable {
    case pause, resume, rollback, complete
    case rolledBack = "rolled-back"
    case revert

    /// The transition it records.
    public var transition: DeploymentTransition.Kind {
        switch self {
        case .pause: .paused
        case .resume: .resumed
        case .rollback: .rollingBack
        case .complete: .complete
        case .rolledBack: .rolledBack
        case .revert: .reverted
        }
    }

    /// The word for `transition`.
    public init(_ transition: DeploymentTransition.Kind) {
        self = Self.allCases.first { $0.transition == transition }!
    }

    /// The action a path's word names.
    /// - Throws: `invalidArgument` (`action`) naming the words there are.
    public init(parsing word: String) throws {
        guard let action = Self(rawValue: word) else {
            let words = Self.allCases.map(\.rawValue).joined(separator: ", ")
            throw DiscfgError.invalid("action", "\"\(String(word.prefix(40)).debugEscaped)\" is not a deployment action; use one of \(words)")
        }
        self = action
    }

    /// Refuses text that is not a deployment id (16 lowercase hexadecimal digits, as
    /// ``Deployment/randomID()`` makes them), before any store is asked.
    /// - Throws: `invalidArgument` (`id`).
    public static func checkID(_ id: String) throws {
        try Deployment.checkID(id)
    }
}
