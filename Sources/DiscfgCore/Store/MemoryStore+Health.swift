import Foundation

extension MemoryStore {
    public func reportHealth(_ report: HealthReport, deployment id: String, in config: ConfigName) async throws {
        try Deployment.checkID(id)
        guard try await get(DeploymentKeys.runningRecord(id), in: config, atRevision: nil) != nil else {
            throw HealthReport.notRunning(id, in: config)
        }
        try healthRecords.withLock { records in
            let kept = records[config]?[id] ?? [:]
            if try report.replaces(kept[report.reporter], reporters: kept.count) {
                records[config, default: [:]][id, default: [:]][report.reporter] = report
            }
        }
    }

    public func healthReports(deployment id: String, in config: ConfigName) async throws -> [HealthReport] {
        _ = try await configInfo(config)
        return healthRecords.withLock { ($0[config]?[id] ?? [:]).values.sorted { $0.reporter < $1.reporter } }
    }
}
