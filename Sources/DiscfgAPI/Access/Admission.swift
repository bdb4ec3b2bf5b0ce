import DiscfgCore
import DiscfgService
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
/// 4. **Access**: the gate (``DiscfgService/Gate``) admits the caller to the route's
///    operation (``Endpoint/kind``) on that config, else 403: before the request's keys
///    are read, on any part of the config for an operation whose reach is its keys,
///    which its handler then performs, keys and all, through the same gate.
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
        if endpoint.kind.role == nil { return .success(Admitted(caller: .unidentified, config: config)) }
        let known: Caller
        switch caller {
        case .success(let identified): known = identified
        case .failure(let error): return .failure(Refusal(error))
        }
        if let refusal = Gate.refusal(of: Action(endpoint.kind, on: config), for: known) { return .failure(Refusal(refusal)) }
        return .success(Admitted(caller: known, config: config))
    }
}
