import DiscfgCore
import Foundation
import GRPCCore

/// Who an authenticated etcd call runs as: the discfg token whose id and whole text a
/// client gave `Auth.Authenticate` as user name and password, by the etcd token that
/// call answered (``session``), or the verified client certificate of the call's
/// connection, whose subject `--tls-client-roles` gives a role; with what the token's or
/// certificate's role and scopes let it reach.
///
/// A call's caller is bound (``current``) around its method by the connection that
/// admitted it; a server without authentication binds none, and its services then check
/// nothing.
final class EtcdCaller: Sendable {
    /// The etcd token the caller's calls carry in their `token` metadata; nil for a
    /// certificate's caller, whose calls carry none.
    let session: String?
    /// The discfg token's id, the etcd user name; nil for a certificate's caller.
    let tokenID: String?
    /// What the caller may do.
    let role: Role
    /// The etcd keys the caller may reach, as sorted, disjoint intervals; nil for every
    /// key of the config, empty for none (a token whose scopes miss the etcd config).
    let intervals: [EtcdKeyInterval]?
    /// Whom the caller's changes are recorded as.
    let attribution: Attribution
    /// The role and scopes the intervals come from: what the caller may read decides
    /// what a refusal shows it (``DiscfgError/shown(to:on:)``).
    let grant: AccessGrant

    init(session: String, token: AccessToken, intervals: [EtcdKeyInterval]?) {
        self.session = session
        tokenID = token.id
        role = token.role
        grant = AccessGrant(role: token.role, scopes: token.scopes)
        self.intervals = intervals
        attribution = Attribution(principal: Principal(kind: .token, id: token.id, description: token.description))
    }

    /// The caller of a client certificate: `principal` (the certificate's subject) with
    /// `grant`'s role over `intervals`, for as long as its connection lasts.
    init(certificate principal: Principal, grant: AccessGrant, intervals: [EtcdKeyInterval]?) {
        session = nil
        tokenID = nil
        role = grant.role
        self.grant = grant
        self.intervals = intervals
        attribution = Attribution(principal: principal)
    }

    /// The caller of the current call, nil on a server without authentication.
    @TaskLocal static var current: EtcdCaller?

    /// Runs `operation` as this caller: its services' checks made against it, and the
    /// changes they make attributed to it (``Transaction/attributed(to:)``). One
    /// task-local push per call: the attribution travels on each transaction.
    func bound<T>(_ operation: () async throws -> T) async rethrows -> T {
        try await Self.$current.withValue(self, operation: operation)
    }

    /// Whether the caller reaches any key of the config at all.
    var reachesConfig: Bool { intervals.map { !$0.isEmpty } ?? true }

    /// Refuses a call that needs every key of the config (Compact).
    func requireWholeConfig() throws(RPCError) {
        guard intervals == nil else { throw EtcdAuthError.permissionDenied }
    }

    /// Refuses a read or write of the etcd interval `[key, rangeEnd)` as a Range,
    /// DeleteRange, Watch or a Txn's compare or operation names it (`rangeEnd` empty:
    /// `key` alone; `\0`: every key from `key` on) unless one of the caller's intervals
    /// holds all of it. Never narrowed: a range reaching one key past the scopes is
    /// refused whole.
    func authorize(key: Data, rangeEnd: Data) throws(RPCError) {
        guard let intervals else { return }
        guard EtcdKeyInterval.holds(intervals, key: key, rangeEnd: rangeEnd) else { throw EtcdAuthError.permissionDenied }
    }

    /// Whether the caller may watch the range `create` names.
    func permits(watch create: Etcdserverpb_WatchCreateRequest) -> Bool {
        do {
            try authorize(key: create.key, rangeEnd: create.rangeEnd)
            return true
        } catch {
            return false
        }
    }

    /// Refuses a Txn unless the caller may read every compare and read operation and,
    /// when any branch writes, holds the write role, and reaches every key it names.
    /// Refused whole, before anything runs: never half-applied.
    func authorize(_ txn: Etcdserverpb_TxnRequest) throws(RPCError) {
        if role < .write, Self.writes(txn) { throw EtcdAuthError.permissionDenied }
        guard intervals != nil else { return }
        for compare in txn.compare { try authorize(key: compare.key, rangeEnd: compare.rangeEnd) }
        for operation in txn.success { try authorize(operation) }
        for operation in txn.failure { try authorize(operation) }
    }

    private func authorize(_ operation: Etcdserverpb_RequestOp) throws(RPCError) {
        switch operation.request {
        case .requestRange(let range)?: try authorize(key: range.key, rangeEnd: range.rangeEnd)
        case .requestPut(let put)?: try authorize(key: put.key, rangeEnd: Data())
        case .requestDeleteRange(let delete)?: try authorize(key: delete.key, rangeEnd: delete.rangeEnd)
        case .requestTxn(let txn)?: try authorize(txn)
        case nil: break
        }
    }

    /// Whether either branch of `txn` (or a transaction nested in one) puts or deletes.
    static func writes(_ txn: Etcdserverpb_TxnRequest) -> Bool {
        (txn.success + txn.failure).contains { operation in
            switch operation.request {
            case .requestPut?, .requestDeleteRange?: true
            case .requestTxn(let nested)?: writes(nested)
            case .requestRange?, nil: false
            }
        }
    }

    /// The role each method needs, by its full name (`etcdserverpb.KV/Put`): nil for
    /// `Auth.Authenticate`, which is how a caller gets one (and etcd's other `Auth`
    /// calls, refused whoever calls). A Txn needs read here, and
    /// write once it is read and found to put or delete (``authorize(_:)``).
    static func needed(by method: String) -> Role? {
        switch method {
        case _ where method.hasPrefix("etcdserverpb.Auth/"): nil
        // etcd answers the member list without authentication, and clients ask it
        // before they authenticate, to find the members to call (patroni does). It
        // holds the server's own address and name, nothing of the config.
        case "etcdserverpb.Cluster/MemberList": nil
        case "etcdserverpb.KV/Range", "etcdserverpb.KV/Txn", "etcdserverpb.Watch/Watch",
             "etcdserverpb.Maintenance/Status": .read
        case "etcdserverpb.KV/Compact": .admin
        default: .write
        }
    }
}

extension Transaction {
    /// This transaction, attributed to `caller` when there is one (else as the backend
    /// decides: the etcd API's anonymous client).
    func attributed(to caller: EtcdCaller?) -> Transaction {
        guard let caller else { return self }
        var attributed = self
        attributed.attribution = caller.attribution
        return attributed
    }
}

/// etcd's answers to callers it does not let in, by the messages its clients recognise
/// (etcd's `api/v3rpc/rpctypes/error.go`).
enum EtcdAuthError {
    /// A call without a token while authentication is on.
    static let userEmpty = RPCError(code: .invalidArgument, message: "etcdserver: user name is empty")
    /// A call whose token is unknown, expired or bound to a revoked discfg token: clients
    /// authenticate again once, with the user name and password they were given.
    static let invalidToken = RPCError(code: .unauthenticated, message: "etcdserver: invalid auth token")
    /// `Authenticate` with a user name and password that are not a valid discfg token's
    /// id and the token itself.
    static let authFailed = RPCError(code: .invalidArgument, message: "etcdserver: authentication failed, invalid user ID or password")
    /// A call the caller's role or scopes do not allow.
    static let permissionDenied = RPCError(code: .permissionDenied, message: "etcdserver: permission denied")
    /// `Authenticate` on a server that requires no tokens: clients then call without one.
    static let notEnabled = RPCError(code: .failedPrecondition, message: "etcdserver: authentication is not enabled")
}

/// The etcd keys from ``start`` up to ``end`` (excluded; nil: every key from ``start``
/// on), as a scope's prefix reaches them.
struct EtcdKeyInterval: Sendable, Equatable {
    let start: Data
    let end: Data?

    /// The keys that start with `prefix` (every key for an empty one).
    init(prefix: Data) {
        start = prefix
        var end = prefix
        while let last = end.last, last == 0xFF { end.removeLast() }
        if end.isEmpty {
            self.end = nil
        } else {
            end[end.index(before: end.endIndex)] += 1
            self.end = end
        }
    }

    init(start: Data, end: Data?) {
        self.start = start
        self.end = end
    }

    /// The intervals of `prefixes`, sorted, with those that overlap or touch merged.
    static func merged(prefixes: [Data]) -> [EtcdKeyInterval] {
        let sorted = prefixes.map(EtcdKeyInterval.init(prefix:)).sorted { $0.start.lexicographicallyPrecedes($1.start) }
        var merged: [EtcdKeyInterval] = []
        for interval in sorted {
            guard let last = merged.last else {
                merged.append(interval)
                continue
            }
            // The last reaches every key after its start: it holds this one too.
            guard let lastEnd = last.end else { continue }
            guard lastEnd.lexicographicallyPrecedes(interval.start) else {
                let end = interval.end.map { lastEnd.lexicographicallyPrecedes($0) ? $0 : lastEnd }
                merged[merged.count - 1] = EtcdKeyInterval(start: last.start, end: end)
                continue
            }
            merged.append(interval)
        }
        return merged
    }

    /// Whether one of `intervals` (sorted, disjoint) holds all of `[key, rangeEnd)`.
    static func holds(_ intervals: [EtcdKeyInterval], key: Data, rangeEnd: Data) -> Bool {
        guard let interval = intervals.last(where: { !key.lexicographicallyPrecedes($0.start) }) else { return false }
        if let end = interval.end, !key.lexicographicallyPrecedes(end) { return false }
        // `key` alone; or an empty interval (its end at or before its start).
        if rangeEnd.isEmpty || (rangeEnd != Data([0]) && !key.lexicographicallyPrecedes(rangeEnd)) { return true }
        guard let end = interval.end else { return true }
        // Every key from `key` on reaches past any bounded interval.
        guard rangeEnd != Data([0]) else { return false }
        return !end.lexicographicallyPrecedes(rangeEnd)
    }
}
