import Foundation
import Synchronization

extension MemoryStore: LeaseStore {
    public func grantLease(_ lease: LeaseRecord, in config: ConfigName) async throws {
        let lease = Self.wholeMilliseconds(lease)
        try leaseRecords.withLock { leases in
            guard leases[config]?[lease.id] == nil else { throw Self.leaseExists() }
            leases[config, default: [:]][lease.id] = lease
        }
    }

    public func renewLease(_ id: Int64, in config: ConfigName, at now: Date, until expiresAt: Date) async throws -> LeaseRecord? {
        leaseRecords.withLock { leases in
            guard var lease = leases[config]?[id], !lease.revoking, lease.expiresAt.milliseconds > now.milliseconds else { return nil }
            lease.expiresAt = Date(milliseconds: expiresAt.milliseconds)
            leases[config]?[id] = lease
            return lease
        }
    }

    public func lease(_ id: Int64, in config: ConfigName) async throws -> LeaseRecord? {
        leaseRecords.withLock { $0[config]?[id] }
    }

    public func leases(in config: ConfigName) async throws -> [LeaseRecord] {
        leaseRecords.withLock { Array(($0[config] ?? [:]).values) }.sorted { $0.id < $1.id }
    }

    public func claimLease(_ id: Int64, in config: ConfigName, expiredBy now: Date?) async throws -> LeaseRecord? {
        leaseRecords.withLock { leases in
            guard var lease = leases[config]?[id] else { return nil }
            // A lease already claimed is returned again, so a revocation cut short resumes.
            if !lease.revoking, let now, lease.expiresAt.milliseconds > now.milliseconds { return nil }
            lease.revoking = true
            leases[config]?[id] = lease
            return lease
        }
    }

    public func dropLease(_ id: Int64, in config: ConfigName) async throws {
        leaseRecords.withLock { leases in
            leases[config]?[id] = nil
            if leases[config]?.isEmpty == true { leases[config] = nil }
        }
    }

    /// The lease with its expiry in whole milliseconds, as every store keeps it.
    private static func wholeMilliseconds(_ lease: LeaseRecord) -> LeaseRecord {
        var lease = lease
        lease.expiresAt = Date(milliseconds: lease.expiresAt.milliseconds)
        return lease
    }
}
