import Foundation

/// A deployment record as JSON, the form stored under `/.discfg/deployments/`:
///
/// ```json
/// {"id": "3f9c0a1b2c3d4e5f", "prefix": "/", "stableRevision": 41, "candidate": {"revision": 42},
///  "strategy": {"growth": "linear", "stepBasisPoints": 2000, "intervalSeconds": 360, "bakeSeconds": 1800,
///               "rollbackSeconds": 0, "name": "Linear20PercentEvery6Minutes"},
///  "startedAt": 1767225600000, "message": "raise the pool size", "startedBy": "token:ci",
///  "signals": ["alarm:checkout-5xx", "health"],
///  "transitions": [{"state": "PAUSED", "at": 1767226080000, "by": "local:ana@laptop", "reason": "watching"}]}
/// ```
///
/// Reading refuses unknown fields, `null`s, numbers out of range and impossible histories
/// (a transition before the start or out of order, RESUMED without PAUSED, …): the
/// transitions are replayed through the state machine, so a stored record can hold only
/// what the machine could have written.
extension Deployment: Codable {
    private enum Field: String, CodingKey, CaseIterable {
        case id, prefix, stableRevision, candidate, strategy, startedAt, message, startedBy, signals, transitions
    }

    public init(from decoder: any Decoder) throws {
        let fields = try decoder.strictFields(Field.self, of: "a deployment", at: "deployment")
        let path = "deployment"
        let prefix: KeyPrefix
        do {
            prefix = try fields.required(KeyPrefix.self, .prefix, at: path)
        } catch var error as DiscfgError {
            error.field = "deployment.prefix"
            throw error
        }
        var deployment = try Deployment(
            id: fields.required(String.self, .id, at: path),
            prefix: prefix,
            stableRevision: fields.required(Revision.self, .stableRevision, at: path),
            candidate: fields.required(DeploymentCandidate.self, .candidate, at: path),
            strategy: fields.required(DeploymentStrategy.self, .strategy, at: path),
            startedAt: fields.required(Int64.self, .startedAt, at: path),
            message: fields.optional(String.self, .message, at: path) ?? "",
            startedBy: fields.required(String.self, .startedBy, at: path),
            signals: fields.optional([DeploymentSignal].self, .signals, at: path) ?? []
        )
        for transition in try fields.optional([DeploymentTransition].self, .transitions, at: path) ?? [] {
            deployment = try deployment.recording(transition)
        }
        self = deployment
    }

    public func encode(to encoder: any Encoder) throws {
        var fields = encoder.container(keyedBy: Field.self)
        try fields.encode(id, forKey: .id)
        try fields.encode(prefix, forKey: .prefix)
        try fields.encode(stableRevision, forKey: .stableRevision)
        try fields.encode(candidate, forKey: .candidate)
        try fields.encode(strategy, forKey: .strategy)
        try fields.encode(startedAt, forKey: .startedAt)
        try fields.encode(message, forKey: .message)
        try fields.encode(startedBy, forKey: .startedBy)
        try fields.encode(signals, forKey: .signals)
        try fields.encode(transitions, forKey: .transitions)
    }
}

extension Deployment {
    /// The deployment recorded in `item`, a key under ``DeploymentKeys``.
    /// - Throws: `internal` naming the key when the record cannot be read: only a
    ///   deployment's change writes there, so a bad record is discfg's fault.
    public init(record item: Item) throws {
        do {
            self = try JSONDecoder.discfg().decode(Deployment.self, from: item.value)
        } catch {
            throw DiscfgError(.internal, "the deployment record at \(item.key) cannot be read: \(error)", field: "deployment")
        }
    }
}

extension DeploymentCandidate: Codable {
    private enum Field: String, CodingKey, CaseIterable {
        case revision
    }

    public init(from decoder: any Decoder) throws {
        let fields = try decoder.strictFields(Field.self, of: "a deployment's candidate", at: "candidate")
        let revision = try fields.required(Revision.self, .revision, at: "candidate")
        guard revision <= .max else {
            throw DiscfgError.invalid("candidate.revision", "candidate.revision is at most \(Revision.max), got \(revision)")
        }
        self.init(revision: revision)
    }

    public func encode(to encoder: any Encoder) throws {
        var fields = encoder.container(keyedBy: Field.self)
        try fields.encode(revision, forKey: .revision)
    }
}

extension DeploymentTransition: Codable {
    private enum Field: String, CodingKey, CaseIterable {
        case state, at, by, reason
    }

    public init(from decoder: any Decoder) throws {
        let path = "transitions"
        let fields = try decoder.strictFields(Field.self, of: "a deployment's transition", at: path)
        guard let state = Kind(rawValue: try fields.required(String.self, .state, at: path)) else {
            let names = Kind.allCases.map(\.rawValue).joined(separator: ", ")
            throw DiscfgError.invalid("transitions.state", "a transition's state is one of \(names)")
        }
        self.init(
            state, at: try fields.required(Int64.self, .at, at: path), by: try fields.required(String.self, .by, at: path),
            reason: try fields.optional(String.self, .reason, at: path) ?? ""
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var fields = encoder.container(keyedBy: Field.self)
        try fields.encode(state, forKey: .state)
        try fields.encode(at, forKey: .at)
        try fields.encode(by, forKey: .by)
        try fields.encode(reason, forKey: .reason)
    }
}
