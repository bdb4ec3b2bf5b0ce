import DiscfgAgent
import DiscfgAPI
import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

/// The read-only copy answers reads as the source would, and refuses every change.
@Suite("ReplicaStore: reads from memory, writes refused, watchers resume from the ring")
struct ReplicaStoreTests {
    static let app = try! ConfigName("app")

    /// A memory store with a few keys, and a replica loaded from it.
    static func loaded(ring: Int = 1000) async throws -> (MemoryStore, ReplicaStore, ConfigFollower) {
        let store = MemoryStore()
        _ = try await store.createConfig(app, settings: ConfigSettings())
        _ = try await store.set(try Key("/db/host"), to: Data("db1".utf8), in: app)
        _ = try await store.set(try Key("/db/port"), to: Data("5432".utf8), in: app)
        _ = try await store.set(try Key("/feature"), to: Data("on".utf8), in: app)
        let replica = ReplicaStore(source: "memory:", configs: [app], ringCapacity: ring)
        let follower = ConfigFollower(config: app, source: StoreSource(store, description: "memory:"), replica: replica)
        #expect(await follower.refresh() == .loaded(3))
        return (store, replica, follower)
    }

    @Test("reads carry the source's revisions and versions, not new ones")
    func reads() async throws {
        let (store, replica, _) = try await Self.loaded()
        let original = try await store.get(try Key("/db/host"), in: Self.app)
        #expect(try await replica.get(try Key("/db/host"), in: Self.app) == original)
        let page = try await replica.list(in: Self.app, ListQuery(prefix: .root, recursive: false))
        #expect(page.items.map(\.key.path) == ["/feature"])
        #expect(page.prefixes.map(\.path) == ["/db/"])
        #expect(page.revision == 3)
        let all = try await replica.export(Self.app)
        #expect(all.items.map(\.key.path) == ["/db/host", "/db/port", "/feature"])
        #expect(try await replica.configInfo(Self.app).revision == 3)
    }

    @Test("a follower applies only the changes since its revision, and one check when idle")
    func follows() async throws {
        let (store, replica, follower) = try await Self.loaded()
        #expect(await follower.refresh() == .unchanged)
        _ = try await store.set(try Key("/db/host"), to: Data("db2".utf8), in: Self.app)
        _ = try await store.delete(try Key("/feature"), in: Self.app, conditions: [])
        #expect(await follower.refresh() == .applied(5))
        let item = try #require(try await replica.get(try Key("/db/host"), in: Self.app))
        #expect(item.value == Data("db2".utf8))
        #expect(item.version == 2)
        #expect(item.modRevision == 4)
        #expect(try await replica.get(try Key("/feature"), in: Self.app) == nil)
        let status = follower.status
        #expect(status.checks == 3)
        #expect(status.loads == 1)
        #expect(status.errors == 0)
    }

    @Test("a server over the copy refuses every change with readOnly naming the real store, and reads through")
    func writesRefused() async throws {
        let (_, replica, _) = try await Self.loaded()
        // The store as a server's API sees it: the one place a copy's changes are refused.
        let served = InstrumentedStore(replica, metrics: APIMetrics())
        let key = try Key("/x")
        let writes: [(String, () async throws -> Void)] = [
            ("set", { _ = try await served.set(key, to: Data("1".utf8), in: Self.app) }),
            ("delete", { _ = try await served.delete(key, in: Self.app, conditions: []) }),
            ("create", { _ = try await served.createConfig(try ConfigName("other"), settings: ConfigSettings()) }),
            ("deleteConfig", { try await served.deleteConfig(Self.app) }),
            ("compact", { _ = try await served.compact(Self.app, through: 1) }),
            ("deletePrefix", { _ = try await served.deletePrefix(.root, in: Self.app) }),
            ("import", { _ = try await served.importSnapshot(ConfigSnapshot(items: []), into: Self.app, replace: true) }),
            ("transaction", { _ = try await served.transact(Transaction(compares: [], success: [], failure: []), in: Self.app) }),
            ("sweep", { _ = try await served.sweepExpired() }),
        ]
        for (name, write) in writes {
            try await expectError(.readOnly, name, mentioning: ["read-only copy of memory:", "write there"]) { try await write() }
        }
        #expect(try await served.get(try Key("/feature"), in: Self.app)?.value == Data("on".utf8))
    }

    @Test("a config not held is 404 naming the held ones; a past revision is refused clearly")
    func notHeldAndPast() async throws {
        let (_, replica, _) = try await Self.loaded()
        try await expectError(.configNotFound, mentioning: ["\"other\"", "holds \"app\""]) {
            _ = try await replica.get(try Key("/a"), in: try ConfigName("other"))
        }
        try await expectError(.compacted, mentioning: ["at revision 3 only", "read revision 2 from memory:"]) {
            _ = try await replica.get(try Key("/db/host"), in: Self.app, atRevision: 2)
        }
        try await expectError(.invalidArgument, mentioning: ["in the future"]) {
            _ = try await replica.get(try Key("/db/host"), in: Self.app, atRevision: 9)
        }
        #expect(try await replica.get(try Key("/db/host"), in: Self.app, atRevision: 3)?.value == Data("db1".utf8))
    }

    @Test("watchers resume from the ring; from before it is compacted")
    func ringResume() async throws {
        let (store, replica, follower) = try await Self.loaded(ring: 2)
        for value in ["a", "b", "c"] { _ = try await store.set(try Key("/feature"), to: Data(value.utf8), in: Self.app) }
        #expect(await follower.refresh() == .applied(6))
        let batch = try await replica.events(in: Self.app, scope: .prefix(.root), from: 5, limit: 100)
        #expect(batch.events.map(\.revision) == [5, 6])
        try await expectError(.compacted, mentioning: ["older than the events this read-only copy", "list the keys again"]) {
            _ = try await replica.events(in: Self.app, scope: .prefix(.root), from: 4, limit: 100)
        }
        try await expectError(.compacted) { _ = try await replica.events(in: Self.app, scope: .prefix(.root), from: 1, limit: 100) }
        let stream = await replica.watch(Self.app, scope: .prefix(.root), from: 7)
        _ = try await store.set(try Key("/db/port"), to: Data("1".utf8), in: Self.app)
        #expect(await follower.refresh() == .applied(7))
        var iterator = stream.makeAsyncIterator()
        #expect(try await iterator.next()?.revision == 7)
    }

    @Test("history compacted past the copy: the follower reloads the whole config")
    func reloadsWhenCompacted() async throws {
        let (store, replica, follower) = try await Self.loaded()
        _ = try await store.set(try Key("/new"), to: Data("1".utf8), in: Self.app)
        _ = try await store.compact(Self.app, through: 4)
        #expect(await follower.refresh() == .loaded(4))
        #expect(try await replica.get(try Key("/new"), in: Self.app)?.modRevision == 4)
    }
}
