import DiscfgCore
import DiscfgService
import GRPCCore

extension EtcdMaintenanceService {
    /// etcd's `Alarm`, answered as etcd 3.4's alarm store answers it: each alarm is kept
    /// under a member id, in the config's settings (``ConfigSettings/alarms``, the
    /// config's own member's without an id: ``RaisedAlarm``), where every server on the
    /// store sees it.
    ///
    /// - GET lists every (member, alarm) pair raised, whatever member the request names,
    ///   filtered by its alarm unless that is NONE; the NOSPACE the quota raises is
    ///   listed under this member (``listed(_:)``).
    /// - ACTIVATE of NOSPACE keeps it under the member id named, whichever: 0, this
    ///   member's, or another (etcd keeps an alarm for a member it does not have too),
    ///   and answers that pair. While any member's NOSPACE is raised the store refuses
    ///   every change that writes a key, and lease grants, as etcd's capped applier
    ///   does. CORRUPT is refused (``corruptRefused``); NONE cannot be raised.
    /// - DEACTIVATE removes the one pair it names, member id and alarm, and answers it;
    ///   it answers nothing when that pair is not raised (NONE names none, as in etcd).
    ///   The quota's NOSPACE is answered disarmed but listed again while the config
    ///   stays near its quota.
    ///
    /// ACTIVATE and DEACTIVATE change only the pair they name, relative to the alarms the
    /// store holds as it writes (``ConfigSettingsPatch/raiseAlarms``, ``ConfigSettingsPatch/disarmAlarms``),
    /// so concurrent ones, on this server or another over the store, lose none.
    ///
    /// ACTIVATE and DEACTIVATE need admin over the whole config; GET any role.
    func alarm(request: Etcdserverpb_AlarmRequest, context: ServerContext) async throws -> Etcdserverpb_AlarmResponse {
        switch request.action {
        case .get:
            return try await backend.reading {
                let info = try await backend.store.configInfo(backend.config)
                return Self.answer(listed(info).filter { request.alarm == .none || $0.alarm == request.alarm })
            }
        case .activate:
            return try await maintaining {
                try Self.checkRaisable(request)
                let raised = stored(.noSpace, member: request.memberID)
                let info = try await backend.store.configInfo(backend.config)
                if !info.settings.alarms.contains(raised) {
                    _ = try await backend.store.updateConfig(backend.config, ConfigSettingsPatch(raiseAlarms: [raised]))
                }
                return Self.answer([Self.member(request.memberID, .nospace)])
            }
        case .deactivate:
            return try await maintaining {
                let info = try await backend.store.configInfo(backend.config)
                let pair = Self.member(request.memberID, request.alarm)
                guard listed(info).contains(pair) else { return Self.answer([]) }
                let disarmed = info.settings.alarms.filter { Self.member(memberID(of: $0), Self.alarmType($0.alarm)) == pair }
                if !disarmed.isEmpty {
                    _ = try await backend.store.updateConfig(backend.config, ConfigSettingsPatch(disarmAlarms: disarmed))
                }
                return Self.answer([pair])
            }
        case .UNRECOGNIZED:
            throw DiscfgError.invalid("action", "etcdserver: unknown alarm action \(request.action.rawValue)")
        }
    }

    /// Every (member, alarm) pair raised on the config, by member id: those kept in its
    /// settings, and this member's NOSPACE while the quota raises it (``quotaRaisesNoSpace(_:)``).
    func raised(_ info: ConfigInfo) -> [RaisedPair] {
        var pairs = Set(info.settings.alarms.map { RaisedPair(member: memberID(of: $0), alarm: $0.alarm) })
        if Self.quotaRaisesNoSpace(info) { pairs.insert(RaisedPair(member: identity.memberID, alarm: .noSpace)) }
        return pairs.sorted { ($0.member, $0.alarm) < ($1.member, $1.alarm) }
    }

    /// ``raised(_:)`` as etcd's alarm members.
    private func listed(_ info: ConfigInfo) -> [Etcdserverpb_AlarmMember] {
        raised(info).map { Self.member($0.member, Self.alarmType($0.alarm)) }
    }

    /// One raised alarm as etcd lists it: its member id and what is raised.
    struct RaisedPair: Hashable {
        let member: UInt64
        let alarm: ConfigAlarm
    }

    /// The etcd member id `raised` is kept under: this member's for the config's own.
    private func memberID(of raised: RaisedAlarm) -> UInt64 { raised.member ?? identity.memberID }

    /// How settings keep `alarm` of etcd member `member`: this member's as the config's
    /// own (without an id), as alarms were kept before member ids were.
    private func stored(_ alarm: ConfigAlarm, member: UInt64) -> RaisedAlarm {
        RaisedAlarm(alarm, member: member == identity.memberID ? nil : member)
    }

    /// etcd's name of `alarm`.
    private static func alarmType(_ alarm: ConfigAlarm) -> Etcdserverpb_AlarmType {
        switch alarm {
        case .noSpace: .nospace
        }
    }

    private static func member(_ id: UInt64, _ alarm: Etcdserverpb_AlarmType) -> Etcdserverpb_AlarmMember {
        var member = Etcdserverpb_AlarmMember()
        member.memberID = id
        member.alarm = alarm
        return member
    }

    private static func answer(_ alarms: [Etcdserverpb_AlarmMember]) -> Etcdserverpb_AlarmResponse {
        var response = Etcdserverpb_AlarmResponse()
        response.alarms = alarms
        return response
    }

    /// Refuses an ACTIVATE of anything but NOSPACE.
    private static func checkRaisable(_ request: Etcdserverpb_AlarmRequest) throws {
        switch request.alarm {
        case .nospace: break
        case .corrupt: throw corruptRefused
        default: throw DiscfgError.invalid("alarm", "etcdserver: alarm \(request.alarm) cannot be raised; NOSPACE can")
        }
    }

    /// The answer to an `Alarm` ACTIVATE of CORRUPT: etcd's CORRUPT refuses reads too,
    /// which discfg's stores do not check alarms on.
    static let corruptRefused = RPCError(
        code: .unimplemented,
        message: "etcdserver: CORRUPT is not raised by hand in discfg; NOSPACE is (it refuses writes until disarmed)"
    )

    /// Whether the quota raises this member's NOSPACE: the config's live bytes stand for
    /// etcd's database size, and within one largest key and value of its quota, where a
    /// put may be refused for space, the alarm is listed, as etcd raises it.
    static func quotaRaisesNoSpace(_ info: ConfigInfo) -> Bool {
        guard let bytes = info.byteCount, let quota = info.settings.quotaBytes else { return false }
        return quota - bytes < Limits.maxValueBytes + Key.maxBytes
    }
}
