import DiscfgCore

/// Whether a caller may perform an operation: the one decision every face asks, in one
/// key space.
///
/// The kind says the role it needs and what it reaches (``Action/Kind``); the parts say
/// which keys. A part is judged against the caller's scopes (``AccessGrant``) as what it
/// is — a key, a prefix, or a range with the keys it reaches — so a scope of one kind
/// (`demo:etcd:app/`) holds only the keys it names, whichever face asks. An operation
/// reaching past any scope is refused whole, before anything is read or changed: never
/// narrowed, never half-applied.
///
/// The answer is a ``DiscfgError`` naming the caller, what it may do and what lies
/// outside it (`permissionDenied`); each face encodes it as its protocol says (403 with
/// an envelope, etcd's "permission denied").
public enum Gate {
    /// Whether `caller` may perform `action`.
    public static func admits(_ action: Action, for caller: Caller) -> Bool {
        refusal(of: action, for: caller) == nil
    }

    /// Why `caller` may not perform `action`, or nil when it may.
    public static func refusal(of action: Action, for caller: Caller) -> DiscfgError? {
        guard let role = action.kind.role else { return nil }
        let config = action.config
        switch action.kind.reach {
        case .open:
            return nil
        case .server:
            guard caller.role == .admin, caller.scopes == nil else {
                return caller.role == .admin
                    ? DiscfgError(.permissionDenied, "\(caller.name) is scoped to some configs; this reaches every config and needs an admin of all", field: "authorization")
                    : roleDenial(caller, .admin, nil)
            }
            return nil
        case .configs:
            return caller.allows(role, on: nil) ? nil : roleDenial(caller, role, nil)
        case .config:
            return caller.allows(role, on: config) ? nil : wholeConfigDenial(caller, role, config)
        case .keys:
            guard let config else { return caller.allows(role, on: nil) ? nil : roleDenial(caller, role, nil) }
            guard caller.role >= role, caller.grant.reaches(config) else { return roleDenial(caller, role, config) }
            for part in action.parts {
                guard caller.role >= part.role else { return roleDenial(caller, part.role, config) }
                // A caller of the whole config reaches every part of it.
                guard !caller.allows(part.role, on: config), !holds(caller.grant, part, on: config) else { continue }
                return DiscfgError(
                    .permissionDenied,
                    "\(caller.name) may \(part.role.verb) config \(config) only within \(caller.grant.scopeList(on: config)); \(outside(part.target))",
                    field: "authorization"
                )
            }
            return nil
        }
    }

    /// Whether one of `grant`'s scopes holds all of `part`.
    static func holds(_ grant: AccessGrant, _ part: Action.Part, on config: ConfigName) -> Bool {
        switch part.target {
        case .key(let key): grant.allows(part.role, on: config, key: key)
        case .prefix(let prefix): grant.allows(part.role, on: config, keysUnder: prefix)
        case .range(let range, let filter): grant.allows(part.role, on: config, range: range, reaching: filter)
        }
    }

    /// What lies outside the scopes, as a refusal says it.
    private static func outside(_ target: Action.Target) -> String {
        switch target {
        case .key: "\(target) lies outside them"
        case .prefix: "\(target) reaches past them"
        case .range(_, let filter):
            "\(target) reaches past them" + (filter == nil ? " (a range here reaches every key of the config, not only etcd keys)" : "")
        }
    }

    /// A caller whose role is too low for `role` on `config` (nil: the list of configs),
    /// or that does not reach the config at all.
    static func roleDenial(_ caller: Caller, _ role: Role, _ config: ConfigName?) -> DiscfgError {
        let target = config.map { "config \($0)" } ?? "the list of configs"
        return DiscfgError(.permissionDenied, "\(caller.name) has role \(caller.role.rawValue) and may not \(role.verb) \(target)", field: "authorization")
    }

    /// A caller that may not act on the whole of `config`: scoped to part of it, or too low.
    static func wholeConfigDenial(_ caller: Caller, _ role: Role, _ config: ConfigName?) -> DiscfgError {
        if let config, caller.role >= role, caller.grant.reaches(config) {
            return DiscfgError(
                .permissionDenied,
                "\(caller.name) reaches config \(config) only as \(caller.grant.scopeList(on: config)); this reaches the whole config and needs a scope of all of it",
                field: "authorization"
            )
        }
        return roleDenial(caller, role, config)
    }
}

extension Role {
    /// What a caller with the role may do, as a refusal says it.
    public var verb: String {
        switch self {
        case .read: "read"
        case .write: "change keys in"
        case .admin: "administer"
        }
    }
}
