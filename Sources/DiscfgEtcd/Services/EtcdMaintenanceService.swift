import DiscfgCore
import DiscfgService
import GRPCCore

/// etcd's `Maintenance` calls, answered as a one-member cluster whose leader is itself.
///
/// `Status` (as `etcdctl endpoint status` asks) needs any role on the config; the calls
/// that maintain the store need admin over the whole config, as etcd's need its root
/// (``DiscfgService/Action/Kind/maintenance``): `Defragment` (nothing to do: the
/// stores reclaim space themselves), `Hash` and `HashKV` (a hash of the keys and
/// values, ``EtcdBackend/hashKV(at:)``), `MoveLeader` (to itself only) and `Alarm`'s
/// ACTIVATE and DEACTIVATE (``alarm(request:context:)``). `Snapshot` is refused by name (``refused``), pointing at `discfg export`.
struct EtcdMaintenanceService: Etcdserverpb_Maintenance.SimpleServiceProtocol {
    let backend: EtcdBackend
    let identity: EtcdIdentity
    /// Whether calls carry a caller the gate authenticated; false on a server that
    /// requires no tokens, whose calls run as the anonymous client.
    var authenticates = false

    /// The etcd API version discfg speaks.
    static let version = "3.5.0"

    /// Runs `step` as a maintenance action on the whole config by the call's caller,
    /// through the one chain every face's actions go (``DiscfgService/Pipeline``).
    func maintaining<T: Sendable>(_ step: () async throws -> T) async throws -> T {
        try await backend.perform(Action(.maintenance, on: backend.config), by: EtcdCaller.caller(authenticates: authenticates), step)
    }

    func status(request: Etcdserverpb_StatusRequest, context: ServerContext) async throws -> Etcdserverpb_StatusResponse {
        try await backend.reading {
            let info = try await backend.store.configInfo(backend.config)
            let revision = info.revision
            var response = Etcdserverpb_StatusResponse()
            response.header = identity.header(revision)
            if let bytes = info.byteCount {
                response.dbSize = Int64(bytes)
                response.dbSizeInUse = Int64(bytes)
            }
            // Every alarm raised, as etcd's status lists them: AlarmMember's text form,
            // which leaves out a member id of 0.
            response.errors = raised(info).map { ($0.member == 0 ? "" : "memberID:\($0.member) ") + "alarm:\($0.alarm.rawValue) " }
            response.version = Self.version
            response.leader = identity.memberID
            response.raftIndex = revision.rawValue
            response.raftAppliedIndex = revision.rawValue
            response.raftTerm = identity.raftTerm
            return response
        }
    }

    /// Nothing is fragmented in discfg's sense: SQLite and DynamoDB reuse the space of
    /// deleted keys and dropped history themselves. Succeeds, answering as etcd does,
    /// without a header.
    func defragment(request: Etcdserverpb_DefragmentRequest, context: ServerContext) async throws -> Etcdserverpb_DefragmentResponse {
        try await maintaining { Etcdserverpb_DefragmentResponse() }
    }

    /// A hash of the config's keys and values now: etcd hashes its whole store; discfg's
    /// store is the config, so it is ``hashKV(request:context:)`` at the current revision.
    func hash(request: Etcdserverpb_HashRequest, context: ServerContext) async throws -> Etcdserverpb_HashResponse {
        try await maintaining {
            let hashed = try await backend.hashKV(at: 0)
            var response = Etcdserverpb_HashResponse()
            response.header = identity.header(hashed.revision)
            response.hash = hashed.hash
            return response
        }
    }

    func hashKV(request: Etcdserverpb_HashKVRequest, context: ServerContext) async throws -> Etcdserverpb_HashKVResponse {
        try await maintaining {
            let hashed = try await backend.hashKV(at: request.revision)
            var response = Etcdserverpb_HashKVResponse()
            response.header = identity.header(try await backend.currentRevision())
            response.hash = hashed.hash
            response.compactRevision = hashed.compactRevision
            response.hashRevision = hashed.revision.storageValue
            return response
        }
    }

    /// A member of one is already the leader: a move to itself succeeds, to any other
    /// member fails as etcd's for a member it does not have.
    func moveLeader(request: Etcdserverpb_MoveLeaderRequest, context: ServerContext) async throws -> Etcdserverpb_MoveLeaderResponse {
        try await maintaining {
            guard request.targetID == identity.memberID else { throw Self.badLeaderTransferee }
            return Etcdserverpb_MoveLeaderResponse()
        }
    }

    /// etcd's `ErrBadLeaderTransferee`, `FAILED_PRECONDITION`.
    static let badLeaderTransferee = DiscfgError(.conditionFailed, "etcdserver: bad leader transferee", field: "targetID")

    /// etcd's `Snapshot`, refused before its request is read: it streams etcd's bolt
    /// database, which discfg does not have.
    static var refused: [GRPCMethod] {
        let error = RPCError(
            code: .unimplemented,
            message: "etcdserver: Snapshot is not served: discfg has no etcd database file; back the config up with 'discfg export CONFIG -o backup.json' and restore it with 'discfg import CONFIG backup.json'"
        )
        return [GRPCMethod(descriptor: MethodDescriptor(fullyQualifiedService: "etcdserverpb.Maintenance", method: "Snapshot"), kind: .unary { _, _ in throw error })]
    }
}
