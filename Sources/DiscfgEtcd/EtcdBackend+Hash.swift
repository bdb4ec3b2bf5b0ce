import DiscfgCore
import Foundation

extension EtcdBackend {
    /// A hash of the config's etcd keys as of a revision (etcd's `HashKV`), with the
    /// revision hashed and the config's compaction then.
    struct KeyValueHash: Sendable, Equatable {
        /// CRC-32C of every key in key order: its bytes, value, create and mod
        /// revisions, version and lease (``CRC32C``).
        var hash: UInt32
        /// The revision the keys were read at.
        var revision: Revision
        /// etcd's compact revision: the oldest revision still readable after a
        /// compaction, -1 before any, as etcd answers.
        var compactRevision: Int64
    }

    /// Hashes the etcd keys as of `revision` (0 or less: now). Derived only from what the
    /// store holds, read in key order, so every server on one store answers the same
    /// hash for one revision. The keys are read in pages of one answer's budget
    /// (``EtcdAnswer/maxBytes``), never all at once; the config's quota bounds how many
    /// pages there are and the call's deadline how long they may take.
    ///
    /// - Throws: ``EtcdError/futureRevision`` for a revision not reached yet,
    ///   ``EtcdError/compacted`` for one compacted away.
    func hashKV(at revision: Int64) async throws -> KeyValueHash {
        let info = try await store.configInfo(config)
        let wanted = revision > 0 ? Revision(UInt64(revision)) : info.revision
        guard wanted <= info.revision else { throw EtcdError.futureRevision }
        var crc = CRC32C()
        // Every etcd key: from the smallest key, "\0", to the end, "\0".
        var query = RangeQuery(key: [0], rangeEnd: [0])
        query.revision = wanted.storageValue
        while true {
            try Task.checkCancellation()
            let page = try await range(query)
            for item in page.items {
                guard let key = EtcdKeys.bytes(item.key.path) else { continue }
                crc.update(UInt64(key.count))
                crc.update(key)
                crc.update(UInt64(item.value.count))
                crc.update(item.value)
                crc.update(item.createRevision.rawValue)
                crc.update(item.modRevision.rawValue)
                crc.update(UInt64(item.version))
                crc.update(UInt64(bitPattern: EtcdLeases.lease(ofContentType: item.contentType)?.id ?? 0))
            }
            guard page.more, let last = page.items.last, let key = EtcdKeys.bytes(last.key.path) else { break }
            query.key = key + [0]
        }
        let compacted = try await store.configInfo(config).compactedRevision
        return KeyValueHash(hash: crc.value, revision: wanted, compactRevision: compacted == .zero ? -1 : compacted.next.storageValue)
    }
}
