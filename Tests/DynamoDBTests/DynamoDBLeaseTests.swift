import DiscfgConformance
import DiscfgCore
@testable import DiscfgDynamoDB
import Foundation
import Testing

/// What etcd leases cost on DynamoDB, and that a config's delete cut short leaves none of
/// its leases to the config created again under its name.
@Suite("DynamoDB store: leases")
struct DynamoDBLeaseTests {
    @Test("a grant is one PutItem, a keep-alive and a claim one UpdateItem each, a read one GetItem, a list one Query; none touches the config")
    func eachLeaseCallIsOneRequest() async throws {
        let clock = ManualClock()
        let store = try await makeStore(clock: clock)
        let config = try await store.makeConfig()
        await store.metrics.reset()
        let lease = LeaseRecord(id: 42, ttl: 10, expiresAt: clock.now().addingTimeInterval(10))
        try await store.grantLease(lease, in: config)
        _ = try await store.renewLease(42, in: config, at: clock.now(), until: clock.now().addingTimeInterval(10))
        _ = try await store.claimLease(42, in: config, expiredBy: nil)
        _ = try await store.lease(42, in: config)
        _ = try await store.leases(in: config)
        try await store.dropLease(42, in: config)
        let metrics = await store.metrics.snapshot()
        #expect(metrics.keys.sorted() == ["DeleteItem", "GetItem", "PutItem", "Query", "UpdateItem"])
        #expect(metrics["PutItem"]?.roundTrips == 1)
        #expect(metrics["UpdateItem"]?.roundTrips == 2)
        #expect(metrics["GetItem"]?.roundTrips == 1)
        #expect(metrics["Query"]?.roundTrips == 1)
        #expect(metrics["DeleteItem"]?.roundTrips == 1)
    }

    @Test("a delete cut short after marking the config leaves its leases; creating the config again purges them")
    func anInterruptedDeleteLeavesNoLeasesToTheNextConfig() async throws {
        let clock = ManualClock()
        let store = try await makeStore(clock: clock)
        let config = try await store.makeConfig()
        try await store.grantLease(LeaseRecord(id: 1, ttl: 10, expiresAt: clock.now().addingTimeInterval(10)), in: config)
        try await store.grantLease(LeaseRecord(id: -1, ttl: 10, expiresAt: clock.now().addingTimeInterval(10), revoking: true), in: config)
        // The delete's first step alone: the meta item marked, nothing removed yet.
        var meta = try #require(try await store.meta(config, consistent: true))
        let lock = meta.lock
        meta.deleting = true
        meta.lock += 1
        try await store.putMeta(meta, expectedLock: lock)
        #expect(try await store.leases(in: config).map(\.id) == [-1, 1])

        _ = try await store.createConfig(config, settings: ConfigSettings())
        #expect(try await store.leases(in: config).isEmpty)
        #expect(try await store.lease(1, in: config) == nil)
    }
}
