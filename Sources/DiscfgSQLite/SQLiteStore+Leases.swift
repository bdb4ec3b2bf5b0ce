import DiscfgCore
import Foundation

/// etcd leases live in the `leases` table, one row per lease, beside the config's keys
/// but outside its revisions. Each change is one write transaction, so a renewal and a
/// claim of the same lease are never interleaved.
extension SQLiteStore: LeaseStore {
    public func grantLease(_ lease: LeaseRecord, in config: ConfigName) async throws {
        // The owner's scopes as their text, as the `tokens` table keeps a token's.
        let scopes = try lease.owner?.scopes.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        try await writer.write { connection in
            let inserted = try connection.run(
                "INSERT OR IGNORE INTO leases (config, id, ttl, expires_at, revoking, owner_kind, owner_id, owner_scopes) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    .text(config.rawValue), .integer(lease.id), .integer(lease.ttl), .integer(lease.expiresAt.milliseconds), .integer(lease.revoking ? 1 : 0),
                    .optional(lease.owner?.kind.rawValue), .optional(lease.owner?.id), .optional(scopes),
                ]
            )
            guard inserted == 1 else { throw Self.leaseExists() }
        }
    }

    public func renewLease(_ id: Int64, in config: ConfigName, at now: Date, until expiresAt: Date) async throws -> LeaseRecord? {
        try await writer.write { connection in
            let key: [SQLiteValue] = [.text(config.rawValue), .integer(id)]
            let renewed = try connection.run(
                "UPDATE leases SET expires_at = ? WHERE config = ? AND id = ? AND revoking = 0 AND expires_at > ?",
                [.integer(expiresAt.milliseconds)] + key + [.integer(now.milliseconds)]
            )
            guard renewed == 1 else { return nil }
            return try connection.first("SELECT \(Self.leaseColumns) FROM leases WHERE config = ? AND id = ?", key, Self.lease)
        }
    }

    public func lease(_ id: Int64, in config: ConfigName) async throws -> LeaseRecord? {
        try readers.read { try $0.first("SELECT \(Self.leaseColumns) FROM leases WHERE config = ? AND id = ?", [.text(config.rawValue), .integer(id)], Self.lease) }
    }

    public func leases(in config: ConfigName) async throws -> [LeaseRecord] {
        try readers.read { try $0.query("SELECT \(Self.leaseColumns) FROM leases WHERE config = ? ORDER BY id", [.text(config.rawValue)], Self.lease) }
    }

    public func claimLease(_ id: Int64, in config: ConfigName, expiredBy now: Date?) async throws -> LeaseRecord? {
        try await writer.write { connection in
            let key: [SQLiteValue] = [.text(config.rawValue), .integer(id)]
            // A lease already claimed matches again, so a revocation cut short resumes.
            let claimed = try connection.run(
                "UPDATE leases SET revoking = 1 WHERE config = ? AND id = ? AND (revoking = 1 OR ?3 IS NULL OR expires_at <= ?3)",
                key + [.optional(now?.milliseconds)]
            )
            guard claimed == 1 else { return nil }
            return try connection.first("SELECT \(Self.leaseColumns) FROM leases WHERE config = ? AND id = ?", key, Self.lease)
        }
    }

    public func dropLease(_ id: Int64, in config: ConfigName) async throws {
        try await writer.write { connection in
            _ = try connection.run("DELETE FROM leases WHERE config = ? AND id = ?", [.text(config.rawValue), .integer(id)])
        }
    }

    private static let leaseColumns = "id, ttl, expires_at, revoking, owner_kind, owner_id, owner_scopes"

    private static func lease(_ row: SQLiteRow) throws -> LeaseRecord {
        var owner: LeaseOwner?
        if let kind = row.optionalText(4).flatMap(Principal.Kind.init(rawValue:)), let id = row.optionalText(5) {
            owner = LeaseOwner(kind: kind, id: id, scopes: try row.optionalText(6).map { try JSONDecoder().decode([AccessScope].self, from: Data($0.utf8)) })
        }
        return LeaseRecord(id: row.integer(0), ttl: row.integer(1), expiresAt: Date(milliseconds: row.integer(2)), revoking: row.integer(3) != 0, owner: owner)
    }
}
