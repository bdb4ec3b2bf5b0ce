import DiscfgCore
import Foundation
import GRPCCore

/// etcd's `Lease` service over ``EtcdLeases``.
struct EtcdLeaseService: Etcdserverpb_Lease.SimpleServiceProtocol {
    let backend: EtcdBackend
    let identity: EtcdIdentity
    let leases: EtcdLeases
    /// Whether calls may run as an authenticated caller (``EtcdCaller/current``): a
    /// scoped caller reaches only the leases it granted (``EtcdLeaseHolder``), and may
    /// revoke one, or list its keys, only when it reaches every key attached to it.
    var authenticates = false

    /// Who the current call runs as, for the leases it reaches.
    private var holder: EtcdLeaseHolder {
        EtcdLeaseHolder(authenticates ? EtcdCaller.current : nil, config: backend.config)
    }

    /// Refuses a scoped caller a lease of its own holding a key outside its scopes.
    private func authorizeKeys(of id: Int64, by holder: EtcdLeaseHolder) async throws {
        guard authenticates, let caller = EtcdCaller.current, caller.intervals != nil,
              let lease = try await backend.answering({ try await leases.timeToLive(id, keys: true, by: holder) }) else { return }
        for key in lease.keys {
            guard let bytes = EtcdKeys.bytes(key.path) else { continue }
            try caller.authorize(key: Data(bytes), rangeEnd: Data())
        }
    }

    func leaseGrant(request: Etcdserverpb_LeaseGrantRequest, context: ServerContext) async throws -> Etcdserverpb_LeaseGrantResponse {
        try await backend.answering {
            let (id, ttl) = try await leases.grant(id: request.id, ttl: request.ttl, by: holder)
            var response = Etcdserverpb_LeaseGrantResponse()
            response.header = identity.header(try await backend.currentRevision())
            response.id = id
            response.ttl = ttl
            return response
        }
    }

    func leaseRevoke(request: Etcdserverpb_LeaseRevokeRequest, context: ServerContext) async throws -> Etcdserverpb_LeaseRevokeResponse {
        let holder = holder
        try await authorizeKeys(of: request.id, by: holder)
        return try await backend.answering {
            let revision = try await leases.revoke(request.id, by: holder)
            var response = Etcdserverpb_LeaseRevokeResponse()
            response.header = identity.header(revision)
            return response
        }
    }

    func leaseKeepAlive(
        request: RPCAsyncSequence<Etcdserverpb_LeaseKeepAliveRequest, any Error>,
        response: RPCWriter<Etcdserverpb_LeaseKeepAliveResponse>,
        context: ServerContext
    ) async throws {
        let holder = holder
        for try await message in request {
            let (ttl, revision) = try await backend.answering { (try await leases.keepAlive(message.id, by: holder), try await backend.currentRevision()) }
            var answer = Etcdserverpb_LeaseKeepAliveResponse()
            answer.header = identity.header(revision)
            answer.id = message.id
            answer.ttl = ttl
            try await response.write(answer)
        }
    }

    func leaseTimeToLive(request: Etcdserverpb_LeaseTimeToLiveRequest, context: ServerContext) async throws -> Etcdserverpb_LeaseTimeToLiveResponse {
        let holder = holder
        if request.keys { try await authorizeKeys(of: request.id, by: holder) }
        return try await backend.answering {
            var response = Etcdserverpb_LeaseTimeToLiveResponse()
            response.header = identity.header(try await backend.currentRevision())
            response.id = request.id
            if let lease = try await leases.timeToLive(request.id, keys: request.keys, by: holder) {
                response.ttl = lease.remaining
                response.grantedTtl = lease.granted
                if request.keys {
                    // A lease may hold any number of keys; its answer at most one answer's
                    // budget of them (etcd has no `more` here, so past it: refused).
                    let keys = lease.keys.compactMap { EtcdKeys.bytes($0.path).map { Data($0) } }
                    let bytes = keys.reduce(0) { $0 + $1.count + 8 }
                    guard bytes <= EtcdAnswer.maxBytes else { throw EtcdError.answerTooLarge }
                    response.keys = keys
                }
            } else {
                // etcd's answer for a lease that is gone.
                response.ttl = -1
            }
            return response
        }
    }

    func leaseLeases(request: Etcdserverpb_LeaseLeasesRequest, context: ServerContext) async throws -> Etcdserverpb_LeaseLeasesResponse {
        let holder = holder
        return try await backend.answering {
            var response = Etcdserverpb_LeaseLeasesResponse()
            response.header = identity.header(try await backend.currentRevision())
            response.leases = try await leases.ids(by: holder).map { id in
                var status = Etcdserverpb_LeaseStatus()
                status.id = id
                return status
            }
            return response
        }
    }
}
