import DiscfgCore

/// etcd keys (any bytes) as discfg keys of one config, reversibly and in the same order,
/// by the escaping of ``EtcdKeyPath`` (in DiscfgCore, where prefix scopes written in
/// etcd's key space use it too): `app/db.host` becomes `/app.2Fdb.2Ehost`, and an etcd
/// range `[key, range_end)` is the range of paths `[path(key), path(range_end))`.
public enum EtcdKeys {
    /// The longest etcd key whose path fits a discfg key when every byte is plain.
    public static let maxPlainBytes = Key.maxBytes - 1

    /// The path of an etcd key.
    /// Read from the key's storage in place where it is contiguous (a `Data`'s own
    /// iterator costs several times as much per byte).
    public static func path(_ key: some Collection<UInt8>) -> String {
        key.withContiguousStorageIfAvailable { EtcdKeyPath.path($0) } ?? EtcdKeyPath.path(key)
    }

    /// The discfg key of an etcd key.
    /// - Throws: `invalidArgument` for an empty key (etcd's "key is not provided") and
    ///   `tooLarge` for one whose path passes ``Key/maxBytes``.
    public static func key(_ bytes: some Collection<UInt8>) throws -> Key {
        guard !bytes.isEmpty else { throw DiscfgError.invalid("key", "key is not provided") }
        let path = path(bytes)
        guard path.utf8.count <= Key.maxBytes else {
            throw DiscfgError(.tooLarge, "key is too large: \(bytes.count) bytes take \(path.utf8.count) bytes as a discfg key; the limit is \(Key.maxBytes)", field: "key")
        }
        return Key(stored: path)
    }

    /// The etcd key a path stands for, or nil for a path no etcd key makes (a key written
    /// to the config by other means).
    public static func bytes(_ path: String) -> [UInt8]? { EtcdKeyPath.bytes(path) }

    /// The keys an etcd key makes, as a transaction's ranges reach them: keys of the
    /// config written by other means are neither compared, read nor deleted.
    public static let filter = KeyFilter.etcdKeys

    /// The paths of an etcd range: `key` alone when `rangeEnd` is empty, every key from
    /// `key` on when it is `\0`, else `[key, rangeEnd)`. A `key` of `\0` with a `rangeEnd`
    /// of `\0` is every key.
    public static func range(key: [UInt8], rangeEnd: [UInt8]) -> KeyRange {
        let lower = key == [0] ? "/" : path(key)
        if rangeEnd == [0] { return KeyRange(lower: lower, upper: nil) }
        return KeyRange(lower: lower, upper: path(rangeEnd))
    }
}
