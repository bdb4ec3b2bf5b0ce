import DiscfgCore
@testable import DiscfgEtcd
import Foundation
import Testing

/// A new etcd config starts at revision 1, as an empty etcd does, so its first key is at
/// revision 2 and no etcd key ever carries the revision 0 that etcd's clients read as
/// none (an election's `max_create_revision` of its own revision - 1, a queue's watch
/// from an empty read's revision).
@Suite("etcd API: a new config starts at revision 1, as etcd")
struct EtcdRevisionOneTests {
    static func backend(_ store: any ConfigStore) throws -> EtcdBackend {
        EtcdBackend(store: store, config: try ConfigName("etcd"))
    }

    @Test("prepare moves a new config to revision 1 with a key no etcd range sees; the first etcd key is at revision 2; preparing again writes nothing")
    func newConfig() async throws {
        let store = MemoryStore()
        let backend = try Self.backend(store)
        let prepared = try await backend.prepare()
        #expect(prepared.revision == Revision(1))
        #expect(try await backend.range(.init(key: [0], rangeEnd: [0])).items.isEmpty, "the marker is not an etcd key")
        let put = try await store.set(try EtcdKeys.key(Array("leader/1".utf8)), to: Data("a".utf8), in: backend.config)
        #expect(put.revision == Revision(2))
        #expect(try await backend.prepare().revision == Revision(2), "a second start leaves the config as it is")
    }

    @Test("an election's wait for keys created before its own finds none when it is the config's first key, as on etcd")
    func firstCandidate() async throws {
        let store = MemoryStore()
        let backend = try Self.backend(store)
        try await backend.prepare()
        let put = try await store.set(try EtcdKeys.key(Array("election/abc".utf8)), to: Data("v".utf8), in: backend.config)
        var query = EtcdBackend.RangeQuery(key: Array("election/".utf8), rangeEnd: Array("election0".utf8))
        query.maxCreateRevision = Int64(put.revision.storageValue) - 1
        #expect(query.maxCreateRevision > 0, "0 would bound nothing")
        #expect(try await backend.range(query).items.isEmpty)
    }

    @Test("a config written to before keeps its numbering; two servers preparing one new config move it once")
    func existingAndConcurrent() async throws {
        let store = MemoryStore()
        let config = try ConfigName("etcd")
        _ = try await store.createConfig(config, settings: ConfigSettings())
        _ = try await store.set(try EtcdKeys.key(Array("a".utf8)), to: Data("1".utf8), in: config)
        #expect(try await Self.backend(store).prepare().revision == Revision(1))

        let shared = MemoryStore()
        let (a, b) = (try Self.backend(shared), try Self.backend(shared))
        async let first = a.prepare()
        async let second = b.prepare()
        _ = try await (first, second)
        #expect(try await shared.configInfo(config).revision == Revision(1))
    }
}
