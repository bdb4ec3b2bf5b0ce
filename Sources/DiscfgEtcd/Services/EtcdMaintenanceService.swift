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
/// ACTIVATE and DEACTIVATE. `Snapshot` is refused by name (``refused``), pointing at `discfg export`.
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
    private func maintaining<T: Sendable>(_ step: () async throws -> T) async throws -> T {
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
            if Self.noSpace(info) { response.errors = ["memberID:\(identity.memberID) alarm:NOSPACE "] }
            response.version = Self.version
            response.leader = identity.memberID
            response.raftIndex = revision.rawValue
            response.raftAppliedIndex = revision.rawValue
            response.raftTerm = identity.raftTerm
            return response
        }
    }

    /// Whether the member reports etcd's NOSPACE alarm: raised and kept in the config's
    /// settings (``ConfigSettings/alarms``, by ``alarm(request:context:)``'s ACTIVATE),
    /// or raised by the quota: the config's live bytes stand for etcd's database size,
    /// and within one largest key and value of its quota, where a put may be refused for
    /// space, the alarm is listed, as etcd raises it.
    static func noSpace(_ info: ConfigInfo) -> Bool {
        if info.settings.alarms.contains(.noSpace) { return true }
        guard let bytes = info.byteCount, let quota = info.settings.quotaBytes else { return false }
        return quota - bytes < Limits.maxValueBytes + Key.maxBytes
    }

    /// GET lists the member's NOSPACE while it is raised (``noSpace(_:)``), filtered by
    /// the request's member and alarm when it names them.
    ///
    /// ACTIVATE of NOSPACE raises it in the config's settings, where every server on the
    /// store sees it and the store refuses every change that writes a key (and lease
    /// grants) until it is disarmed, as etcd's capped applier does; DEACTIVATE clears it
    /// and answers it disarmed. The quota's NOSPACE is listed again while the config
    /// stays near its quota, and refuses only what would pass the quota. Both need admin
    /// over the whole config; CORRUPT is not raised by hand (``corruptRefused``).
    func alarm(request: Etcdserverpb_AlarmRequest, context: ServerContext) async throws -> Etcdserverpb_AlarmResponse {
        switch request.action {
        case .get:
            return try await backend.reading {
                let info = try await backend.store.configInfo(backend.config)
                return answer(Self.noSpace(info) && selects(request))
            }
        case .activate:
            return try await maintaining {
                try checkRaisable(request)
                let info = try await backend.store.configInfo(backend.config)
                let alarms = info.settings.alarms.union([.noSpace])
                if alarms != info.settings.alarms { _ = try await backend.store.updateConfig(backend.config, ConfigSettingsPatch(alarms: alarms)) }
                return answer(true)
            }
        case .deactivate:
            return try await maintaining {
                let info = try await backend.store.configInfo(backend.config)
                guard selects(request), Self.noSpace(info) else { return answer(false) }
                if info.settings.alarms.contains(.noSpace) {
                    _ = try await backend.store.updateConfig(backend.config, ConfigSettingsPatch(alarms: info.settings.alarms.subtracting([.noSpace])))
                }
                return answer(true)
            }
        case .UNRECOGNIZED:
            throw DiscfgError.invalid("action", "etcdserver: unknown alarm action \(request.action.rawValue)")
        }
    }

    /// Whether `request` names this member's NOSPACE, or any member or alarm.
    private func selects(_ request: Etcdserverpb_AlarmRequest) -> Bool {
        [0, identity.memberID].contains(request.memberID) && [.none, .nospace].contains(request.alarm)
    }

    /// An answer listing this member's NOSPACE when `listed`.
    private func answer(_ listed: Bool) -> Etcdserverpb_AlarmResponse {
        var response = Etcdserverpb_AlarmResponse()
        if listed {
            var member = Etcdserverpb_AlarmMember()
            member.memberID = identity.memberID
            member.alarm = .nospace
            response.alarms = [member]
        }
        return response
    }

    /// Refuses an ACTIVATE of anything but NOSPACE on this member.
    private func checkRaisable(_ request: Etcdserverpb_AlarmRequest) throws {
        switch request.alarm {
        case .nospace: break
        case .corrupt: throw Self.corruptRefused
        default: throw DiscfgError.invalid("alarm", "etcdserver: alarm \(request.alarm) cannot be raised; NOSPACE can")
        }
        guard [0, identity.memberID].contains(request.memberID) else {
            throw DiscfgError.invalid(
                "memberID",
                "etcdserver: member \(String(request.memberID, radix: 16)) is not in this cluster; its one member is \(String(identity.memberID, radix: 16))"
            )
        }
    }

    /// The answer to an `Alarm` ACTIVATE of CORRUPT: etcd's CORRUPT refuses reads too,
    /// which discfg's stores do not check alarms on.
    static let corruptRefused = RPCError(
        code: .unimplemented,
        message: "etcdserver: CORRUPT is not raised by hand in discfg; NOSPACE is (it refuses writes until disarmed)"
    )

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
