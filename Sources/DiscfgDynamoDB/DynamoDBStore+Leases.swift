import DiscfgAWS
import DiscfgCore
import Foundation

/// etcd leases live in their config's lease partition (`pk=CONFIG#l`, `sk=` the id in
/// decimal), one item each, outside the config's partition: a grant or keep-alive is one
/// conditional write of one item and never contends with the config's changes. Each
/// write is conditioned on the item as it must be, so a renewal and a claim of the same
/// lease are decided by DynamoDB, one before the other. Deleting the config purges the
/// partition before the meta item goes, so an interrupted delete leaves none behind.
extension DynamoDBStore: LeaseStore {
    public func grantLease(_ lease: LeaseRecord, in config: ConfigName) async throws {
        var item = DynamoDBLayout.leaseKey(config, lease.id)
        item[.leaseTTL] = .number(lease.ttl)
        item[.leaseExpiresAt] = .number(lease.expiresAt.milliseconds)
        if lease.revoking { item[.revoking] = .bool(true) }
        if let owner = lease.owner {
            item[.leaseOwnerKind] = .s(owner.kind.rawValue)
            item[.leaseOwnerID] = .s(owner.id)
            if let scopes = owner.scopes { item[.leaseOwnerScopes] = .l(scopes.map { .s($0.description) }) }
        }
        let input = PutItemInput(table: connection.table, item: item, condition: .itemAbsent)
        do {
            _ = try await connection.raw("PutItem", input, as: IgnoredOutput.self)
        } catch let error as AWSError where error.code == .conditionalCheckFailed {
            throw Self.leaseExists()
        } catch {
            throw connection.mapped(error, operation: "PutItem")
        }
    }

    public func renewLease(_ id: Int64, in config: ConfigName, at now: Date, until expiresAt: Date) async throws -> LeaseRecord? {
        try await updateLease(
            id, in: config,
            update: Expression("SET \(.leaseExpiresAt) = :until", values: [":until": .number(expiresAt.milliseconds)]),
            condition: Expression(
                "attribute_exists(\(.pk)) AND attribute_not_exists(\(.revoking)) AND \(.leaseExpiresAt) > :now",
                values: [":now": .number(now.milliseconds)]
            )
        )
    }

    public func lease(_ id: Int64, in config: ConfigName) async throws -> LeaseRecord? {
        try await connection.getItem(DynamoDBLayout.leaseKey(config, id), consistent: true).flatMap(Self.lease)
    }

    public func leases(in config: ConfigName) async throws -> [LeaseRecord] {
        // Sort keys are decimal text, which DynamoDB orders as text: order by number here.
        let items = try await connection.queryAll(QueryInput(table: connection.table, key: .partition(DynamoDBLayout.leasePK(config)), consistent: true))
        return items.compactMap(Self.lease).sorted { $0.id < $1.id }
    }

    public func claimLease(_ id: Int64, in config: ConfigName, expiredBy now: Date?) async throws -> LeaseRecord? {
        // A lease already claimed matches again, so a revocation cut short resumes.
        let condition = now.map {
            Expression(
                "attribute_exists(\(.pk)) AND (attribute_exists(\(.revoking)) OR \(.leaseExpiresAt) <= :now)",
                values: [":now": .number($0.milliseconds)]
            )
        } ?? .itemExists
        return try await updateLease(id, in: config, update: Expression("SET \(.revoking) = :true", values: [":true": .bool(true)]), condition: condition)
    }

    public func dropLease(_ id: Int64, in config: ConfigName) async throws {
        let input = DeleteItemInput(table: connection.table, key: DynamoDBLayout.leaseKey(config, id))
        do {
            _ = try await connection.raw("DeleteItem", input, as: IgnoredOutput.self)
        } catch {
            throw connection.mapped(error, operation: "DeleteItem")
        }
    }

    /// Applies `update` to the lease if `condition` holds, and returns the lease as it
    /// left it; nil when the condition failed.
    private func updateLease(_ id: Int64, in config: ConfigName, update: Expression, condition: Expression) async throws -> LeaseRecord? {
        var input = UpdateItemInput(table: connection.table, key: DynamoDBLayout.leaseKey(config, id), update: update, condition: condition)
        input.ReturnValues = "ALL_NEW"
        do {
            let output = try await connection.raw("UpdateItem", input, as: UpdateItemOutput.self)
            return output.Attributes.flatMap(Self.lease)
        } catch let error as AWSError where error.code == .conditionalCheckFailed {
            return nil
        } catch {
            throw connection.mapped(error, operation: "UpdateItem")
        }
    }

    private static func lease(_ item: Attributes) -> LeaseRecord? {
        guard let id = item[.sk]?.string.flatMap({ Int64($0) }), let ttl = item[.leaseTTL]?.int64, let expiresAt = item[.leaseExpiresAt]?.int64 else { return nil }
        var owner: LeaseOwner?
        if let kind = item[.leaseOwnerKind]?.string.flatMap(Principal.Kind.init(rawValue:)), let ownerID = item[.leaseOwnerID]?.string {
            var scopes: [AccessScope]?
            // A scope that does not parse is left out: the owner is told of less, never more.
            if case .l(let texts)? = item[.leaseOwnerScopes] { scopes = texts.compactMap { $0.string.flatMap { try? AccessScope($0) } } }
            owner = LeaseOwner(kind: kind, id: ownerID, scopes: scopes)
        }
        return LeaseRecord(id: id, ttl: ttl, expiresAt: Date(milliseconds: expiresAt), revoking: item[.revoking]?.boolValue ?? false, owner: owner)
    }
}
