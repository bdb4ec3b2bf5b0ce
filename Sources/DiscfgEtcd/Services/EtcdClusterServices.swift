import DiscfgCore
import Foundation
import GRPCCore
import Synchronization

/// etcd's `Cluster.MemberList`: discfg answers as a one-member cluster whose leader is
/// itself (``EtcdMaintenanceService`` answers its `Maintenance` calls).
struct EtcdClusterService: Etcdserverpb_Cluster.SimpleServiceProtocol {
    let backend: EtcdBackend
    let identity: EtcdIdentity
    /// Where clients reach this member, e.g. `http://127.0.0.1:2379`: known once the
    /// server has bound its port (clients that sync their endpoints dial it).
    let clientURL: ClientURL

    /// The member's client URL, set once the port is bound.
    final class ClientURL: Sendable {
        private let value: Mutex<String>
        init(_ value: String) { self.value = Mutex(value) }
        var current: String { value.withLock { $0 } }
        func set(_ url: String) { value.withLock { $0 = url } }
    }

    func memberList(request: Etcdserverpb_MemberListRequest, context: ServerContext) async throws -> Etcdserverpb_MemberListResponse {
        try await backend.reading {
            var member = Etcdserverpb_Member()
            member.id = identity.memberID
            member.name = "discfg"
            member.clientUrls = [clientURL.current]
            // A member of one has no peer port; clients that read the field unguarded
            // (etcd3gw's `member['peerURLs']`, which protobuf's JSON leaves out when empty)
            // find the one address it is reached at.
            member.peerUrls = [clientURL.current]
            var response = Etcdserverpb_MemberListResponse()
            response.header = identity.header(try await backend.currentRevision())
            response.members = [member]
            return response
        }
    }
}
