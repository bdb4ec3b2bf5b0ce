import DiscfgCore
import Foundation

extension SQLiteStore {
    public func reportHealth(_ report: HealthReport, deployment id: String, in config: ConfigName) async throws {
        try Deployment.checkID(id)
        let body = String(decoding: try JSONEncoder().encode(report), as: UTF8.self)
        try await writer.write { connection in
            _ = try Self.requireConfig(config, connection)
            let name = SQLiteValue.text(config.rawValue)
            let record = DeploymentKeys.runningRecord(id).path
            guard try connection.first("SELECT 1 FROM kv WHERE config = ? AND key = ?", [name, .text(record)], { _ in true }) != nil else {
                throw HealthReport.notRunning(id, in: config)
            }
            let stored = try connection.first(
                "SELECT report FROM health_reports WHERE config = ? AND deployment = ? AND reporter = ?", [name, .text(id), .text(report.reporter)]
            ) { try Self.healthReport($0) }
            let reporters = try connection.first("SELECT count(*) FROM health_reports WHERE config = ? AND deployment = ?", [name, .text(id)]) { $0.integer(0) } ?? 0
            guard try report.replaces(stored, reporters: Int(reporters)) else { return }
            try connection.run(
                "INSERT OR REPLACE INTO health_reports (config, deployment, reporter, report) VALUES (?, ?, ?, ?)",
                [name, .text(id), .text(report.reporter), .text(body)]
            )
        }
    }

    public func healthReports(deployment id: String, in config: ConfigName) async throws -> [HealthReport] {
        try readers.read { connection in
            _ = try Self.requireConfig(config, connection)
            return try connection.query(
                "SELECT report FROM health_reports WHERE config = ? AND deployment = ? ORDER BY reporter", [.text(config.rawValue), .text(id)]
            ) { try Self.healthReport($0) }
        }
    }

    private static func healthReport(_ row: SQLiteRow) throws -> HealthReport {
        try JSONDecoder().decode(HealthReport.self, from: Data(row.text(0).utf8))
    }
}
