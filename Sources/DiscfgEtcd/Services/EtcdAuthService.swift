import DiscfgCore
import GRPCCore

/// etcd's `Auth` service: `Authenticate` exchanges a discfg token for an etcd token
/// (``EtcdAccessGate/authenticate(name:password:at:)``); etcd's user, role and
/// auth-switch calls are refused by name, since discfg's users are its tokens.
struct EtcdAuthService {
    let backend: EtcdBackend
    let identity: EtcdIdentity
    let gate: EtcdAccessGate

    /// The user name is the discfg token's id and the password the whole token. The
    /// answer's header is the member's, at the config's revision, as etcd fills it.
    func authenticate(request: Etcdserverpb_AuthenticateRequest, context: ServerContext) async throws -> Etcdserverpb_AuthenticateResponse {
        let caller = try gate.authenticate(name: request.name, password: request.password)
        return try await backend.reading {
            var response = Etcdserverpb_AuthenticateResponse()
            response.header = identity.header(try await backend.currentRevision())
            // A token's caller, which always has its session.
            response.token = caller.session ?? ""
            return response
        }
    }

    /// etcd's `Auth` calls other than `Authenticate`, which discfg does not serve.
    static let refusedMethods = [
        "AuthEnable", "AuthDisable", "AuthStatus", "UserAdd", "UserGet", "UserList", "UserDelete", "UserChangePassword",
        "UserGrantRole", "UserRevokeRole", "RoleAdd", "RoleGet", "RoleList", "RoleDelete", "RoleGrantPermission", "RoleRevokePermission",
    ]

    /// The answer to each of ``refusedMethods``.
    static func refusal(_ method: String) -> RPCError {
        RPCError(
            code: .unimplemented,
            message: "etcdserver: \(method) is not served: discfg has no etcd users or roles; its users are discfg tokens, managed with 'discfg token' (create, list, revoke). Authenticate with a token's id as user name and the token as password"
        )
    }

    /// The refused methods, each answering ``refusal(_:)`` before its request is read.
    static var refused: [GRPCMethod] {
        refusedMethods.map { name in
            let error = refusal(name)
            return GRPCMethod(descriptor: MethodDescriptor(fullyQualifiedService: "etcdserverpb.Auth", method: name), kind: .unary { _, _ in throw error })
        }
    }
}
