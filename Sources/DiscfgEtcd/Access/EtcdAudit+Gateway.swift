import DiscfgCore
import DiscfgNetwork
import DiscfgService
import GRPCCore

extension EtcdAudit {
    /// Notes a request the JSON gateway refused itself, before any method ran: a path it
    /// does not serve (404), a method it does not take (405), a body that is not the
    /// method's request (400), one over a limit, or a browser's (403, 421). Its line names
    /// the HTTP method, the path and the status, as the REST API's refusals do, and the
    /// RPC the path names (`unmatched` for none); no principal, for none was authenticated.
    /// - Parameters:
    ///   - descriptor: the RPC the path names; nil for a path the gateway does not serve.
    ///   - error: the refusal, when it has a gRPC status or a discfg error code.
    func gatewayRefused(method: String, path: String, _ descriptor: MethodDescriptor?, status: Int, error: (any Error)? = nil) {
        guard let trail else { return }
        let note = AuditNote(AuditNote.Fields(
            route: descriptor.map(EtcdMethodTable.path), config: config, error: (error as? DiscfgError)?.code
        ))
        let answer = AuditNote.Answer(method: method, path: path, status: status, grpcStatus: error.map(Self.statusName))
        trail.note(note.record(api: "etcd", route: "unmatched", answer))
    }
}
