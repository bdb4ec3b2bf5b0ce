import DiscfgCore
import Foundation

extension EtcdBackend {
    /// The key written at revision 1 of a new etcd config, so that its etcd keys start at
    /// revision 2 as a new etcd's do (an empty etcd is at revision 1). etcd's clients read
    /// a revision of 0 as none: a watch from 0 starts now, a `max_create_revision` of 0
    /// bounds nothing. Over a config at revision 0, an election's first candidate (its key
    /// at revision 1) waited for keys created up to revision 0, found its own and waited
    /// for ever, as did a read-write lock's; and a queue's reader, watching from an empty
    /// read at revision 0, missed what was enqueued before its watch began. Not an etcd
    /// key (two segments), so no etcd client sees it; its empty value counts its path's
    /// 17 bytes against the quota.
    public static let revisionOneKey = Key(stored: "/discfg/etcd-base")

    /// Writes ``revisionOneKey`` to a config still at revision 0 and returns the config's
    /// settings after it; a config written to already keeps its numbering.
    func holdRevisionOne(_ info: ConfigInfo) async throws -> ConfigInfo {
        guard info.revision == .zero else { return info }
        do {
            _ = try await store.set(Self.revisionOneKey, to: Data(), in: config, options: SetOptions(conditions: [.version(0)]))
        } catch let error as DiscfgError where error.code == .conditionFailed {
            // Another server over the same store wrote it first.
        }
        return try await store.configInfo(config)
    }
}
