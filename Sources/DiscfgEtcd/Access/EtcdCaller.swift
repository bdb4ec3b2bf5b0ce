import DiscfgCore
import DiscfgService
import Foundation
import GRPCCore

/// Who an authenticated etcd call runs as: the discfg token whose id and whole text a
/// client gave `Auth.Authenticate` as user name and password, by the etcd token that
/// call answered (``session``), or the verified client certificate of the call's
/// connection, whose subject `--tls-client-roles` gives a role. What it may reach is its
/// ``caller``'s, judged by the one gate every face asks (``DiscfgService/Gate``).
///
/// A call's caller is bound (``current``) around its method by the connection that
/// admitted it; a server without authentication binds none, and its calls run as the
/// anonymous etcd client (``caller(authenticates:)``).
final class EtcdCaller: Sendable {
    /// The etcd token the caller's calls carry in their `token` metadata; nil for a
    /// certificate's caller, whose calls carry none.
    let session: String?
    /// The discfg token's id, the etcd user name; nil for a certificate's caller.
    let tokenID: String?
    /// Who calls and what it may do, as every face's callers are.
    let caller: Caller

    init(session: String, token: AccessToken) {
        self.session = session
        tokenID = token.id
        caller = Caller(
            name: "token:\(token.id)", role: token.role, scopes: token.scopes, principal: Principal(kind: .token, id: token.id, description: token.description)
        )
    }

    /// The caller of a client certificate, as its roles make it
    /// (``DiscfgNetwork/ClientCertificateRoles/caller(for:)``), for as long as its
    /// connection lasts.
    init(certificate caller: Caller) {
        session = nil
        tokenID = nil
        self.caller = caller
    }

    /// What the caller may do.
    var role: Role { caller.role }
    /// The role and scopes it holds: what it may read decides what a refusal shows it.
    var grant: AccessGrant { caller.grant }
    /// Whom its changes are recorded as.
    var principal: Principal { caller.principal }

    /// The caller of the current call, nil on a server without authentication.
    @TaskLocal static var current: EtcdCaller?

    /// Runs `operation` as this caller: its services' operations performed as it.
    func bound<T>(_ operation: () async throws -> T) async rethrows -> T {
        try await Self.$current.withValue(self, operation: operation)
    }

    /// The anonymous client of a server without authentication: it may do anything, and
    /// its changes are recorded as ``EtcdBackend/unauthenticated``'s.
    static let anonymous = Caller(name: "anonymous", role: .admin, scopes: nil, principal: EtcdBackend.unauthenticated.principal)

    /// Whom the current call runs as: its bound caller where calls authenticate, else
    /// the anonymous client.
    static func caller(authenticates: Bool) -> Caller {
        guard authenticates, let current else { return anonymous }
        return current.caller
    }
}

extension EtcdKeys {
    /// What a request naming the etcd keys `[key, rangeEnd)` reaches, as the gate judges
    /// it (`rangeEnd` empty: `key` alone; `\0`: every key from `key` on): a key, or a
    /// range that reaches only keys an etcd key makes. Never refused here: a key too long
    /// for the config is the service's to refuse, after the gate.
    static func target(key: some Collection<UInt8>, rangeEnd: some Collection<UInt8>) -> Action.Target {
        guard !rangeEnd.isEmpty else { return .key(Key(stored: path(key))) }
        return .range(range(key: Array(key), rangeEnd: Array(rangeEnd)), reaching: filter)
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
