import DiscfgCore
@testable import DiscfgEtcd
import DiscfgSQLite
import Foundation

/// The store a KV service under test runs over: memory, or a real SQLite file.
enum EtcdTestBacking: String, CaseIterable, CustomStringConvertible {
    case memory, sqlite
    var description: String { rawValue }

    /// A KV service over a fresh config `etcd` of this kind of store, and how to remove
    /// what it left on disk.
    func service() async throws -> (store: any ConfigStore, backend: EtcdBackend, service: EtcdKVService, cleanUp: () -> Void) {
        let store: any ConfigStore
        var cleanUp = {}
        switch self {
        case .memory:
            store = MemoryStore()
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("etcd-kv-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            store = try SQLiteStore(path: directory.appendingPathComponent("etcd.db").path)
            cleanUp = { try? FileManager.default.removeItem(at: directory) }
        }
        let backend = EtcdBackend(store: store, config: try ConfigName("etcd"))
        try await backend.prepare()
        let service = EtcdKVService(backend: backend, identity: EtcdIdentity(config: backend.config), leases: EtcdLeases(backend: backend))
        return (store, backend, service, cleanUp)
    }
}
