import DiscfgAWS
import DiscfgCore
import Foundation

/// How a table pays for throughput.
public enum TableCapacity: Sendable, Hashable, CustomStringConvertible {
    /// On-demand (`PAY_PER_REQUEST`), the default: no capacity to plan.
    case onDemand
    /// Provisioned read and write capacity units (the original discfg's create settings).
    case provisioned(read: Int, write: Int)

    public var description: String {
        switch self {
        case .onDemand: "on-demand"
        case .provisioned(let read, let write): "provisioned (\(read) RCU, \(write) WCU)"
        }
    }

    /// `--read-capacity` / `--write-capacity` as given: both or neither.
    public init?(read: Int?, write: Int?) throws {
        switch (read, write) {
        case (nil, nil): return nil
        case (let read?, let write?):
            guard read > 0, write > 0 else {
                throw DiscfgError.invalid("capacity", "--read-capacity and --write-capacity must be positive, got \(read) and \(write)")
            }
            self = .provisioned(read: read, write: write)
        default:
            throw DiscfgError.invalid("capacity", "give both --read-capacity and --write-capacity (or neither, for on-demand billing)")
        }
    }
}

/// What `DescribeTable` and `DescribeTimeToLive` say about a table.
public struct TableStatus: Sendable, Hashable {
    /// The table name.
    public var name: String
    /// `CREATING`, `ACTIVE`, `UPDATING`, `DELETING` …
    public var status: String
    /// On-demand or provisioned, with the units.
    public var capacity: TableCapacity
    /// DynamoDB's approximate item count (refreshed about every six hours).
    public var itemCount: Int
    /// DynamoDB's approximate size in bytes.
    public var sizeBytes: Int
    /// The stream's view type (`NEW_IMAGE`), or nil when the stream is off.
    public var streamViewType: String?
    /// `ENABLED`, `ENABLING`, `DISABLED` …, for ``timeToLiveAttribute``.
    public var timeToLive: String
    /// The attribute DynamoDB's TTL reads, when TTL is on (discfg's is
    /// ``DynamoDBTable/expectedTimeToLiveAttribute``).
    public var timeToLiveAttribute: String?
    /// The secondary indexes the table has.
    public var indexes: [String]
}

/// The table one ``DynamoDBStore`` uses: created with discfg's key schema, indexes,
/// stream and TTL; described; resized.
///
/// ```swift
/// let table = store.table
/// try await table.ensure(capacity: .onDemand) { print($0) }
/// ```
public struct DynamoDBTable: Sendable {
    let connection: DynamoDBConnection

    /// The table name.
    public var name: String { connection.table }

    /// The attribute discfg's items carry their expiry in for DynamoDB's TTL.
    public static var expectedTimeToLiveAttribute: String { DynamoDBTableDefinition.ttlAttribute.rawValue }
    /// The stream view the notification function reads (history items whole).
    public static var expectedStreamViewType: String { DynamoDBTableDefinition.streamView }
    /// The secondary indexes discfg's reads need (a table made before key chains also has
    /// `byKey`, which reads of events written then use).
    public static var expectedIndexes: [String] { DynamoDBIndex.created.map(\.rawValue) }

    /// How often ``waitUntilActive(progress:timeout:)`` asks.
    public var pollInterval: Duration = .seconds(1)

    /// The table's status, or nil when it does not exist.
    public func describe() async throws -> TableStatus? {
        let description: DescribeTableOutput.Table
        do {
            description = try await connection.raw("DescribeTable", ["TableName": name], as: DescribeTableOutput.self).Table
        } catch let error as AWSError where error.code == .resourceNotFound {
            return nil
        } catch {
            throw connection.mapped(error, operation: "DescribeTable")
        }
        let ttl = try await connection.call("DescribeTimeToLive", ["TableName": name], as: DescribeTimeToLiveOutput.self)
        let provisioned = description.ProvisionedThroughput
        let capacity: TableCapacity = description.BillingModeSummary?.BillingMode == "PAY_PER_REQUEST" || (provisioned?.ReadCapacityUnits ?? 0) == 0
            ? .onDemand
            : .provisioned(read: provisioned?.ReadCapacityUnits ?? 0, write: provisioned?.WriteCapacityUnits ?? 0)
        let stream = description.StreamSpecification
        return TableStatus(
            name: name, status: description.TableStatus ?? "UNKNOWN", capacity: capacity,
            itemCount: description.ItemCount ?? 0, sizeBytes: description.TableSizeBytes ?? 0,
            streamViewType: stream?.StreamEnabled == true ? stream?.StreamViewType : nil,
            timeToLive: ttl.TimeToLiveDescription?.TimeToLiveStatus ?? "DISABLED",
            timeToLiveAttribute: ttl.TimeToLiveDescription?.AttributeName,
            indexes: (description.LocalSecondaryIndexes ?? []).map(\.IndexName)
        )
    }

    /// Creates the table unless it exists, waits until it is ACTIVE, and turns on TTL on
    /// `ttl`. Returns whether it created the table.
    /// - Parameters:
    ///   - capacity: billing for a new table; an existing table keeps its own.
    ///   - progress: told what is happening, e.g. "waiting for table discfg to become ACTIVE (CREATING, 3 s)".
    /// - Throws: `invalidArgument` when a table of that name exists but lacks discfg's indexes.
    @discardableResult
    public func ensure(capacity: TableCapacity = .onDemand, progress: @Sendable (String) -> Void = { _ in }) async throws -> Bool {
        var created = false
        if let existing = try await describe() {
            let missing = Self.expectedIndexes.filter { !existing.indexes.contains($0) }
            guard missing.isEmpty else {
                throw DiscfgError.invalid("store", "DynamoDB table \"\(name)\" exists but was not created by discfg (it lacks the index \(missing.joined(separator: ", "))); choose another table name")
            }
        } else {
            progress("creating DynamoDB table \(name) (\(capacity))")
            do {
                _ = try await connection.raw("CreateTable", CreateTableInput(name: name, capacity: capacity), as: IgnoredOutput.self)
                created = true
            } catch let error as AWSError where error.awsCode == "ResourceInUseException" {
                // Someone else is creating it right now; wait for theirs.
            } catch {
                throw connection.mapped(error, operation: "CreateTable")
            }
        }
        try await waitUntilActive(progress: progress)
        let ttl = try await connection.call("DescribeTimeToLive", ["TableName": name], as: DescribeTimeToLiveOutput.self)
        if !["ENABLED", "ENABLING"].contains(ttl.TimeToLiveDescription?.TimeToLiveStatus ?? "DISABLED") {
            progress("turning on TTL (attribute ttl) for table \(name)")
            _ = try await connection.call("UpdateTimeToLive", UpdateTimeToLiveInput(TableName: name), as: IgnoredOutput.self)
        }
        return created
    }

    /// Waits until the table is ACTIVE, telling `progress` about every check.
    public func waitUntilActive(progress: @Sendable (String) -> Void = { _ in }, timeout: Duration = .seconds(600)) async throws {
        let clock = ContinuousClock()
        let start = clock.now
        while true {
            guard let status = try await describe() else {
                throw DynamoDBErrors.tableMissing(DynamoDBErrors.Context(table: name, region: connection.client.configuration.region, endpoint: connection.client.configuration.endpoint))
            }
            let waited = clock.now - start
            if status.status == "ACTIVE" {
                progress("table \(name) is ACTIVE")
                return
            }
            guard waited < timeout else {
                throw DiscfgError(.unavailable, "DynamoDB table \"\(name)\" is still \(status.status) after \(waited.components.seconds) s; try again later")
            }
            progress("waiting for table \(name) to become ACTIVE (\(status.status), \(waited.components.seconds) s)")
            try await Task.sleep(for: pollInterval)
        }
    }

    /// Switches the table to `capacity` (`UpdateTable`) and waits until it is ACTIVE again.
    public func updateCapacity(_ capacity: TableCapacity, progress: @Sendable (String) -> Void = { _ in }) async throws {
        guard let current = try await describe() else {
            throw DynamoDBErrors.tableMissing(DynamoDBErrors.Context(table: name, region: connection.client.configuration.region, endpoint: connection.client.configuration.endpoint))
        }
        guard current.capacity != capacity else { return }
        progress("changing table \(name) to \(capacity)")
        _ = try await connection.call("UpdateTable", UpdateTableInput(name: name, capacity: capacity), as: IgnoredOutput.self)
        try await waitUntilActive(progress: progress)
    }
}

// MARK: - Request and response shapes

struct CreateTableInput: Encodable {
    struct AttributeDefinition: Encodable { var AttributeName: String; var AttributeType: String }
    struct KeySchemaElement: Encodable { var AttributeName: String; var KeyType: String }
    struct Projection: Encodable { var ProjectionType: String }
    struct LocalSecondaryIndex: Encodable { var IndexName: String; var KeySchema: [KeySchemaElement]; var Projection: Projection }
    struct StreamSpecification: Encodable { var StreamEnabled = true; var StreamViewType = DynamoDBTableDefinition.streamView }

    var TableName: String
    var AttributeDefinitions = DynamoDBTableDefinition.keyAttributes.map { AttributeDefinition(AttributeName: $0.0.rawValue, AttributeType: $0.1) }
    var KeySchema = Self.keys(sortedBy: DynamoDBTableDefinition.sortKey)
    var LocalSecondaryIndexes = DynamoDBIndex.created.map {
        LocalSecondaryIndex(IndexName: $0.rawValue, KeySchema: keys(sortedBy: $0.sortKey), Projection: .init(ProjectionType: $0.projection))
    }
    var BillingMode: String
    var ProvisionedThroughput: Throughput?
    var StreamSpecification = StreamSpecification()

    init(name: String, capacity: TableCapacity) {
        TableName = name
        (BillingMode, ProvisionedThroughput) = capacity.billing
    }

    /// The table's partition key with `sortKey`.
    static func keys(sortedBy sortKey: Attribute) -> [KeySchemaElement] {
        [KeySchemaElement(AttributeName: DynamoDBTableDefinition.partitionKey.rawValue, KeyType: "HASH"), KeySchemaElement(AttributeName: sortKey.rawValue, KeyType: "RANGE")]
    }
}

extension TableCapacity {
    /// The billing mode and throughput DynamoDB's CreateTable and UpdateTable take.
    var billing: (mode: String, throughput: Throughput?) {
        switch self {
        case .onDemand: ("PAY_PER_REQUEST", nil)
        case .provisioned(let read, let write): ("PROVISIONED", Throughput(ReadCapacityUnits: read, WriteCapacityUnits: write))
        }
    }
}

struct Throughput: Codable {
    var ReadCapacityUnits: Int
    var WriteCapacityUnits: Int
}

struct UpdateTableInput: Encodable {
    var TableName: String
    var BillingMode: String
    var ProvisionedThroughput: Throughput?

    init(name: String, capacity: TableCapacity) {
        TableName = name
        (BillingMode, ProvisionedThroughput) = capacity.billing
    }
}

struct UpdateTimeToLiveInput: Encodable {
    struct Specification: Encodable { var Enabled = true; var AttributeName = DynamoDBTableDefinition.ttlAttribute.rawValue }
    var TableName: String
    var TimeToLiveSpecification = Specification()
}

struct DescribeTimeToLiveOutput: Decodable {
    struct Description: Decodable { var TimeToLiveStatus: String?; var AttributeName: String? }
    var TimeToLiveDescription: Description?
}

struct DescribeTableOutput: Decodable {
    struct Table: Decodable {
        struct BillingModeSummary: Decodable { var BillingMode: String? }
        struct ProvisionedThroughput: Decodable { var ReadCapacityUnits: Int?; var WriteCapacityUnits: Int? }
        struct StreamSpecification: Decodable { var StreamEnabled: Bool?; var StreamViewType: String? }
        struct Index: Decodable { var IndexName: String }
        var TableStatus: String?
        var ItemCount: Int?
        var TableSizeBytes: Int?
        var BillingModeSummary: BillingModeSummary?
        var ProvisionedThroughput: ProvisionedThroughput?
        var StreamSpecification: StreamSpecification?
        var LocalSecondaryIndexes: [Index]?
    }
    var Table: Table
}
