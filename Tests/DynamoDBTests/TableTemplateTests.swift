import DiscfgAWS
import DiscfgCore
@testable import DiscfgDynamoDB
import Foundation
import Testing
import Yams

/// The table `discfg init` creates and the table `deploy/template.yaml` deploys are the
/// same table: keys, attribute types, indexes and their projections, stream and TTL.
/// Nothing else holds the two together, so a change to one fails here until the other
/// follows.
@Suite("DynamoDB: the deployment template's table is the table discfg creates")
struct TableTemplateTests {
    /// What makes two tables the same for discfg, in one comparable form.
    struct Shape: Equatable, CustomStringConvertible {
        var attributes: [String: String] = [:]
        var keys: [String] = []
        /// Index name → its keys (`name:TYPE`) and projection.
        var indexes: [String: [String]] = [:]
        var streamView: String?
        var ttlAttribute: String?

        var description: String {
            "attributes \(attributes.sorted { $0.key < $1.key }), keys \(keys), indexes \(indexes.sorted { $0.key < $1.key }), stream \(streamView ?? "none"), ttl \(ttlAttribute ?? "none")"
        }
    }

    @Test("keys, attributes, indexes, projections, stream view and TTL attribute agree")
    func sameTable() async throws {
        let created = try await Self.createdShape()
        let deployed = try Self.templateShape()
        #expect(created == deployed, "discfg init: \(created)\ntemplate:    \(deployed)")
        #expect(!created.indexes.isEmpty && created.ttlAttribute != nil && created.streamView != nil, "\(created)")
    }

    /// The table as DynamoDB (moto) describes it after `discfg init` made it.
    static func createdShape() async throws -> Shape {
        let store = try await makeStore(create: true)
        let request = try JSONSerialization.data(withJSONObject: ["TableName": store.table.name])
        let table = try #require(try JSONSerialization.jsonObject(with: try await store.client.send(operation: "DescribeTable", body: request)) as? [String: Any])["Table"] as? [String: Any]
        let ttl = try #require(try JSONSerialization.jsonObject(with: try await store.client.send(operation: "DescribeTimeToLive", body: request)) as? [String: Any])["TimeToLiveDescription"] as? [String: Any]
        var shape = Shape()
        for definition in table?["AttributeDefinitions"] as? [[String: String]] ?? [] {
            shape.attributes[definition["AttributeName"] ?? ""] = definition["AttributeType"]
        }
        shape.keys = keys(table?["KeySchema"] as? [[String: String]] ?? [])
        for index in table?["LocalSecondaryIndexes"] as? [[String: Any]] ?? [] {
            let projection = (index["Projection"] as? [String: Any])?["ProjectionType"] as? String ?? "?"
            shape.indexes[index["IndexName"] as? String ?? ""] = keys(index["KeySchema"] as? [[String: String]] ?? []) + [projection]
        }
        if let stream = table?["StreamSpecification"] as? [String: Any], stream["StreamEnabled"] as? Bool == true {
            shape.streamView = stream["StreamViewType"] as? String
        }
        if ttl?["TimeToLiveStatus"] as? String == "ENABLED" { shape.ttlAttribute = ttl?["AttributeName"] as? String }
        return shape
    }

    /// The `Table` resource of `deploy/template.yaml`.
    static func templateShape() throws -> Shape {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../deploy/template.yaml").standardized.path
        let document = try #require(try Yams.compose(yaml: String(contentsOfFile: path, encoding: .utf8)))
        let properties = try #require(document["Resources"]?["Table"]?["Properties"])
        var shape = Shape()
        for definition in properties["AttributeDefinitions"]?.sequence ?? [] {
            shape.attributes[definition["AttributeName"]?.string ?? ""] = definition["AttributeType"]?.string
        }
        shape.keys = keys(properties["KeySchema"])
        for index in properties["LocalSecondaryIndexes"]?.sequence ?? [] {
            shape.indexes[index["IndexName"]?.string ?? ""] = keys(index["KeySchema"]) + [index["Projection"]?["ProjectionType"]?.string ?? "?"]
        }
        shape.streamView = properties["StreamSpecification"]?["StreamViewType"]?.string
        if properties["TimeToLiveSpecification"]?["Enabled"]?.bool == true {
            shape.ttlAttribute = properties["TimeToLiveSpecification"]?["AttributeName"]?.string
        }
        return shape
    }

    static func keys(_ schema: [[String: String]]) -> [String] {
        schema.map { "\($0["AttributeName"] ?? ""):\($0["KeyType"] ?? "")" }
    }

    static func keys(_ schema: Node?) -> [String] {
        (schema?.sequence ?? []).map { "\($0["AttributeName"]?.string ?? ""):\($0["KeyType"]?.string ?? "")" }
    }
}
