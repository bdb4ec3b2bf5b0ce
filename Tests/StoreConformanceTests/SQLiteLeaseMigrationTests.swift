import DiscfgConformance
import DiscfgCore
import DiscfgSQLite
import Foundation
import Testing

/// A file written before leases were kept (schema 8) opens, keeps what it held, and
/// keeps leases from then on; one written before leases had owners (schema 9) keeps its
/// leases, without an owner, and records owners from then on.
@Suite("SQLite schema migration: leases")
struct SQLiteLeaseMigrationTests {
    @Test("a schema 8 file gains the leases table and keeps its keys")
    func schemaEightFileGainsLeases() async throws {
        try await SQLiteFileTests.withDirectory { directory in
            let path = directory.appendingPathComponent("eight.db").path
            let config = try ConfigName("app")
            do {
                let store = try SQLiteStore(path: path)
                _ = try await store.createConfig(config, settings: ConfigSettings())
                try await store.set("/a", "one", in: config)
            }
            // The file as schema 8 wrote it: no leases table.
            SQLiteFileTests.rewrite(path, "DROP TABLE leases; PRAGMA user_version = 8;")

            let store = try SQLiteStore(path: path)
            #expect(try await store.get(try Key("/a"), in: config)?.text == "one")
            #expect(try await store.leases(in: config).isEmpty)
            let lease = LeaseRecord(id: 7, ttl: 10, expiresAt: Date(milliseconds: 1_767_225_610_000))
            try await store.grantLease(lease, in: config)
            #expect(try await store.lease(7, in: config) == lease)
            #expect(try await store.revision(of: config) == 1, "a grant changes no revision")
            #expect(try SQLiteStoreFile(path: path).schemaVersion == SQLiteStoreFile.supportedSchemaVersion)
        }
    }

    @Test("a schema 9 file's leases are kept without an owner; leases granted after record theirs")
    func schemaNineFileGainsLeaseOwners() async throws {
        try await SQLiteFileTests.withDirectory { directory in
            let path = directory.appendingPathComponent("nine.db").path
            let config = try ConfigName("app")
            let older = LeaseRecord(id: 7, ttl: 10, expiresAt: Date(milliseconds: 1_767_225_610_000))
            do {
                let store = try SQLiteStore(path: path)
                _ = try await store.createConfig(config, settings: ConfigSettings())
                try await store.grantLease(older, in: config)
            }
            // The file as schema 9 wrote it: leases without owner columns.
            SQLiteFileTests.rewrite(
                path, "ALTER TABLE leases DROP COLUMN owner_kind; ALTER TABLE leases DROP COLUMN owner_id; ALTER TABLE leases DROP COLUMN owner_scopes; PRAGMA user_version = 9;"
            )

            let store = try SQLiteStore(path: path)
            #expect(try await store.leases(in: config) == [older])
            let owner = LeaseOwner(kind: .token, id: "k3f9a2b7c1d0", scopes: [try AccessScope("app:etcd:/tenant-a/")])
            let owned = LeaseRecord(id: 8, ttl: 10, expiresAt: Date(milliseconds: 1_767_225_610_000), owner: owner)
            try await store.grantLease(owned, in: config)
            #expect(try await store.lease(8, in: config)?.owner == owner)
            #expect(try SQLiteStoreFile(path: path).schemaVersion == SQLiteStoreFile.supportedSchemaVersion)
        }
    }
}
