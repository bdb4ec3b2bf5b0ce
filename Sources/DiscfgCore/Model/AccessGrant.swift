/// What a caller may do: a role, over everything or over some scopes (``AccessScope``).
/// Tokens, IAM rules and client-certificate rules all come down to one, and every face
/// (REST, the event loops' fast paths, the etcd API) asks it the same questions.
///
/// ```swift
/// let grant = AccessGrant(role: .write, scopes: [try AccessScope("demo:/app/")])
/// grant.allows(.write, on: demo, key: try Key("/app/db"))          // true
/// grant.allows(.read, on: demo, keysUnder: .root)                  // false: reaches past /app/
/// grant.allows(.read, on: demo)                                    // false: the config itself
/// ```
public struct AccessGrant: Hashable, Sendable {
    /// The role, the same on every scope.
    public var role: Role
    /// Where it reaches; nil for every key of every config.
    public var scopes: [AccessScope]?

    /// A role over `scopes` (nil for everything).
    public init(role: Role, scopes: [AccessScope]?) {
        self.role = role
        self.scopes = scopes
    }

    /// A role over whole configs (nil for every config), as grants were before prefixes.
    public init(role: Role, configs: [ConfigName]?) {
        self.init(role: role, scopes: configs?.map { AccessScope(config: $0) })
    }

    /// The configs it reaches at all, in the order first named; nil for every config.
    public var configs: [ConfigName]? {
        scopes.map { scopes in
            var seen: [ConfigName] = []
            for scope in scopes where !seen.contains(scope.config) { seen.append(scope.config) }
            return seen
        }
    }

    /// Whether every scope is a whole config: the grant reaches nothing by prefix.
    public var isWholeConfigs: Bool { scopes?.allSatisfy(\.isWholeConfig) ?? true }

    /// Its scopes on `config` (every scope there is, for a grant of everything: the
    /// whole config).
    public func scopes(on config: ConfigName) -> [AccessScope] {
        scopes?.filter { $0.config == config } ?? [AccessScope(config: config)]
    }

    /// Whether it may act with `needed` on the whole of `config`: its settings, schemas,
    /// compaction, and every key at once. Nil asks about the list of configs, which any
    /// role may read (it shows only the configs the grant reaches).
    public func allows(_ needed: Role, on config: ConfigName?) -> Bool {
        guard role >= needed else { return false }
        guard let scopes, let config else { return true }
        return scopes.contains { $0.config == config && $0.isWholeConfig }
    }

    /// Whether it reaches `config` at all, with any scope: whether the config is shown in
    /// the list of configs and may be named on a route that then checks its keys.
    public func reaches(_ config: ConfigName) -> Bool {
        scopes?.contains { $0.config == config } ?? true
    }

    /// Whether it may act with `needed` on `key` of `config`.
    public func allows(_ needed: Role, on config: ConfigName, key: Key) -> Bool {
        guard role >= needed else { return false }
        guard let scopes else { return true }
        return scopes.contains { $0.config == config && $0.covers(key) }
    }

    /// Whether it may act with `needed` on every key under `prefix` of `config` (a list,
    /// a watch, an export, a delete of the prefix): one scope must hold the whole prefix,
    /// so `/` needs the whole config.
    public func allows(_ needed: Role, on config: ConfigName, keysUnder prefix: KeyPrefix) -> Bool {
        guard role >= needed else { return false }
        guard let scopes else { return true }
        return scopes.contains { $0.config == config && $0.covers(prefix) }
    }

    /// Whether it may act with `needed` on every key in `range` of `config` that
    /// `filter` lets the range reach (nil: every key, as a REST transaction's ranges
    /// reach them; ``KeyFilter/etcdKeys`` for the etcd API's): one scope must hold the
    /// whole range, so an etcd prefix scope never holds a range of every key.
    public func allows(_ needed: Role, on config: ConfigName, range: KeyRange, reaching filter: KeyFilter?) -> Bool {
        guard role >= needed else { return false }
        guard let scopes else { return true }
        return scopes.contains { $0.config == config && $0.covers(range, reaching: filter) }
    }

    /// Its scopes on `config` as a refusal names them: `demo:/app/, demo:/web/`, or
    /// `no scope on demo`.
    public func scopeList(on config: ConfigName) -> String {
        let scopes = scopes(on: config)
        return scopes.isEmpty ? "no scope on \(config)" : scopes.map(\.description).joined(separator: ", ")
    }
}
