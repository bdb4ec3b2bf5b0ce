import DiscfgCore
import Foundation
import GRPCCore
import Testing

@testable import DiscfgEtcd

/// etcd's `Alarm` keeps each alarm under a member id, as etcd 3.4's alarm store does:
/// member 0's beside the member's own, GET lists every pair, DEACTIVATE removes the one it
/// names.
@Suite("etcd Alarm: alarms kept per member id, member 0 beside the member's own")
struct EtcdAlarmMembersTests {
    static func call(
        _ service: EtcdMaintenanceService, _ action: Etcdserverpb_AlarmRequest.AlarmAction, member: UInt64 = 0, alarm: Etcdserverpb_AlarmType = .nospace
    ) async throws -> [String] {
        var request = Etcdserverpb_AlarmRequest()
        request.action = action
        request.memberID = member
        request.alarm = alarm
        let response = try await service.alarm(request: request, context: EtcdMaintenanceTests.context)
        return response.alarms.map { "\($0.memberID):\($0.alarm)" }
    }

    /// Whether a put is refused with etcd's NOSPACE.
    static func putRefused(_ kv: EtcdKVService) async -> Bool {
        let refused = await EtcdKVServiceTests.failure { try await EtcdMaintenanceTests.put(kv, "k", "v") }
        return refused?.code == .resourceExhausted
    }

    @Test("ACTIVATE for member 0 and for the member's own id keeps both; GET lists both whatever member it names; DEACTIVATE of one leaves the other, and writes stay refused until both are gone", arguments: EtcdTestBacking.allCases)
    func memberZeroBesideOwn(_ backing: EtcdTestBacking) async throws {
        let (kv, service, store, cleanUp) = try await EtcdMaintenanceTests.service(backing)
        defer { cleanUp() }
        let own = service.identity.memberID
        #expect(try await Self.call(service, .activate, member: 0) == ["0:nospace"])
        #expect(try await Self.call(service, .activate, member: own) == ["\(own):nospace"])
        #expect(try await Self.call(service, .activate, member: own) == ["\(own):nospace"], "a second ACTIVATE answers the pair kept")
        let both = ["0:nospace", "\(own):nospace"]
        #expect(try await Self.call(service, .get, alarm: .none) == both)
        #expect(try await Self.call(service, .get, member: 12345, alarm: .none) == both, "GET lists every member's, as etcd's does")
        #expect(try await Self.call(service, .get, alarm: .nospace) == both)
        #expect(try await Self.call(service, .get, alarm: .corrupt) == [])
        // Kept as settings spell them: the member's own without an id, as before ids were kept.
        #expect(try await store.configInfo(service.backend.config).settings.alarms == [.noSpace, RaisedAlarm(.noSpace, member: 0)])
        let status = try await service.status(request: .init(), context: EtcdMaintenanceTests.context)
        #expect(status.errors == ["alarm:NOSPACE ", "memberID:\(own) alarm:NOSPACE "], "as etcd's text form writes member 0's")
        #expect(await Self.putRefused(kv))

        #expect(try await Self.call(service, .deactivate, member: own) == ["\(own):nospace"])
        #expect(try await Self.call(service, .get, alarm: .none) == ["0:nospace"])
        #expect(await Self.putRefused(kv), "member 0's NOSPACE alone refuses writes")
        #expect(try await Self.call(service, .deactivate, member: own) == [], "a pair not raised is answered with none")
        #expect(try await Self.call(service, .deactivate, member: 0, alarm: .none) == [], "NONE names no alarm to deactivate")
        #expect(try await Self.call(service, .deactivate, member: 0) == ["0:nospace"])
        #expect(try await Self.call(service, .get, alarm: .none) == [])
        try await EtcdMaintenanceTests.put(kv, "k", "v")
    }

    @Test("concurrent ACTIVATEs of different member ids are all kept, and concurrent DEACTIVATEs leave the other pairs", arguments: EtcdTestBacking.allCases)
    func concurrentActivatesAndDeactivates(_ backing: EtcdTestBacking) async throws {
        let (_, service, _, cleanUp) = try await EtcdMaintenanceTests.service(backing)
        defer { cleanUp() }
        let members = (1...20).map(UInt64.init)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for member in members { group.addTask { _ = try await Self.call(service, .activate, member: member) } }
            try await group.waitForAll()
        }
        #expect(try await Self.call(service, .get, alarm: .none) == members.map { "\($0):nospace" })
        try await withThrowingTaskGroup(of: Void.self) { group in
            for member in members where member.isMultiple(of: 2) {
                group.addTask {
                    let answer = try await Self.call(service, .deactivate, member: member)
                    #expect(answer == ["\(member):nospace"])
                }
            }
            try await group.waitForAll()
        }
        #expect(try await Self.call(service, .get, alarm: .none) == members.filter { !$0.isMultiple(of: 2) }.map { "\($0):nospace" })
    }

    @Test("the own member's alarm alone refuses writes, and member 0's stays when it goes", arguments: EtcdTestBacking.allCases)
    func ownAloneThenZeroAlone(_ backing: EtcdTestBacking) async throws {
        let (kv, service, _, cleanUp) = try await EtcdMaintenanceTests.service(backing)
        defer { cleanUp() }
        let own = service.identity.memberID
        _ = try await Self.call(service, .activate, member: own)
        #expect(await Self.putRefused(kv))
        _ = try await Self.call(service, .activate, member: 0)
        #expect(try await Self.call(service, .deactivate, member: 0) == ["0:nospace"])
        #expect(try await Self.call(service, .get, alarm: .none) == ["\(own):nospace"])
        #expect(await Self.putRefused(kv))
    }

    @Test("an ACTIVATE for a member the cluster does not have is kept under its id, as etcd keeps it, listed and refusing writes until that pair is deactivated", arguments: EtcdTestBacking.allCases)
    func anotherMember(_ backing: EtcdTestBacking) async throws {
        let (kv, service, store, cleanUp) = try await EtcdMaintenanceTests.service(backing)
        defer { cleanUp() }
        let other = UInt64.max
        #expect(try await Self.call(service, .activate, member: other) == ["\(other):nospace"])
        #expect(try await Self.call(service, .get, alarm: .none) == ["\(other):nospace"])
        #expect(try await store.configInfo(service.backend.config).settings.alarms == [RaisedAlarm(.noSpace, member: other)])
        #expect(await Self.putRefused(kv))
        #expect(try await Self.call(service, .deactivate, member: 0) == [], "member 0 names only member 0's")
        #expect(try await Self.call(service, .deactivate, member: other) == ["\(other):nospace"])
        try await EtcdMaintenanceTests.put(kv, "k", "v")
    }

    @Test("CORRUPT is refused for any member, NONE cannot be raised, and neither leaves an alarm")
    func refusedAlarms() async throws {
        let (_, service, _, cleanUp) = try await EtcdMaintenanceTests.service(.memory)
        defer { cleanUp() }
        for member in [0, service.identity.memberID, 7] {
            let corrupt = await EtcdKVServiceTests.failure { try await Self.call(service, .activate, member: member, alarm: .corrupt) }
            #expect(corrupt?.code == .unimplemented)
            let none = await EtcdKVServiceTests.failure { try await Self.call(service, .activate, member: member, alarm: .none) }
            #expect(none?.code == .invalidArgument)
        }
        #expect(try await Self.call(service, .get, alarm: .none) == [])
    }
}
