import DiscfgCore
import DiscfgWire
import Foundation

extension RemoteStore {
    /// `POST /v1/{config}/deployments` (a start: the candidate as a JSON snapshot, the
    /// strategy, signals and id in the query) or `POST …/deployments/{id}/{action}` (a
    /// transition, `after` in the query). The plan's message, or the transition's reason,
    /// is the request's `Discfg-Message`; the server records its own caller as who.
    public func changeDeployment(_ change: DeploymentChange, in config: ConfigName) async throws -> DeploymentOutcome {
        let path: String
        let body: Data?
        let message: String
        switch change {
        case .start(let plan):
            let snapshot = ConfigSnapshot(items: plan.entries)
            try snapshot.validate()
            body = try SnapshotFormat.json.encode(snapshot)
            path = configPath(config) + "/deployments" + URLPart.query(Self.startQuery(plan))
            message = plan.message
        case .transition(let id, let kind, let reason, let after):
            try DeploymentAction.checkID(id)
            let action = DeploymentAction(kind).rawValue
            path = configPath(config) + "/deployments/\(id)/\(action)" + URLPart.query([("after", after.map(String.init))])
            body = nil
            message = reason
        }
        try Attribution.validate(message: message)
        let headers = message.isEmpty ? [] : [(ChangeMessageHeader.name, ChangeMessageHeader.value(message))]
        // The message given here travels alone: not the task's attribution's besides it.
        let envelope = try await Attribution.$current.withValue(nil) {
            try await transport.envelope(.POST, path, body: body, headers: body == nil ? headers : headers + [("Content-Type", "application/json")])
        }
        guard let document = envelope.deployment, let revision = envelope.revision else {
            throw DiscfgError(.unavailable, "the server's reply to \(envelope.action) had no deployment or revision", field: "store")
        }
        return DeploymentOutcome(deployment: document.deployment, events: try envelope.events?.map { try $0.event() } ?? [], revision: revision)
    }

    /// A start's query: the prefix, whether the candidate replaces it, the strategy (by its
    /// predefined name, or growth, step, interval and bake), the rollback time, each
    /// signal and the id.
    static func startQuery(_ plan: DeploymentPlan) -> [(String, String?)] {
        let strategy = plan.strategy
        var query: [(String, String?)] = [("format", "json"), ("prefix", plan.prefix.path), ("replace", String(plan.replace)), ("id", plan.id)]
        if let name = strategy.name {
            query.append(("strategy", name))
        } else {
            let step = strategy.stepBasisPoints
            query += [
                ("growth", strategy.growth.rawValue), ("step", "\(step / 100).\(step % 100 < 10 ? "0" : "")\(step % 100)"),
                ("interval", String(strategy.intervalSeconds)), ("bake", String(strategy.bakeSeconds)),
            ]
        }
        query.append(("rollback", String(strategy.rollbackSeconds)))
        return query + plan.signals.map { ("signal", $0.text) }
    }
}

extension RemoteStore {
    /// `PUT /v1/{config}/deployments/{id}/health`: the report as JSON.
    public func reportHealth(_ report: HealthReport, deployment id: String, in config: ConfigName) async throws {
        try Deployment.checkID(id)
        let body = try JSONEncoder().encode(report)
        _ = try await transport.envelope(.PUT, configPath(config) + "/deployments/\(id)/health", body: body, headers: [("Content-Type", "application/json")])
    }

    /// `GET /v1/{config}/deployments/{id}/health`: every reporter's report.
    public func healthReports(deployment id: String, in config: ConfigName) async throws -> [HealthReport] {
        try Deployment.checkID(id)
        let envelope = try await transport.envelope(.GET, configPath(config) + "/deployments/\(id)/health")
        return envelope.reports ?? []
    }
}

extension RemoteStore {
    /// `POST /v1/{config}/health`: `requests` an application served with one version of
    /// deployment `id` (its candidate or its stable revision), `errors` of them failed.
    /// The server that answers (serve, an agent, the Lambda function) counts them and
    /// passes them to the store its monitor reads; `keyNotFound` once the deployment has ended.
    public func recordHealth(deployment id: String, candidate: Bool, requests: UInt64, errors: UInt64, in config: ConfigName) async throws {
        try Deployment.checkID(id)
        let body = try JSONEncoder().encode(Observation(deployment: id, version: candidate ? "candidate" : "stable", requests: requests, errors: errors))
        _ = try await transport.envelope(.POST, configPath(config) + "/health", body: body, headers: [("Content-Type", "application/json")])
    }

    /// The body of `POST /v1/{config}/health`, as ``HealthObservation`` reads it.
    private struct Observation: Encodable {
        var deployment: String
        var version: String
        var requests: UInt64
        var errors: UInt64
    }
}
