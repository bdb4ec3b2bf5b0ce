import DiscfgCore
import Foundation
import HTTPTypes
import Hummingbird

/// Reads that name an entity: the faces' side of staged deployments. A read names its entity
/// with `Discfg-Entity` (or AppConfig's `Entity-Id`; an OFREP evaluation with its
/// `targetingKey`), or gets ``ConfigAPI/Options/entity`` (the agent's instance id); one
/// that names none is a plain read. What each reads is ``DeploymentOverlay``'s decision.
extension ConfigAPI {
    /// The entity `request` names, or the server's own; nil for a plain read.
    /// - Throws: `invalidArgument` for an entity ``DeploymentEntity`` refuses.
    func entity(_ request: Request) throws -> String? {
        let named = request.headers[.discfgEntity] ?? request.headers[.appConfigEntityID]
        guard let named else { return options.entity }
        return try DeploymentEntity.checked(named, field: "Discfg-Entity")
    }

    /// The deployments running in `config`, as recently read.
    func deploymentOverlay(_ config: ConfigName) async throws -> DeploymentOverlay {
        try await deploymentOverlays.overlay(config) { try await store.deploymentOverlay(in: config) }
    }

    /// `Discfg-Deployment: ID; version=REVISION; candidate|stable` on an answer a running
    /// deployment covers: which version this reader was given.
    static func deploymentHeader(_ version: (deployment: Deployment, revision: Revision)?) -> String? {
        guard let version else { return nil }
        let which = version.revision == version.deployment.candidateRevision ? "candidate" : "stable"
        return "\(version.deployment.id); version=\(version.revision.rawValue); \(which)"
    }
}

extension HTTPField.Name {
    /// The entity a read is made for.
    static let discfgEntity = HTTPField.Name("Discfg-Entity")!
    /// Which version of a running deployment an answer holds.
    static let discfgDeployment = HTTPField.Name("Discfg-Deployment")!
}
