import DiscfgCore
import DiscfgNetwork
import GRPCCore
import NIOCore
import NIOHTTP1

/// The gateway's own refusals, each noted in the audit trail as the REST API notes its
/// own: a browser's request (the REST API's ``DiscfgNetwork/BrowserGuard`` rules), a
/// path or method not served, a body that is not the method's request.
extension EtcdGatewayConnection {
    /// Answers a request the browser guards refused: its status (403 or 421) and the
    /// REST API's message as it is, in etcd's error body with the error's gRPC code.
    func answerBrowserRefusal(_ context: ChannelHandlerContext, _ head: HTTPRequestHead, _ error: DiscfgError, status: Int, held: Int) {
        let path = Self.path(head.uri)
        gateway.audit.gatewayRefused(method: head.method.rawValue, path: path, gateway.routes[path]?.method.descriptor, status: status, error: error)
        // The REST API's words, not etcd's prefixed ones: one refusal, one message.
        answer(context, head, status: status, EtcdGateway.errorBody(code: GRPCStatus.status(error).code, message: error.message), held: held)
    }

    /// Answers a CORS preflight from an origin `--cors-origin` allows: 204, the gateway's
    /// method and request headers.
    func answerPreflight(_ context: ChannelHandlerContext, _ head: HTTPRequestHead, origin: String, held: Int) {
        corsOrigin = origin
        answer(context, head, status: 204, "", held: held, headers: [
            ("access-control-allow-methods", "POST"), ("access-control-allow-headers", "Authorization, Content-Type, Grpc-Metadata-Token"),
            ("access-control-max-age", "600"),
        ])
    }

    /// Answers a path the gateway does not serve (404) or a method its path does not take
    /// (405) as etcd's gateway does, in plain text, and notes it.
    func answerRefusal(_ context: ChannelHandlerContext, _ head: HTTPRequestHead, _ descriptor: MethodDescriptor?, status: Int, held: Int) {
        let path = Self.path(head.uri)
        gateway.audit.gatewayRefused(method: head.method.rawValue, path: path, descriptor, status: status)
        // etcd's gateway answers its own prefix's unknown paths; its mux, the rest.
        let served = path.hasPrefix("/v3/") || path.hasPrefix("/v3beta/")
        let text = status == 405 ? "Method Not Allowed\n" : served ? "Not Found\n" : "404 page not found\n"
        answerText(context, head, status: status, text, held: held)
    }

    /// Notes a refusal of `head` (of the RPC `descriptor` names) that comes before its
    /// method ran, with the status its error is answered with; callable from its task.
    func refusalNote(_ head: HTTPRequestHead, _ descriptor: MethodDescriptor?) -> @Sendable (any Error) -> Void {
        let audit = gateway.audit, method = head.method.rawValue, path = Self.path(head.uri)
        return { error in
            audit.gatewayRefused(method: method, path: path, descriptor, status: EtcdGateway.httpStatus(GRPCStatus.status(error).code), error: error)
        }
    }
}

extension EtcdGateway {
    /// What the browser guards decide about a request to the gateway.
    func verdict(_ head: HTTPRequestHead) -> BrowserGuard.Verdict {
        browserGuard.verdict(
            method: head.method.rawValue, authority: head.headers.first(name: "host"), origin: head.headers.first(name: "origin"),
            preflight: head.headers.contains(name: "access-control-request-method")
        )
    }

    /// The CORS headers of an answer to a page of `origin`, one `--cors-origin` allows.
    static func corsHeaders(_ origin: String) -> [(String, String)] {
        [("access-control-allow-origin", origin), ("vary", "Origin")]
    }
}
