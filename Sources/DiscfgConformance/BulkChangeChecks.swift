import DiscfgCore
import Foundation

/// A change of many keys — an import, a prefix delete, a document written whole — is one
/// change: one revision that every key carries, one entry in the change log with its
/// message, and all or nothing for every reader.
public struct BulkChangeChecks: Sendable {
    let conformance: StoreConformance

    /// How many keys a bulk change holds in the checks every store runs: within one
    /// DynamoDB transaction (100 writes: the meta item, then a key and its event each, and
    /// a deleted key's tombstone).
    static let keysInOneCommit = 30
    /// How many in the checks of stores that hold changes past one DynamoDB transaction
    /// (``StoreConformance/Capabilities/largeChanges``): an import of 5,000 keys, then
    /// their prefix delete.
    static let manyKeys = 5_000

    static let importer = Principal(kind: .token, id: "0123456789ab", description: "release job")

    static func snapshot(_ count: Int, under prefix: String = "/bulk/", value: String = "v") throws -> ConfigSnapshot {
        try ConfigSnapshot(items: (0..<count).map { index in
            ConfigSnapshot.Entry(key: try Key(String(format: "\(prefix)k%05d", index)), value: Data("\(value)\(index)".utf8))
        })
    }

    /// Imports `count` keys, deletes them with their prefix, and expects each to be one
    /// revision, logged once with its message.
    func expectOneChangeEach(_ count: Int) async throws {
        try await conformance.withFixture { fixture, _ in
            let store = fixture.store
            let config = try await store.makeConfig()
            try await store.set("/other", "o", in: config)
            let start = try await store.revision(of: config)

            let imported = Attribution(principal: Self.importer, message: "import \(count) keys")
            let result = try await imported.withValue { try await store.importSnapshot(try Self.snapshot(count), into: config, replace: false) }
            expectEqual(result.events.count, count)
            expectEqual(result.revision, start.next, "the import's revision")
            expectEqual(Set(result.events.map(\.revision)), [start.next], "every key of the import at one revision")
            try await expectEqual(store.revision(of: config), start.next)
            try await Self.expectOneLogEntry(store, config, at: start.next, keys: count, message: imported.message, by: fixture)

            let deleted = Attribution(principal: Self.importer, message: "drop the \(count) keys")
            let removals = try await deleted.withValue { try await store.deletePrefix(KeyPrefix("/bulk/"), in: config) }
            expectEqual(removals.count, count)
            expectEqual(Set(removals.map(\.revision)), [start.next.next], "every removal of the prefix delete at one revision")
            try await expectEqual(store.revision(of: config), start.next.next)
            try await Self.expectOneLogEntry(store, config, at: start.next.next, keys: count, message: deleted.message, by: fixture)
            try await expectEqual(store.list(in: config, ListQuery()).items.map(\.key.path), ["/other"])

            // The keys as they were at the import's revision: all of them, read back.
            var atImport = 0
            for try await page in try await store.exportPages(config, maxBytes: Limits.maxPageBytes, atRevision: start.next) { atImport += page.count }
            expectEqual(atImport, count + 1, "keys at the import's revision")
            try await expectEqual(store.get(try Key(String(format: "/bulk/k%05d", count - 1)), in: config, atRevision: start.next)?.modRevision, start.next)
            try await expectNil(store.get(try Key("/bulk/k00000"), in: config, atRevision: start), "before the import")
        }
    }

    /// Expects the change log to hold one entry at `revision`, with `keys` events and the
    /// change's message.
    static func expectOneLogEntry(
        _ store: any ConfigStore, _ config: ConfigName, at revision: Revision, keys: Int, message: String?, by fixture: StoreConformance.Fixture,
        fileID: String = #fileID, line: Int = #line
    ) async throws {
        let entries = try await store.changeLog(in: config, ChangeLogQuery(revision: revision))
        expectEqual(entries.count, 1, "log entries at \(revision)", fileID: fileID, line: line)
        expectEqual(entries.first?.events.count, keys, "keys in the log entry at \(revision)", fileID: fileID, line: line)
        expectEqual(entries.first?.attribution?.message, message, "the log entry's message", fileID: fileID, line: line)
        let newest = try await store.changeLog(in: config, ChangeLogQuery(limit: 1))
        expectEqual(newest.map(\.revision), [revision], "the newest change", fileID: fileID, line: line)
    }

    public func anImportAndAPrefixDeleteAreOneChangeEach() async throws {
        try await expectOneChangeEach(Self.keysInOneCommit)
    }

    public func aFiveThousandKeyImportAndPrefixDeleteAreOneChangeEach() async throws {
        try await expectOneChangeEach(Self.manyKeys)
    }

    /// Readers polling while an import of `count` keys commits see none of it or all of
    /// it: in a listing, in a read at the config's revision, and in the events.
    func expectReadersSeeAllOrNothing(_ count: Int) async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let base = try await store.revision(of: config)
            let last = try Key(String(format: "/bulk/k%05d", count - 1))
            let first = try Key("/bulk/k00000")
            let seen = try await withThrowingTaskGroup(of: [String].self) { group in
                group.addTask {
                    _ = try await store.importSnapshot(try Self.snapshot(count), into: config, replace: false)
                    return []
                }
                group.addTask {
                    var partial: [String] = []
                    var reads = 0
                    // Polls until the import is seen whole (or a hang guard).
                    while reads < 5_000 {
                        reads += 1
                        let listed = try await store.list(in: config, ListQuery(prefix: KeyPrefix("/bulk/"), limit: Limits.maxPageSize))
                        let keys = listed.items.count + (listed.nextCursor == nil ? 0 : 1)
                        if keys != 0 && listed.items.count < min(count, Limits.maxPageSize) {
                            partial.append("a listing at revision \(listed.revision) held \(listed.items.count) of \(count) keys")
                        }
                        let revision = try await store.revision(of: config)
                        let newest = try await store.get(last, in: config, atRevision: revision)
                        let oldest = try await store.get(first, in: config, atRevision: revision)
                        if (newest == nil) != (oldest == nil) {
                            partial.append("at revision \(revision) the first key was \(oldest == nil ? "absent" : "there") and the last \(newest == nil ? "absent" : "there")")
                        }
                        let events = try await store.events(in: config, scope: .prefix(KeyPrefix("/bulk/")), from: base.next, limit: Limits.maxPageSize)
                        if let revision = events.events.first?.revision, events.events.count < min(count, Limits.maxPageSize) {
                            partial.append("the events of revision \(revision) came as \(events.events.count) of \(count)")
                        }
                        if newest != nil, keys != 0 { break }
                    }
                    return partial
                }
                var seen: [String] = []
                for try await partial in group { seen += partial }
                return seen
            }
            expectEmpty(seen, "readers saw part of the import")
            try await expectEqual(store.revision(of: config), base.next)
        }
    }

    public func readersSeeAnImportWholeOrNotAtAll() async throws {
        try await expectReadersSeeAllOrNothing(Self.keysInOneCommit)
    }

    public func readersSeeAFiveThousandKeyImportWholeOrNotAtAll() async throws {
        try await expectReadersSeeAllOrNothing(Self.manyKeys)
    }
}

extension StoreConformance {
    /// The checks that a change of many keys is one change.
    public var bulkChanges: BulkChangeChecks { BulkChangeChecks(conformance: self) }
}
