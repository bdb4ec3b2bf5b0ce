import DiscfgCore

/// The keys an admitted request may reach, checked where its route has read them: the
/// caller's scopes (``AccessGrant``) against each key, prefix or snapshot the request
/// names, for a route whose reach is its keys (``Endpoint/reachesByKeys``).
///
/// A request that reaches past every scope is refused whole with 403 naming the scopes,
/// before anything is read or changed: never narrowed to what the scopes hold, never
/// half-applied.
///
/// ```swift
/// let reach = KeyReach(caller: caller, config: demo, role: .write)
/// try reach.check(try Key("/app/x"))        // within demo:/app/
/// try reach.check(KeyPrefix.root)           // 403: the prefix / reaches past demo:/app/
/// ```
struct KeyReach: Sendable {
    /// Who calls.
    let caller: Caller
    /// The config the route's path names.
    let config: ConfigName
    /// The role the route needs.
    let role: Role

    /// The reach of `endpoint` for `caller` on `config`: the role it declares.
    init(_ endpoint: Endpoint, caller: Caller, config: ConfigName) {
        let role: Role = if case .role(let role) = endpoint.access { role } else { .admin }
        self.init(caller: caller, config: config, role: role)
    }

    /// The reach of a request needing `role`.
    init(caller: Caller, config: ConfigName, role: Role) {
        self.caller = caller
        self.config = config
        self.role = role
    }

    /// Whether the caller may reach anything only through prefix scopes here, so every
    /// key must be checked (false for a caller of whole configs, which admission judged).
    var isNarrow: Bool { !caller.allows(role, on: config) }

    /// Refuses unless `key` lies within a scope.
    func check(_ key: Key) throws {
        guard caller.grant.allows(role, on: config, key: key) else { throw refusal("the key \(key.path) lies outside them") }
    }

    /// Refuses unless every key under `prefix` lies within one scope.
    func check(_ prefix: KeyPrefix) throws {
        guard caller.grant.allows(role, on: config, keysUnder: prefix) else {
            throw refusal(prefix == .root ? "the prefix / (every key of the config) reaches past them" : "the prefix \(prefix.path) reaches past them")
        }
    }

    /// Refuses unless the caller reaches every key of the config (an export, an import
    /// that replaces, a watch of every key).
    func checkWholeConfig() throws { try check(KeyPrefix.root) }

    /// Refuses unless every key of `range` that `filter` lets it reach (nil: every key)
    /// lies within one scope: an etcd prefix scope never holds a range of every key.
    func check(_ range: KeyRange, reaching filter: KeyFilter?) throws {
        guard caller.grant.allows(role, on: config, range: range, reaching: filter) else {
            throw refusal("the range \(range) reaches past them" + (filter == nil ? " (a range here reaches every key of the config, not only etcd keys)" : ""))
        }
    }

    /// Refuses unless every key, prefix and range a transaction compares, reads or
    /// changes lies within a scope: reads as the route's role allows (a write route
    /// checks every part as a write, so a transaction is judged whole).
    func check(_ transaction: Transaction) throws {
        guard isNarrow else { return }
        for comparison in transaction.compares {
            switch comparison.subject {
            case .key(let key): try check(key)
            case .prefix(let prefix): try check(prefix)
            case .range(let range): try check(range, reaching: transaction.keyFilter)
            }
        }
        for operation in transaction.success + transaction.failure {
            switch operation {
            case .put(let key, _, _, _), .patch(let key, _), .delete(let key), .get(let key): try check(key)
            case .deletePrefix(let prefix), .getPrefix(let prefix): try check(prefix)
            case .deleteRange(let range), .getRange(let range): try check(range, reaching: transaction.keyFilter)
            }
        }
    }

    /// Refuses unless every key of `snapshot` lies within a scope; one that replaces the
    /// config (deleting every key it does not name) needs all of it.
    func check(_ snapshot: ConfigSnapshot, replace: Bool) throws {
        guard isNarrow else { return }
        if replace { return try checkWholeConfig() }
        for entry in snapshot.items { try check(entry.key) }
    }

    /// The 403 naming the caller's scopes on the config and what lies outside them.
    private func refusal(_ outside: String) -> DiscfgError {
        DiscfgError(
            .permissionDenied,
            "\(caller.name) may \(role.verb) config \(config) only within \(caller.grant.scopeList(on: config)); \(outside)",
            field: "authorization"
        )
    }
}
