import DiscfgCore
import DiscfgService
import Hummingbird

extension ConfigAPI {
    /// The router's admission of a request for `endpoint` (``Admission``): who calls and
    /// the config the path names, or the refusal to answer with.
    func admit(_ endpoint: Endpoint, _ request: Request, _ context: some DiscfgRequestContext) async throws -> Result<Admission.Admitted, Admission.Refusal> {
        // A route that names a config always has the parameter; were it missing, the
        // empty name is refused rather than read as "no config".
        let head = Admission.Head(authority: request.head.authority, configName: endpoint.namesConfig ? request.configNameText(context) ?? "" : nil)
        let caller: Result<Caller, DiscfgError> = endpoint.kind.role == nil ? .success(.unidentified) : try await authenticator.identity(request, context: context)
        // Refused or not, the audit line names the caller when its credentials held.
        if case .success(let known) = caller { AuditNote.current?.update { $0.principal = known.principal } }
        return admission.admit(endpoint, head, caller: caller)
    }
}

extension Admission.Refusal {
    /// The refusal as the router answers it.
    func response(for endpoint: Endpoint) -> Response {
        let parts = parts(action: endpoint.action)
        return APIResponse.bytes(parts.body, contentType: APIResponse.jsonContentType, status: parts.status, headers: parts.headers)
    }
}
