import DiscfgCore
import DiscfgNetwork
import HTTPTypes
import NIOCore

/// Whether a request may reach its route: the one question the router
/// (``ConfigAPI/respond(_:_:_:)``) and the event loops' fast path (``KeyReads``) both
/// ask, so each of its decisions has one home.
///
/// In order, as a caller is told:
/// 1. **Host** (``BrowserGuard``, when the transport has one): a loopback server answers
///    only to its own names, else 421.
/// 2. **Names**: the config the path names is a valid name, else 400 naming `config`.
/// 3. **Identity**: who the caller is, as the transport or the bearer token says (the
///    `caller` given), else 401. Routes open to everyone read no credentials.
/// 4. **Access**: the route's declared access (``Endpoint/access``) admits the caller
///    on that config, else 403.
///
/// What a route reads of its query and body is the route's own; the fast path takes only
/// requests with neither query nor conditions and hands the rest on.
struct Admission: Sendable {
    /// The Host rule of the transport; nil where the transport checks names itself
    /// (Lambda behind API Gateway).
    let browserGuard: BrowserGuard?

    /// What admission reads of a request, whichever transport brought it.
    struct Head {
        /// The name the request was sent to (`Host`, HTTP/2's `:authority`); nil when none.
        var authority: String?
        /// The `{config}` segment of the path as sent (percent-decoded); nil for routes
        /// whose path names no config.
        var configName: String?
    }

    /// A request let in: who calls, and the config its path names.
    struct Admitted: Equatable {
        var caller: Caller
        var config: ConfigName?
    }

    /// A request turned away: the error its envelope carries and the status it gets
    /// (the error code's, but for 421).
    struct Refusal: Error, Equatable {
        var error: DiscfgError
        var status: HTTPResponse.Status

        init(_ error: DiscfgError, status: HTTPResponse.Status? = nil) {
            self.error = error
            self.status = status ?? FailurePolicy.httpStatus(for: error.code)
        }

        /// A refusal of ``DiscfgNetwork/BrowserGuard``'s: 421 for a foreign `Host`, else
        /// its error code's status (403).
        init(browser error: DiscfgError, status: Int) {
            self.init(error, status: status == BrowserGuard.misdirectedStatus ? HTTPResponse.Status.misdirectedRequest : nil)
        }

        /// The error envelope for a route whose envelopes name `action`.
        func parts(action: String) -> (status: HTTPResponse.Status, headers: HTTPFields, body: ByteBuffer) {
            var parts = APIResponse.errorParts(error, action: action)
            parts.status = status
            return parts
        }
    }

    /// Admits or refuses a request for `endpoint`.
    /// - Parameters:
    ///   - head: what the request says of where it goes.
    ///   - caller: who the caller is, or why their credentials are refused (401);
    ///     not read for routes open to everyone.
    func admit(_ endpoint: Endpoint, _ head: Head, caller: Result<Caller, DiscfgError>) -> Result<Admitted, Refusal> {
        if let browserGuard, let refusal = browserGuard.refusal(host: head.authority) {
            return .failure(Refusal(browser: refusal, status: BrowserGuard.misdirectedStatus))
        }
        var config: ConfigName?
        if let name = head.configName {
            do {
                config = try ConfigName(name)
            } catch let error as DiscfgError {
                return .failure(Refusal(error))
            } catch {
                return .failure(Refusal(DiscfgError.invalid("config", "\(error)")))
            }
        }
        let access = endpoint.access
        if access == .everyone { return .success(Admitted(caller: .unidentified, config: config)) }
        let known: Caller
        switch caller {
        case .success(let identified): known = identified
        case .failure(let error): return .failure(Refusal(error))
        }
        guard access.admits(known, config: config, byKeys: endpoint.reachesByKeys) else { return .failure(Refusal(Self.denial(known, access, config))) }
        return .success(Admitted(caller: known, config: config))
    }

    /// Why `access` does not admit `caller` on `config`.
    static func denial(_ caller: Caller, _ access: ConfigAPI.Access, _ config: ConfigName?) -> DiscfgError {
        switch access {
        case .adminOfAll where caller.role == .admin:
            DiscfgError(.permissionDenied, "\(caller.name) is scoped to some configs; this route reaches every config and needs an admin of all", field: "authorization")
        case .role(let role):
            denial(caller, role, config)
        case .adminOfAll:
            denial(caller, .admin, nil)
        case .everyone:
            DiscfgError(.internal, "a route open to everyone refused \(caller.name)")
        }
    }

    private static func denial(_ caller: Caller, _ role: Role, _ config: ConfigName?) -> DiscfgError {
        if let config, caller.role >= role, caller.grant.reaches(config) {
            return DiscfgError(
                .permissionDenied,
                "\(caller.name) reaches config \(config) only as \(caller.grant.scopeList(on: config)); this route reaches the whole config and needs a scope of all of it",
                field: "authorization"
            )
        }
        let target = config.map { "config \($0)" } ?? "the list of configs"
        return DiscfgError(.permissionDenied, "\(caller.name) has role \(caller.role.rawValue) and may not \(role.verb) \(target)", field: "authorization")
    }
}

extension Role {
    /// What a caller with the role may do, as a refusal says it.
    var verb: String {
        switch self {
        case .read: "read"
        case .write: "change keys in"
        case .admin: "administer"
        }
    }
}
