import DiscfgCore
import Foundation

/// Deployments' health reports: kept one per reporter while the deployment runs, a newer
/// report replacing an older and never the reverse, apart from the config's keys and
/// history; refused for a deployment that does not run; gone with the config.
public struct HealthReportChecks: Sendable {
    let conformance: StoreConformance

    private static let id = "00000000000000c1"

    /// A config with `/app/a` = 1 and a deployment of `/app/a` = 2 running over it.
    private func deploying(_ store: any ConfigStore) async throws -> ConfigName {
        let config = try await store.makeConfig()
        try await store.set("/app/a", "1", in: config)
        let strategy = try DeploymentStrategy(growth: .linear, stepBasisPoints: 5000, intervalSeconds: 600, bakeSeconds: 600)
        let plan = DeploymentPlan(
            id: Self.id, prefix: try KeyPrefix("/app/"), entries: [.init(key: try Key("/app/a"), value: Data(text: "2"))], replace: false,
            strategy: strategy, signals: [.health], message: "raise a"
        )
        _ = try await store.changeDeployment(.start(plan), in: config)
        return config
    }

    private func report(_ reporter: String, errors: UInt64, requests: UInt64 = 100, at: Int64) throws -> HealthReport {
        try HealthReport(
            reporter: reporter, stable: .init(requests: requests, errors: 0, readers: 3), candidate: .init(requests: requests, errors: errors, readers: 1), at: at
        )
    }

    public func reportsAreKeptPerReporterApartFromHistory() async throws {
        try await conformance.withStore { store, clock in
            let config = try await deploying(store)
            let before = try await store.observableState(of: config)
            let now = clock.now().milliseconds
            try await store.reportHealth(report("web-1#a", errors: 1, at: now), deployment: Self.id, in: config)
            try await store.reportHealth(report("web-2#b", errors: 2, at: now), deployment: Self.id, in: config)
            try await store.reportHealth(report("web-1#a", errors: 5, requests: 200, at: now + 1000), deployment: Self.id, in: config)
            try await store.reportHealth(report("web-1#a", errors: 3, at: now + 500), deployment: Self.id, in: config)
            let reports = try await store.healthReports(deployment: Self.id, in: config)
            expectEqual(reports.map(\.reporter), ["web-1#a", "web-2#b"], "one report per reporter, in reporter order")
            expectEqual(reports.first?.candidate.errors, 5, "a newer report replaces the reporter's last; an older one arriving late does not")
            let health = DeploymentHealth(reports)
            expectEqual(health.candidate, .init(requests: 300, errors: 7, readers: 2), "the reports add up")
            expectEqual(health.stable, .init(requests: 300, errors: 0, readers: 6))
            expectEqual(health.latest, now + 1000)
            try await expectEqual(store.observableState(of: config), before, "a report makes no revision and changes no key")
            try await expectEqual(store.healthReports(deployment: "00000000000000c2", in: config), [], "no reports for a deployment nobody reported on")
            try await store.deleteConfig(config)
            try await expectError(.configNotFound, "reports of a deleted config") { try await store.healthReports(deployment: Self.id, in: config) }
            _ = try await store.createConfig(config, settings: ConfigSettings())
            try await expectEqual(store.healthReports(deployment: Self.id, in: config), [], "deleting a config deletes its reports")
        }
    }

    public func aReportForNoRunningDeploymentIsRefused() async throws {
        try await conformance.withStore { store, clock in
            let config = try await deploying(store)
            let now = clock.now().milliseconds
            let sample = try report("web-1#a", errors: 1, at: now)
            try await expectError(.keyNotFound, "an unknown deployment", mentioning: ["00000000000000c2"]) {
                try await store.reportHealth(sample, deployment: "00000000000000c2", in: config)
            }
            try await expectError(.invalidArgument, "a malformed id", mentioning: ["16 lowercase"]) {
                try await store.reportHealth(sample, deployment: "../x", in: config)
            }
            try await expectError(.configNotFound, "an unknown config") {
                try await store.reportHealth(sample, deployment: Self.id, in: ConfigName("no-such-config-c1"))
            }
            _ = try await store.changeDeployment(.transition(id: Self.id, .rollingBack, reason: "by hand", after: 0), in: config)
            _ = try await store.changeDeployment(.transition(id: Self.id, .rolledBack, reason: "", after: 1), in: config)
            try await expectError(.keyNotFound, "an ended deployment", mentioning: [Self.id]) {
                try await store.reportHealth(sample, deployment: Self.id, in: config)
            }
            try await expectEqual(store.healthReports(deployment: Self.id, in: config), [], "nothing was kept")
        }
    }
}

extension StoreConformance {
    /// Deployments' health reports.
    public var healthReports: HealthReportChecks { HealthReportChecks(conformance: self) }
}
