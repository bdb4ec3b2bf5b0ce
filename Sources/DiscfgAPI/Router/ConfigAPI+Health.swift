import DiscfgCore
import DiscfgWire
import Foundation
import Hummingbird

/// Health that readers see, for deployments that roll back on it (`--rollback-on health`):
/// applications report the requests and errors of the version they read to the process
/// that served it (an agent, `serve`, the Lambda function), which counts them with the
/// readers it served (``HealthCounter``) and passes one cumulative report per deployment to
/// the store, where the monitor tests them (``HealthTest``).
extension ConfigAPI {
    /// The most bytes a health request's body may hold.
    static let maxHealthBytes = 4096

    /// `POST health`: counts an application's requests and errors against the version it
    /// read (``HealthObservation``); answers 202, the counts passed on within the
    /// process's flush period.
    func recordHealth(_ request: inout Request, _ context: some DiscfgRequestContext) async throws -> Response {
        let config = try request.configName(context)
        let counter = health
        guard counter.sink != nil else {
            throw DiscfgError.invalid("health", "this server reads a published snapshot and has nowhere to pass health reports; report to a server of the store")
        }
        let observation = try Self.decodeHealth(HealthObservation.self, from: try await request.bodyData(limit: Self.maxHealthBytes))
        let running = try await deploymentOverlay(config).running.map(\.deployment.id)
        let id: String
        if let named = observation.deployment {
            guard running.contains(named) else { throw HealthReport.notRunning(named, in: config) }
            id = named
        } else {
            guard !running.isEmpty else {
                throw DiscfgError(.keyNotFound, "config \"\(config)\" runs no deployment; health is reported only while one runs", field: "health.deployment")
            }
            guard running.count == 1, let only = running.first else {
                throw DiscfgError.invalid(
                    "health.deployment", "config \"\(config)\" runs \(running.count) deployments; name one in health.deployment (the first word of the Discfg-Deployment header)"
                )
            }
            id = only
        }
        counter.record(config: config, deployment: id, candidate: observation.candidate, requests: observation.requests, errors: observation.errors)
        await counter.flushIfDue()
        var envelope = Envelope(action: Endpoint.recordHealth.action)
        envelope.config = config.rawValue
        return APIResponse.json(envelope, status: .accepted)
    }

    /// `PUT deployments/{id}/health`: keeps a reporter's cumulative report
    /// (``ConfigStore/reportHealth(_:deployment:in:)``).
    func reportHealth(_ request: inout Request, _ context: some DiscfgRequestContext) async throws -> Response {
        let config = try request.configName(context)
        let id = try Self.deploymentID(context)
        let report = try Self.decodeHealth(HealthReport.self, from: try await request.bodyData(limit: Self.maxHealthBytes))
        try await store.reportHealth(report, deployment: id, in: config)
        var envelope = Envelope(action: Endpoint.reportHealth.action)
        envelope.config = config.rawValue
        return APIResponse.json(envelope)
    }

    /// `GET deployments/{id}/health`: every reporter's report, and their sum.
    func deploymentHealth(_ request: Request, _ context: some DiscfgRequestContext) async throws -> Response {
        let config = try request.configName(context)
        let id = try Self.deploymentID(context)
        let reports = try await store.healthReports(deployment: id, in: config)
        var envelope = Envelope(action: Endpoint.deploymentHealth.action)
        envelope.config = config.rawValue
        envelope.health = HealthDocument(DeploymentHealth(reports))
        envelope.reports = reports
        return APIResponse.json(envelope)
    }

    /// The health of each running deployment someone reported on, for the documents
    /// answering `GET deployments`; nothing where the store keeps no reports (an agent's copy).
    func health(of documents: [DeploymentDocument], in config: ConfigName) async -> [DeploymentDocument] {
        var documents = documents
        for index in documents.indices where documents[index].running {
            guard let reports = try? await store.healthReports(deployment: documents[index].deployment.id, in: config), !reports.isEmpty else { continue }
            documents[index].health = HealthDocument(DeploymentHealth(reports))
        }
        return documents
    }

    /// Counts the reader of a key's version, when it names itself and the server counts.
    func countReader(_ version: (deployment: Deployment, revision: Revision)?, entity: String?, in config: ConfigName) {
        guard let version, let entity else { return }
        health.read(config: config, deployment: version.deployment.id, candidate: version.revision == version.deployment.candidateRevision, entity: entity)
    }

    private static func decodeHealth<T: Decodable>(_ type: T.Type, from body: Data) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: body)
        } catch let error as DiscfgError {
            throw error
        } catch {
            throw DiscfgError.invalid("body", "the body is not a JSON object: \(error.localizedDescription)")
        }
    }
}
