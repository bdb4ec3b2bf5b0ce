import DiscfgCore
import Foundation
import HTTPTypes
import Hummingbird

/// Reads that name an entity: the faces' side of staged deployments. A read names its entity
/// with `Discfg-Entity` (or AppConfig's `Entity-Id`; an OFREP evaluation with its
/// `targetingKey`), or gets ``ConfigAPI/Options/entity`` (the agent's instance id); one
/// that names none is a plain read. What each reads is ``DeploymentOverlay``'s decision.
extension ConfigAPI {
    /// The most bytes of UTF-8 an entity may hold.
    static let maxEntityBytes = 1024

    /// The entity `request` names, or the server's own; nil for a plain read.
    /// - Throws: `invalidArgument` for an empty entity, one over ``maxEntityBytes`` or with
    ///   control characters.
    func entity(_ request: Request) throws -> String? {
        let named = request.headers[.discfgEntity] ?? request.headers[.appConfigEntityID]
        guard let named else { return options.entity }
        return try Self.checkedEntity(named, field: "Discfg-Entity")
    }

    /// `entity` when a reader may name it.
    static func checkedEntity(_ entity: String, field: String) throws -> String {
        guard !entity.isEmpty, entity.utf8.count <= maxEntityBytes, !entity.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw DiscfgError.invalid(field, "\(field) names an entity in 1 to \(maxEntityBytes) bytes without control characters")
        }
        return entity
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
