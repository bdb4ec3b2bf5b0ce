/// Where a config keeps its deployments, under discfg's own prefix `/.discfg/`:
///
/// | key                              | holds                                                     |
/// |----------------------------------|-----------------------------------------------------------|
/// | `/.discfg/deploying/ID`          | the record of a deployment still running (JSON)           |
/// | `/.discfg/staged/ID` + key path  | the candidate's value of that key, not yet live           |
/// | `/.discfg/deployed/ID`           | the record of a deployment that has ended                 |
///
/// The live keys stay the stable version until the deployment completes, so a reader that
/// knows nothing of deployments (an etcd client, an old agent, a watch) reads the stable
/// version, and a reader that names an entity overlays the staged values when the entity
/// is exposed (``DeploymentOverlay``). Every change reads the running records, a small
/// range, to refuse writes under a deploying prefix. After a deployment completes, its
/// staging holds the values it replaced, so a revert can put them back.
public enum DeploymentKeys {
    /// The records of running deployments.
    public static let running = KeyPrefix(validated: "/.discfg/deploying/")
    /// The keys of ``running``, made once: every change reads them.
    public static let runningRange = running.range
    /// The records of ended deployments.
    public static let ended = KeyPrefix(validated: "/.discfg/deployed/")
    /// The staged values of every deployment.
    public static let staging = KeyPrefix(validated: "/.discfg/staged/")

    /// The key of a running deployment's record.
    public static func runningRecord(_ id: String) -> Key { Key(stored: running.path + id) }

    /// The key of an ended deployment's record.
    public static func endedRecord(_ id: String) -> Key { Key(stored: ended.path + id) }

    /// The prefix under which deployment `id` stages its values.
    public static func staged(_ id: String) -> KeyPrefix { KeyPrefix(validated: staging.path + id + "/") }

    /// Where deployment `id` stages the value of `key`.
    /// - Throws: `invalidArgument` when the staged key would pass ``Key/maxBytes``.
    public static func staged(_ key: Key, in id: String) throws -> Key {
        let path = staging.path + id + key.path
        guard path.utf8.count <= Key.maxBytes else {
            throw DiscfgError.invalid(
                "key", "\(key) cannot be deployed: staging it needs \(path.utf8.count - key.path.utf8.count) more bytes than its \(key.path.utf8.count), and a key holds at most \(Key.maxBytes)"
            )
        }
        return Key(stored: path)
    }

    /// The live key a staged key of deployment `id` stands for, or nil for a key outside its staging.
    public static func live(_ staged: Key, in id: String) -> Key? {
        let prefix = Self.staged(id)
        guard prefix.contains(staged) else { return nil }
        return Key(stored: String(staged.path.dropFirst(prefix.path.count - 1)))
    }

    /// Whether two prefixes share keys: one holds the other.
    public static func overlap(_ one: KeyPrefix, _ other: KeyPrefix) -> Bool {
        one.path.hasPrefix(other.path) || other.path.hasPrefix(one.path)
    }

    /// Whether `key` is one of the deployments' own (records or staging), which only a
    /// deployment's change writes.
    public static func holds(_ key: Key) -> Bool {
        running.contains(key) || ended.contains(key) || staging.contains(key)
    }
}
