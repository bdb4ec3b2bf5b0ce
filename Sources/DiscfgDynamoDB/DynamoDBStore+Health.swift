import DiscfgAWS
import DiscfgCore
import Foundation

/// Deployments' health reports, in the config's `#r` partition: one item per deployment
/// and reporter. A report costs one consistent read of the deployment's record, one of the
/// reporter's item and one write; a reporter's first also counts the deployment's
/// reporters, once. Reading them is one `Query` of the deployment's items.
extension DynamoDBStore {
    public func reportHealth(_ report: HealthReport, deployment id: String, in config: ConfigName) async throws {
        try Deployment.checkID(id)
        guard try await connection.getItem(DynamoDBLayout.itemKey(config, DeploymentKeys.runningRecord(id)), consistent: true, projection: [.pk]) != nil else {
            _ = try await configInfo(config)
            throw HealthReport.notRunning(id, in: config)
        }
        let key = DynamoDBLayout.healthKey(config, id, report.reporter)
        let stored = try await connection.getItem(key, consistent: true, projection: [.value]).flatMap { $0[.value]?.string }
        let reporters = stored == nil ? try await healthItems(id, in: config, projection: [.pk]).count : 0
        guard try report.replaces(try stored.map(Self.decodeReport), reporters: reporters) else { return }
        var item = key
        item[.value] = .s(String(decoding: try JSONEncoder().encode(report), as: UTF8.self))
        item[.at] = .number(report.at)
        item[.ttl] = .number(report.at / 1000 + DynamoDBLayout.healthRetentionSeconds)
        // A newer report written meanwhile stays: reports never go back in time.
        let condition = Expression("attribute_not_exists(\(.pk)) OR \(.at) <= :at", values: [":at": .number(report.at)])
        do {
            _ = try await connection.raw("PutItem", PutItemInput(table: connection.table, item: item, condition: condition), as: IgnoredOutput.self)
        } catch let error as AWSError where error.code == .conditionalCheckFailed {
            return
        } catch {
            throw connection.mapped(error, operation: "PutItem")
        }
    }

    public func healthReports(deployment id: String, in config: ConfigName) async throws -> [HealthReport] {
        let items = try await healthItems(id, in: config, projection: [.value])
        if items.isEmpty { _ = try await configInfo(config) }
        return try items.compactMap { $0[.value]?.string }.map(Self.decodeReport).sorted { $0.reporter < $1.reporter }
    }

    /// The deployment's report items, every page.
    private func healthItems(_ id: String, in config: ConfigName, projection: [Attribute]) async throws -> [Attributes] {
        let pk = DynamoDBLayout.healthPK(config)
        // Sort keys are `ID/REPORTER`; a reporter holds no `/`, and `0` follows `/`.
        var query = QueryInput(table: connection.table, key: .partition(pk, .sk, from: id + "/", through: id + "0"), consistent: true)
        query.project(projection)
        var items: [Attributes] = []
        while true {
            let page = try await connection.queryPage(query)
            items += page.Items ?? []
            guard let next = page.LastEvaluatedKey else { return items }
            query.ExclusiveStartKey = next
        }
    }

    private static func decodeReport(_ text: String) throws -> HealthReport {
        do {
            return try JSONDecoder().decode(HealthReport.self, from: Data(text.utf8))
        } catch {
            throw DiscfgError(.internal, "a stored health report cannot be read: \(error)", field: "report")
        }
    }
}

/// A health report read from the table's stream: which config's deployment it is for, so
/// the stream handler checks that config's deployments as the report arrives.
public enum StreamedHealthReport {
    /// The config a stream image's health report is for, or nil when the image is not one.
    public static func config(newImage: Attributes) -> ConfigName? {
        newImage[.pk]?.string.flatMap(DynamoDBLayout.config(ofHealthPK:))
    }
}
