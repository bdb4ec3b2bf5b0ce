/// Where a token or an IAM / certificate rule reaches in one config: the whole config, the
/// keys under a discfg prefix, or the etcd keys under an etcd byte prefix.
///
/// Written three ways, the one spelling of a scope in `--scope`, `POST /admin/tokens`,
/// `DISCFG_IAM_ROLES`, `--tls-client-roles` and the token stores:
///
/// | text | reaches |
/// |---|---|
/// | `demo` | every key of config `demo`, and the config itself |
/// | `demo:/app/` or `demo:/app` | the key `/app` and every key under `/app/` (never `/apple`) |
/// | `demo:etcd:/registry/` | every etcd key starting with the bytes `/registry/` |
///
/// A discfg prefix is normalized as ``KeyPrefix`` normalizes one (NFC, a leading and a
/// trailing `/`, no empty, `.` or `..` segment) and matches whole segments. An etcd
/// prefix is etcd's own: any bytes (the UTF-8 of the text after `etcd:`), matched byte by
/// byte as etcd matches a prefix, so `demo:etcd:/reg` reaches `/registry/x` too. The etcd
/// API keeps each etcd key in one discfg segment (``EtcdKeyPath``), in the same order, so
/// an etcd prefix is kept as etcd's prefix range of escaped paths, `[path(prefix),
/// path(prefix + 1))`, and a key is inside when its path lies in that range and is an
/// etcd key's path. (Not a string prefix of paths: no longer key's path starts with the
/// path of a key ending in a zero byte, ``EtcdKeyPath``.) Neither spelling reaches the
/// other's keys: `demo:/registry/` covers no etcd key of `/registry/…` (whose path is
/// `/.2Fregistry.2F…`, one segment), and `demo:etcd:/registry/` covers no key of two
/// segments or more. The two meet only on an etcd key with no byte to escape, such as
/// `app`, which *is* the discfg key `/app`.
///
/// A range of paths is judged with the keys it reaches (``KeyFilter``): an etcd prefix
/// scope holds a range only when the range reaches etcd keys alone (the etcd API's
/// ranges, ``KeyFilter/etcdKeys``), never a range of every key, since between the
/// escaped ends of an etcd prefix (`[/app.2F, /app0)`) lie the discfg keys under `/app/`.
/// No prefix scope reaches discfg's own keys under `/.discfg/` (schemas): only a
/// whole-config scope does, so a schema is never written past the schema routes' rule.
///
/// ```swift
/// let scope = try AccessScope("demo:/app/")
/// scope.covers(try Key("/app/db"))      // true
/// scope.covers(try Key("/apple"))       // false
/// scope.covers(try KeyPrefix("/app/x")) // true: every key under it is inside
/// ```
public struct AccessScope: Hashable, Sendable, CustomStringConvertible, Codable {
    /// What a scope reaches in its config.
    public enum Reach: Hashable, Sendable {
        /// The whole config: its keys, settings, schemas and history.
        case config
        /// The key the prefix names without its trailing `/`, and every key under it.
        case keys(KeyPrefix)
        /// Every etcd key starting with these bytes (never empty).
        case etcdKeys([UInt8])
    }

    /// The config.
    public let config: ConfigName
    /// What it reaches in the config.
    public let reach: Reach
    /// For an etcd prefix, the paths (``EtcdKeyPath/path(_:)``) of the etcd keys starting
    /// with it: `[path(prefix), path(prefix with its last byte below 0xFF incremented))`.
    private let etcdRange: KeyRange?

    /// The whole of `config`.
    public init(config: ConfigName) {
        self.config = config
        reach = .config
        etcdRange = nil
    }

    /// The keys under `prefix` in `config`; the root prefix is the whole config.
    public init(config: ConfigName, prefix: KeyPrefix) {
        self.config = config
        reach = prefix == .root ? .config : .keys(prefix)
        etcdRange = nil
    }

    /// The etcd keys starting with `etcdPrefix` in `config`.
    /// - Throws: `invalidArgument` for an empty prefix (write the config alone for all of
    ///   it) or one whose path passes ``Key/maxBytes``.
    public init(config: ConfigName, etcdPrefix: [UInt8]) throws {
        guard !etcdPrefix.isEmpty else {
            throw DiscfgError.invalid("scope", "scope \"\(config):etcd:\" names no etcd prefix; write \(config) for the whole config")
        }
        let path = EtcdKeyPath.path(etcdPrefix)
        guard path.utf8.count <= Key.maxBytes else {
            throw DiscfgError.invalid("scope", "the etcd prefix of a scope on \(config) is \(path.utf8.count) bytes escaped; the limit is \(Key.maxBytes)")
        }
        self.config = config
        reach = .etcdKeys(etcdPrefix)
        etcdRange = KeyRange(lower: path, upper: Self.prefixEnd(etcdPrefix).map(EtcdKeyPath.path))
    }

    /// Parses `CONFIG`, `CONFIG:/PREFIX` or `CONFIG:etcd:PREFIX`.
    /// - Throws: `invalidArgument` on field `scope` naming what is wrong: an empty text,
    ///   a config name that is not valid, nothing after `:`, a discfg prefix without its
    ///   leading `/` or that is not a valid prefix (`//`, `..`), `/` alone (write the
    ///   config alone), a prefix inside `/.discfg/`, an empty etcd prefix.
    public init(_ text: String) throws {
        try self.init(text, refusingReserved: true)
    }

    /// Parses a scope; `refusingReserved` false reads a stored record written before
    /// scopes inside `/.discfg/` were refused, which then reaches nothing.
    private init(_ text: String, refusingReserved: Bool) throws {
        guard !text.isEmpty else { throw DiscfgError.invalid("scope", "scope is empty; write CONFIG, CONFIG:/prefix/ or CONFIG:etcd:prefix") }
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let config: ConfigName
        do {
            config = try ConfigName(String(parts[0]))
        } catch let error as DiscfgError {
            throw DiscfgError.invalid("scope", "in scope \"\(text.debugEscaped)\": \(error.message)")
        }
        guard parts.count == 2 else {
            self.init(config: config)
            return
        }
        let rest = String(parts[1])
        if rest.isEmpty {
            throw DiscfgError.invalid("scope", "scope \"\(text.debugEscaped)\" names no prefix after ':'; write \(config) for the whole config or \(config):/prefix/")
        }
        if rest.hasPrefix("etcd:") {
            try self.init(config: config, etcdPrefix: Array(rest.dropFirst("etcd:".count).utf8))
            return
        }
        guard rest.hasPrefix("/") else {
            throw DiscfgError.invalid("scope", "the prefix in scope \"\(text.debugEscaped)\" does not start with '/'; write \(config):/\(rest.debugEscaped)/ for discfg keys or \(config):etcd:\(rest.debugEscaped) for etcd keys")
        }
        let prefix: KeyPrefix
        do {
            prefix = try KeyPrefix(rest)
        } catch let error as DiscfgError {
            throw DiscfgError.invalid("scope", "in scope \"\(text.debugEscaped)\": \(error.message)")
        }
        guard prefix != .root else {
            throw DiscfgError.invalid("scope", "scope \"\(text.debugEscaped)\" names the root prefix; write \(config) for the whole config")
        }
        guard !Self.isReserved(prefix) || !refusingReserved else {
            throw DiscfgError.invalid("scope", "scope \"\(text.debugEscaped)\" lies inside \(SchemaTarget.reserved.path), discfg's own records; schemas are changed by a whole-config token through the schema routes (`discfg schema`)")
        }
        self.init(config: config, prefix: prefix)
    }

    /// Whether a discfg prefix lies inside `/.discfg/` (or is `/.discfg/` itself): a
    /// scope there is refused when written, and one read from an older record reaches
    /// nothing.
    private static func isReserved(_ prefix: KeyPrefix) -> Bool { prefix.path.hasPrefix(SchemaTarget.reserved.path) }

    /// Whether the scope is the whole config.
    public var isWholeConfig: Bool { reach == .config }

    /// Whether `key` of the scope's config lies inside the scope.
    public func covers(_ key: Key) -> Bool {
        switch reach {
        case .config:
            return true
        case .keys(let prefix):
            guard !Self.isReserved(prefix) else { return false }
            return key.path.hasPrefix(prefix.path) || key.path.utf8.elementsEqual(prefix.path.utf8.dropLast())
        case .etcdKeys:
            guard let etcdRange, etcdRange.contains(key) else { return false }
            return EtcdKeyPath.isKeyPath(key.path)
        }
    }

    /// Whether every key under `prefix` lies inside the scope. `/` lies inside only the
    /// whole config; no discfg prefix lies inside an etcd prefix (every key under a
    /// prefix has two segments or more, or is any key for `/`).
    public func covers(_ prefix: KeyPrefix) -> Bool {
        switch reach {
        case .config: true
        case .keys(let scope): !Self.isReserved(scope) && prefix.path.hasPrefix(scope.path)
        case .etcdKeys: false
        }
    }

    /// Whether every key in `range` that `filter` lets it reach (nil: every key) lies
    /// inside the scope. A discfg prefix scope holds a range only when it lies under the
    /// prefix (`[/app/, /app0)`), whatever it reaches. An etcd prefix scope holds only a
    /// range that reaches etcd keys alone (``KeyFilter/etcdKeys``) and lies in the paths
    /// of etcd's own prefix range, `[path(prefix), path(prefix with its last byte below
    /// 0xFF incremented))`, so `etcdctl get --prefix` of the scope's prefix or any longer
    /// one is inside; a range of every key is never inside, since the discfg keys under
    /// `/app/` lie between the ends of the etcd prefix `app/`. An empty range (lower at or
    /// past upper) lies inside when its lower end does.
    ///
    /// The filter has no default: whoever asks about a range says which keys it reaches.
    public func covers(_ range: KeyRange, reaching filter: KeyFilter?) -> Bool {
        switch reach {
        case .config:
            return true
        case .keys(let prefix):
            return !Self.isReserved(prefix) && KeyRange(lower: prefix.path, upper: prefix.upperBound).covers(range)
        case .etcdKeys:
            guard let etcdRange, filter == .etcdKeys else { return false }
            return etcdRange.covers(range)
        }
    }

    /// etcd's end of the range of keys starting with `prefix`: the prefix without its
    /// trailing 0xFF bytes and with its last byte incremented; nil (every key from the
    /// prefix on) when it is all 0xFF.
    private static func prefixEnd(_ prefix: [UInt8]) -> [UInt8]? {
        var end = prefix
        while let last = end.last, last == 0xFF { end.removeLast() }
        guard !end.isEmpty else { return nil }
        end[end.count - 1] += 1
        return end
    }

    /// The scope as written: `demo`, `demo:/app/`, `demo:etcd:/registry/`.
    public var description: String {
        switch reach {
        case .config: config.rawValue
        case .keys(let prefix): "\(config):\(prefix.path)"
        case .etcdKeys(let bytes): "\(config):etcd:\(String(decoding: bytes, as: UTF8.self))"
        }
    }

    public static func == (lhs: AccessScope, rhs: AccessScope) -> Bool { lhs.config == rhs.config && lhs.reach == rhs.reach }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(config)
        hasher.combine(reach)
    }

    public init(from decoder: any Decoder) throws {
        try self.init(decoder.singleValueContainer().decode(String.self), refusingReserved: false)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
