import DiscfgCore
import Foundation
import GRPCCore
import Synchronization

/// What etcd clients ask of a cluster at start-up: `Maintenance.Status` (as
/// `etcdctl endpoint status` does) and `Cluster.MemberList`. discfg answers as a
/// one-member cluster whose leader is itself.
struct EtcdMaintenanceService: Etcdserverpb_Maintenance.SimpleServiceProtocol {
    let backend: EtcdBackend
    let identity: EtcdIdentity

    /// The etcd API version discfg speaks.
    static let version = "3.5.0"

    func status(request: Etcdserverpb_StatusRequest, context: ServerContext) async throws -> Etcdserverpb_StatusResponse {
        try await backend.reading {
            let info = try await backend.store.configInfo(backend.config)
            let revision = info.revision
            var response = Etcdserverpb_StatusResponse()
            response.header = identity.header(revision)
            // The config's live bytes stand for etcd's database size. Within one largest
            // key and value of its quota, where a put may be refused for space, the
            // member reports etcd's NOSPACE alarm, as etcd's Status does once raised.
            if let bytes = info.byteCount {
                response.dbSize = Int64(bytes)
                response.dbSizeInUse = Int64(bytes)
                if let quota = info.settings.quotaBytes, quota - bytes < Limits.maxValueBytes + Key.maxBytes {
                    response.errors = ["memberID:\(identity.memberID) alarm:NOSPACE "]
                }
            }
            response.version = Self.version
            response.leader = identity.memberID
            response.raftIndex = revision.rawValue
            response.raftAppliedIndex = revision.rawValue
            response.raftTerm = identity.raftTerm
            return response
        }
    }
}

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
