import DiscfgAgent
import DiscfgCore
import DiscfgStores
import Foundation

/// Where `discfg agent` copies from: the store (`--store`, `DISCFG_STORE`), or the
/// snapshots `discfg publish` writes to S3 (`--source s3://BUCKET/PREFIX`); and which
/// configs, by name (`--config`) or by name prefix (`--prefix`, stores only).
extension AgentCommand {
    /// The `--prefix` values, checked; refused with `--source` (S3 cannot tell its
    /// configs without a listing, and the agent makes none).
    func checkedPrefixes() throws -> [String] {
        if !prefixes.isEmpty, source != nil {
            throw usage(
                "--prefix follows the configs a store lists; an S3 source is read by key, one object per config: name each config with --config (repeatable)",
                field: "--prefix")
        }
        var checked: [String] = []
        for prefix in prefixes {
            let value: String
            do { value = try Agent.checkPrefix(prefix) } catch let error as DiscfgError { throw usage(error.message, field: "--prefix") }
            if !checked.contains(value) { checked.append(value) }
        }
        return checked
    }

    /// The S3 location `--source` names, checked; refused beside `--store`.
    func snapshotSource() throws -> SnapshotDestination? {
        guard let source else { return nil }
        if global.store != nil {
            throw usage("--source and --store both name where the agent copies from: give one (--source s3://BUCKET/PREFIX follows published snapshots)", field: "--source")
        }
        do { return try SnapshotDestination(parsing: source, field: "--source") } catch let error as DiscfgError { throw usage(error.message, field: "--source") }
    }

    /// The source to follow: the S3 snapshots, or the store.
    func openSource(_ destination: SnapshotDestination?) throws -> any AgentSource {
        if let destination {
            return S3Source(s3: try global.opener().openS3(), destination: destination)
        }
        return StoreSource(try global.openStore(), description: global.storeDescription)
    }
}
