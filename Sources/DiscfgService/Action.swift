import DiscfgCore

/// What one request does and what it reaches (an operation, as data), whichever face brought it: a REST route,
/// the event-loop fast path, Lambda, an etcd call or the etcd gateway.
///
/// The gate (``Gate``) judges it, the audit names it, and the service
/// (``Pipeline/perform(_:by:message:deadline:writeStart:_:)``) runs it. What each kind needs is declared
/// once, here (``Kind/role``, ``Kind/reach``); a face only says which kind a request is
/// and which keys it names.
///
/// ```swift
/// // etcd's Put of `app/port`, or `PUT /v1/demo/keys/app/port`:
/// let put = Action(.set, on: demo, writing: .key(try Key("/app/port")))
/// let refusal = Gate.refusal(of: put, for: caller)   // nil: the caller may
/// ```
public struct Action: Sendable, Hashable {
    /// What it does.
    public var kind: Kind
    /// The config it acts on; nil for an operation of the server (its tokens, the list
    /// of configs, an expiry sweep of every config).
    public var config: ConfigName?
    /// The keys it reaches, each with the role it needs there. Empty while a face has
    /// not yet read them (a request judged before its body is read); an operation whose
    /// reach is its keys is then judged on the config alone, and judged again, whole,
    /// once its keys are known.
    public var parts: [Part]

    /// One part of what an operation reaches: a key, a prefix or a range, read or changed.
    public struct Part: Sendable, Hashable {
        /// The role the part needs: ``Role/read`` to compare or read it, ``Role/write`` to change it.
        public var role: Role
        /// What it reaches.
        public var target: Target

        public init(_ role: Role, _ target: Target) {
            self.role = role
            self.target = target
        }
    }

    /// Keys an operation names.
    public enum Target: Sendable, Hashable, CustomStringConvertible {
        /// One key.
        case key(Key)
        /// Every key under a prefix (``KeyPrefix/root``: every key of the config).
        case prefix(KeyPrefix)
        /// Every key of a range that the filter lets it reach (nil: every key; etcd's
        /// ranges reach only keys an etcd key makes, ``KeyFilter/etcdKeys``).
        case range(KeyRange, reaching: KeyFilter?)

        public var description: String {
            switch self {
            case .key(let key): "the key \(key.path)"
            case .prefix(let prefix): prefix == .root ? "the prefix / (every key of the config)" : "the prefix \(prefix.path)"
            case .range(let range, _): "the range \(range)"
            }
        }
    }

    /// An operation of `kind` on `config` reaching `parts`.
    public init(_ kind: Kind, on config: ConfigName?, parts: [Part] = []) {
        self.kind = kind
        self.config = config
        self.parts = parts
    }

    /// An operation of `kind` on `config` reaching `target` with the role the kind needs.
    public init(_ kind: Kind, on config: ConfigName, reaching target: Target) {
        self.init(kind, on: config, parts: [Part(kind.role ?? .read, target)])
    }

    /// The role the operation needs as a whole: its kind's, or the most any part needs
    /// (a transaction that changes a key needs the write role).
    public var role: Role? {
        guard let role = kind.role else { return nil }
        return parts.reduce(role) { max($0, $1.role) }
    }

    /// Whether it changes anything.
    public var writes: Bool { (role ?? .read) >= .write }
}

extension Action {
    /// What a request does. Each property of a kind is an exhaustive switch: a new kind
    /// does not compile until it says what it needs.
    public enum Kind: String, CaseIterable, Sendable, Hashable, CustomStringConvertible {
        // Keys: read.
        case get, list, history, watch, export
        case documentRead = "document-read"
        case range
        /// Evaluating feature flags (OFREP): a read of the config's flag sets, the keys
        /// under `/flags/`, with the caller's context.
        case flagEvaluate = "flag-eval"
        // Keys: changed.
        case set, patch, delete
        case deletePrefix = "delete-prefix"
        case documentWrite = "document-write"
        case importSnapshot = "import"
        /// A transaction: reads what it compares and reads, changes what it puts and
        /// deletes, each part with its own role (``Transaction/parts``).
        case txn
        // Leases: a caller reaches only the leases it granted, and their keys.
        case leaseGrant = "lease-grant"
        case leaseRevoke = "lease-revoke"
        case leaseKeepAlive = "lease-keepalive"
        case leaseTimeToLive = "lease-ttl"
        case leaseList = "lease-list"
        // The whole config.
        case configInfo = "info"
        case configCreate = "create"
        case configUpdate = "update"
        case configDelete = "delete-config"
        case compact
        case schemaList = "schemas"
        case schemaRead = "schema"
        case schemaWrite = "schema-set"
        case schemaDelete = "schema-delete"
        /// Reading a config's staged deployments: their records live under discfg's own
        /// `/.discfg/`, so only a scope of the whole config reaches them.
        case deploymentRead = "deployments"
        /// Starting or moving a staged deployment: it writes discfg's own records and
        /// staging under `/.discfg/`, and (completing, reverting) keys anywhere under its
        /// prefix, so it needs the write role over the whole config; a prefix-scoped token
        /// is refused.
        case deploymentChange = "deploy"
        /// Reporting health against a running deployment's versions (requests and errors
        /// an application saw, a reporter's counts): a reader's act, which changes no key,
        /// over the whole config, as its deployments are.
        case healthReport = "health"
        /// What the config's server says of itself (etcd's `Maintenance.Status`): any
        /// caller of part of the config may ask.
        case status
        /// etcd's maintenance of the whole store (disarming alarms, defragmentation,
        /// hashes, leadership): admin over the whole config, as etcd's need its root.
        case maintenance
        /// etcd's changes of cluster membership.
        case membership
        // The server.
        case configList = "configs"
        case tokenList = "tokens"
        case tokenCreate = "token-create"
        case tokenRevoke = "token-revoke"
        case sweep
        // Open to everyone.
        case describe
        case memberList = "member-list"
        case authenticate

        /// The role it needs; nil for what anyone may do without credentials (the API's
        /// description, etcd's member list, and authenticating, which is how a caller
        /// gets a role).
        public var role: Role? {
            switch self {
            case .get, .list, .history, .watch, .export, .documentRead, .range, .flagEvaluate, .txn, .configInfo, .schemaList, .schemaRead, .deploymentRead, .healthReport, .status, .configList: .read
            case .set, .patch, .delete, .deletePrefix, .documentWrite, .importSnapshot,
                 .leaseGrant, .leaseRevoke, .leaseKeepAlive, .leaseTimeToLive, .leaseList, .schemaWrite, .schemaDelete, .deploymentChange, .membership: .write
            case .configCreate, .configUpdate, .configDelete, .compact, .maintenance, .tokenList, .tokenCreate, .tokenRevoke, .sweep: .admin
            case .describe, .memberList, .authenticate: nil
            }
        }

        /// What it reaches, and so what a caller's scopes must hold.
        public var reach: Reach {
            switch self {
            case .get, .list, .history, .watch, .export, .documentRead, .range, .flagEvaluate, .set, .patch, .delete, .deletePrefix, .documentWrite,
                 .importSnapshot, .txn, .leaseGrant, .leaseRevoke, .leaseKeepAlive, .leaseTimeToLive, .leaseList, .status:
                .keys
            case .configInfo, .configCreate, .configUpdate, .configDelete, .compact, .schemaList, .schemaRead, .schemaWrite, .schemaDelete,
                 .deploymentRead, .deploymentChange, .healthReport, .maintenance, .membership:
                .config
            case .configList: .configs
            case .tokenList, .tokenCreate, .tokenRevoke, .sweep: .server
            case .describe, .memberList, .authenticate: .open
            }
        }

        public var description: String { rawValue }
    }

    /// What a kind of operation reaches.
    public enum Reach: Sendable, Hashable {
        /// Nothing of any config: anyone may.
        case open
        /// The keys it names (``Action/parts``): a scope on part of the config lets it
        /// in, and each part must lie within one.
        case keys
        /// The whole config: only a scope of all of it holds it (its settings, schemas,
        /// compaction, which drops history of every key).
        case config
        /// The list of configs: each caller is shown the configs it reaches.
        case configs
        /// Every config at once: only an admin of all.
        case server
    }
}
