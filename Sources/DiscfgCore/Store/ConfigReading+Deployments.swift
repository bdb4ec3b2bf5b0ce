import Foundation

/// A config's deployments as a reader finds them.
public struct DeploymentListing: Sendable, Hashable {
    /// The deployments still running, in id order.
    public var running: [Deployment]
    /// The deployments that have ended, in id order.
    public var ended: [Deployment]
    /// The config's revision when they were read.
    public var revision: Revision

    /// All of them, running first.
    public var all: [Deployment] { running + ended }
}

extension ConfigReading {
    /// The config's deployments, running and ended.
    public func deployments(in config: ConfigName) async throws -> DeploymentListing {
        let running = try await items(in: config, under: DeploymentKeys.running)
        let ended = try await items(in: config, under: DeploymentKeys.ended).items
        return DeploymentListing(running: try running.items.map(Deployment.init(record:)), ended: try ended.map(Deployment.init(record:)), revision: running.revision)
    }

    /// The config's running deployments alone: what a monitor reads each pass, however many
    /// have ended.
    public func runningDeployments(in config: ConfigName) async throws -> [Deployment] {
        try await items(in: config, under: DeploymentKeys.running).items.map(Deployment.init(record:))
    }

    /// The deployment `id`, and whether it is still running.
    /// - Throws: `keyNotFound` naming it when the config has none by that id.
    public func deployment(_ id: String, in config: ConfigName) async throws -> (deployment: Deployment, running: Bool) {
        if let item = try await get(DeploymentKeys.runningRecord(id), in: config) { return (try Deployment(record: item), true) }
        if let item = try await get(DeploymentKeys.endedRecord(id), in: config) { return (try Deployment(record: item), false) }
        throw DiscfgError(.keyNotFound, "config \"\(config)\" has no deployment \(id.debugEscaped); `discfg deploy ls \(config)` lists them", field: "id")
    }

    /// The overlay of the config's running deployments, read as one state: the records,
    /// then each one's staging, then the records again; read anew when they moved meanwhile.
    public func deploymentOverlay(in config: ConfigName) async throws -> DeploymentOverlay {
        for _ in 0..<8 {
            let records = try await items(in: config, under: DeploymentKeys.running)
            guard !records.items.isEmpty else { return .none }
            let running = try records.items.map(Deployment.init(record:))
            var staging: [Item] = []
            for deployment in running {
                staging += try await items(in: config, under: DeploymentKeys.staged(deployment.id)).items
            }
            let again = try await items(in: config, under: DeploymentKeys.running)
            if again.items == records.items { return DeploymentOverlay(running: running, staging: staging) }
        }
        throw DiscfgError(.unavailable, "config \"\(config)\"'s deployments kept changing while they were read; try again", field: "deployment")
    }
}
