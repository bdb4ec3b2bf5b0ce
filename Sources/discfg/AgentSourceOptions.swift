import DiscfgAgent
import DiscfgCore
import DiscfgStores
import DiscfgSecrets
import Foundation

/// Where `discfg agent` copies from: the store (`--store`, `DISCFG_STORE`), or the
/// snapshots `discfg publish` writes to S3 (`--source s3://BUCKET/PREFIX`); and which
/// configs, by name (`--config`) or by name prefix (`--config-prefix`, stores only).
extension AgentCommand {
    /// The `--config-prefix` values, checked; refused with `--source` (S3 cannot tell its
    /// configs without a listing, and the agent makes none).
    func checkedPrefixes() throws -> [String] {
        // Messages name the flag as it was written.
        let flag = legacyPrefixes.isEmpty ? "--config-prefix" : "--prefix"
        if !prefixes.isEmpty, source != nil {
            throw usage(
                "\(flag) follows the configs a store lists; an S3 source is read by key, one object per config: name each config with --config (repeatable)",
                field: flag)
        }
        var checked: [String] = []
        for prefix in prefixes {
            let value: String
            do { value = try Agent.checkPrefix(prefix, field: flag) } catch let error as DiscfgError { throw usage(error.message, field: flag) }
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

    /// The source to follow: the S3 snapshots (taking only those signed with `key`, when
    /// given), or the store.
    func openSource(_ destination: SnapshotDestination?, key: SnapshotKey?) throws -> any AgentSource {
        if let destination {
            return S3Source(s3: try global.opener().openS3(), destination: destination, key: key)
        }
        return StoreSource(try global.openStore(), description: global.storeDescription)
    }
}

/// Who may read from `discfg agent`: the Unix socket it serves on (`--listen unix:PATH`,
/// `--socket-group`), the bearer tokens readers must send (`--reader-token-file`), and
/// the key published snapshots must be signed with (`--snapshot-key-file`).
extension AgentCommand {
    /// The socket `--listen` names, checked and ready to bind; nil for 127.0.0.1.
    func listenSocket() throws -> AgentSocket? {
        guard let listen else {
            if socketGroup != nil { throw usage("--socket-group gives a Unix socket to a group: use it with --listen unix:PATH", field: "--socket-group") }
            return nil
        }
        guard listen.hasPrefix("unix:") else {
            throw usage("--listen takes unix:/ABSOLUTE/PATH (a Unix socket); for 127.0.0.1 leave it out and give --port", field: "--listen")
        }
        if port != nil { throw usage("--listen unix:PATH and --port both say where to serve: give one", field: "--listen") }
        do {
            let socket = try AgentSocket(path: String(listen.dropFirst("unix:".count)), group: socketGroup)
            try socket.prepare()
            return socket
        } catch let error as DiscfgError {
            throw usage(error.message, field: error.field ?? "--listen")
        }
    }

    /// The tokens `--reader-token-file` holds; nil when not given.
    func readerTokens() throws -> ReaderTokens? {
        guard let readerTokenFile else { return nil }
        do { return try ReaderTokens(path: readerTokenFile) } catch let error as DiscfgError { throw usage(error.message, field: "--reader-token-file") }
    }

    /// The key `--snapshot-key-file` holds, for an S3 source only; nil when not given.
    func snapshotKey(_ destination: SnapshotDestination?) throws -> SnapshotKey? {
        guard let snapshotKeyFile else { return nil }
        guard destination != nil else {
            throw usage("--snapshot-key-file checks the snapshots of an S3 source (--source s3://BUCKET/PREFIX); a store is read directly", field: "--snapshot-key-file")
        }
        do { return try FileKey(path: snapshotKeyFile).snapshotKey } catch let error as DiscfgError {
            throw usage("--snapshot-key-file: \(error.message)", field: "--snapshot-key-file")
        }
    }
}
