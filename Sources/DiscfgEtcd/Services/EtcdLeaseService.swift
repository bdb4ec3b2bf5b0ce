import DiscfgCore
import DiscfgService
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

    /// Runs `step` as `action` by the current call's caller, through the one chain every
    /// face's actions go (``DiscfgService/Pipeline``), its failures answered as etcd does.
    private func perform<T: Sendable>(_ action: Action, _ step: () async throws -> T) async throws -> T {
        try await backend.perform(action, by: EtcdCaller.caller(authenticates: authenticates), step)
    }

    /// What an action on the lease `id` reaches: for a caller scoped to part of the config,
    /// each etcd key attached to the lease, with `role` (a revoke deletes them, a
    /// time-to-live with keys reads them); nothing more for one of the whole config.
    private func action(_ kind: Action.Kind, lease id: Int64, keys role: Role, by holder: EtcdLeaseHolder) async throws -> Action {
        var action = Action(kind, on: backend.config)
        guard authenticates, let caller = EtcdCaller.current, !caller.grant.allows(.read, on: backend.config),
              let lease = try await backend.reading({ try await leases.timeToLive(id, keys: true, by: holder) }) else { return action }
        action.parts = lease.keys.compactMap { key in EtcdKeys.bytes(key.path) == nil ? nil : Action.Part(role, .key(key)) }
        return action
    }

    func leaseGrant(request: Etcdserverpb_LeaseGrantRequest, context: ServerContext) async throws -> Etcdserverpb_LeaseGrantResponse {
        try await perform(Action(.leaseGrant, on: backend.config)) {
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
        return try await perform(try await action(.leaseRevoke, lease: request.id, keys: .write, by: holder)) {
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
            let (ttl, revision) = try await perform(Action(.leaseKeepAlive, on: backend.config)) {
                (try await leases.keepAlive(message.id, by: holder), try await backend.currentRevision())
            }
            var answer = Etcdserverpb_LeaseKeepAliveResponse()
            answer.header = identity.header(revision)
            answer.id = message.id
            answer.ttl = ttl
            try await response.write(answer)
        }
    }

    func leaseTimeToLive(request: Etcdserverpb_LeaseTimeToLiveRequest, context: ServerContext) async throws -> Etcdserverpb_LeaseTimeToLiveResponse {
        let holder = holder
        let action = request.keys ? try await action(.leaseTimeToLive, lease: request.id, keys: .read, by: holder) : Action(.leaseTimeToLive, on: backend.config)
        return try await perform(action) {
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
        return try await perform(Action(.leaseList, on: backend.config)) {
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
