import DiscfgCore
@testable import DiscfgEtcd
import Foundation
import GRPCCore
import Testing

/// Flag sets and the etcd API: an etcd key is one escaped path segment (`flags/web` is
/// `/flags.2Fweb`), so no etcd write lands under `/flags/`. A Put to `flags/web` is an
/// ordinary value: stored as sent, not checked as a flag set, and no flag of the config's.
@Suite("etcd API: etcd keys never hold flag sets")
struct EtcdFlagSetTests {
    @Test("a Put to etcd key flags/web lands at /flags.2Fweb, outside /flags/: stored as sent, and the config's flags are unchanged", arguments: EtcdTestBacking.allCases)
    func etcdKeysStayOutsideFlags(_ backing: EtcdTestBacking) async throws {
        let (store, backend, service, cleanUp) = try await backing.service()
        defer { cleanUp() }
        let set = #"{"flags": {"new-ui": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off"}}}"#
        _ = try await store.set(Key("/flags/web"), to: Data(set.utf8), in: backend.config)
        let notASet = #"{"flags": {"new-ui": {"state": "ON"}}}"#
        _ = try await service.put(request: EtcdSchemaTests.put(notASet, key: "flags/web"), context: EtcdSchemaTests.context(Etcdserverpb_KV.Method.Put.descriptor))
        let key = try EtcdKeys.key(Array("flags/web".utf8))
        #expect(key.path == "/flags.2Fweb" && !ConfigFlags.holdsFlagSet(key))
        #expect(try await store.get(key, in: backend.config)?.value == Data(notASet.utf8))
        let (catalog, _) = try await store.flags(in: backend.config)
        #expect(catalog.entries.keys.sorted() == ["new-ui"] && catalog.entries["new-ui"]?.setName == "/flags/web")
    }
}
