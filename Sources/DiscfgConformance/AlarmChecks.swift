import DiscfgCore
import Foundation

/// A config's alarms (``ConfigSettings/alarms``) are kept with its settings and checked in
/// the store's transaction of every change: while NOSPACE is raised, every change that
/// writes a key is refused, whatever its size, and deletes, reads and compaction pass, as
/// etcd's capped applier lets them; the alarm outlives the store's opening and a disarm
/// lets writes through again.
public struct AlarmChecks: Sendable {
    let conformance: StoreConformance

    /// Expects `change` refused for the raised NOSPACE of `config`.
    private static func expectRefused(_ name: String, _ config: ConfigName, fileID: String = #fileID, line: Int = #line, _ change: () async throws -> Void) async throws {
        try await expectError(
            .quotaExceeded, "\(name)", field: DiscfgError.alarmsField, mentioning: ["NOSPACE", "\"\(config)\""], fileID: fileID, line: line
        ) { try await change() }
    }

    /// While NOSPACE is raised, sets (a shrinking one too), patches, documents, schemas,
    /// imports and transactions with a put are refused and change nothing; reads, deletes,
    /// transactions of deletes, expiry and compaction pass.
    public func aRaisedNoSpaceRefusesWritesOfKeysAndPassesDeletesAndReads() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig("capped")
            for key in ["/a", "/b", "/c", "/dir/d", "/dir/e"] { try await store.set(key, "value", in: config) }
            try await store.set("/j", #"{"a": 1}"#, in: config)
            try await store.set("/short", "lives five seconds", in: config, options: SetOptions(ttlSeconds: 5))
            let raised = try await store.updateConfig(config, ConfigSettingsPatch(alarms: [.noSpace]))
            expectEqual(raised.settings.alarms, [.noSpace])
            try await expectEqual(store.configInfo(config).settings.alarms, [.noSpace])
            try await expectEqual(store.listConfigs().first { $0.name == config }?.settings.alarms, [.noSpace])

            let before = try await store.observableState(of: config)
            let refusals: [(String, () async throws -> Void)] = [
                ("a new key", { try await store.set("/new", "v", in: config) }),
                ("a value that shrinks", { try await store.set("/a", "", in: config) }),
                ("a patch", { _ = try await store.patch(Key("/j"), .merge(["b": 2]), in: config, conditions: []) }),
                ("a document", { _ = try await store.putDocument(["x": 1], under: KeyPrefix("/doc/"), in: config, replace: false) }),
                ("a schema", { _ = try await store.setSchema(try SchemaTarget("/a"), to: Data(text: #"{"type": "string"}"#), in: config, force: true) }),
                ("a transaction with a put beside a delete", {
                    _ = try await store.transact(Transaction(success: [.delete(Key("/b")), .put(Key("/b2"), Data("v".utf8))]), in: config)
                }),
                ("an import", {
                    _ = try await store.importSnapshot(ConfigSnapshot(items: [ConfigSnapshot.Entry(key: try Key("/i"), value: Data("v".utf8))]), into: config, replace: false)
                }),
            ]
            for (name, change) in refusals { try await Self.expectRefused(name, config, change) }
            try await expectEqual(store.observableState(of: config), before, "a refused change changes nothing")

            try await expectEqual(store.get(Key("/a"), in: config)?.value, Data("value".utf8), "reads pass")
            _ = try await store.delete(Key("/a"), in: config, conditions: [])
            _ = try await store.deletePrefix(KeyPrefix("/dir/"), in: config)
            _ = try await store.transact(Transaction(success: [.delete(Key("/b"))]), in: config)
            clock.advance(seconds: 6)
            _ = try await store.sweepExpired()
            try await expectNil(store.get(Key("/short"), in: config), "an expired key is swept")
            let revision = try await store.revision(of: config)
            _ = try await store.compact(config, through: revision)
            let left = try await store.list(in: config, ListQuery(limit: Limits.maxPageSize)).items.map(\.key.path)
            expectEqual(left, ["/c", "/j"])
            try await expectEqual(store.configInfo(config).settings.alarms, [.noSpace], "nothing but a disarm clears it")
        }
    }

    /// The alarm is kept in the store: a second opening of it sees the alarm and refuses
    /// as the first does, and a disarm through either lets both write again.
    public func aRaisedAlarmOutlivesReopeningTheStore() async throws {
        try await conformance.withFixture { fixture, _ in
            let store = fixture.store
            let config = try await store.makeConfig("kept")
            try await store.set("/a", "value", in: config)
            _ = try await store.updateConfig(config, ConfigSettingsPatch(alarms: [.noSpace]))
            let reopened = try await fixture.reopen?() ?? store
            try await expectEqual(reopened.configInfo(config).settings.alarms, [.noSpace])
            try await Self.expectRefused("a set through the store opened again", config) { try await reopened.set("/b", "v", in: config) }
            try await expectEqual(reopened.get(Key("/a"), in: config)?.value, Data("value".utf8))
            let disarmed = try await reopened.updateConfig(config, ConfigSettingsPatch(alarms: []))
            expectEqual(disarmed.settings.alarms, [])
            try await store.set("/b", "v", in: config)
            try await reopened.set("/c", "v", in: config)
            try await expectEqual(store.configInfo(config).settings.alarms, [])
        }
    }

    /// Alarms are kept per etcd member (``RaisedAlarm``): member 0's beside the config's
    /// own member's, each kept, read back and disarmed apart; while either is raised,
    /// writes of keys are refused; an alarm of another member alone refuses them too.
    public func eachMembersAlarmIsKeptApartAndAnyRefusesWrites() async throws {
        try await conformance.withFixture { fixture, _ in
            let store = fixture.store
            let config = try await store.makeConfig("members")
            let zero = RaisedAlarm(.noSpace, member: 0)
            let raised = try await store.updateConfig(config, ConfigSettingsPatch(alarms: [.noSpace, zero]))
            expectEqual(raised.settings.alarms, [.noSpace, zero])
            let reopened = try await fixture.reopen?() ?? store
            try await expectEqual(reopened.configInfo(config).settings.alarms, [.noSpace, zero])
            try await expectEqual(store.listConfigs().first { $0.name == config }?.settings.alarms, [.noSpace, zero])
            try await Self.expectRefused("a set under both", config) { try await store.set("/a", "v", in: config) }

            let ownGone = try await store.updateConfig(config, ConfigSettingsPatch(alarms: [zero]))
            expectEqual(ownGone.settings.alarms, [zero], "disarming the own member's leaves member 0's")
            try await Self.expectRefused("a set under member 0's alone", config) { try await reopened.set("/a", "v", in: config) }
            let other = RaisedAlarm(.noSpace, member: UInt64.max)
            _ = try await store.updateConfig(config, ConfigSettingsPatch(alarms: [other]))
            try await expectEqual(reopened.configInfo(config).settings.alarms, [other])
            try await Self.expectRefused("a set under another member's", config) { try await store.set("/a", "v", in: config) }
            _ = try await store.updateConfig(config, ConfigSettingsPatch(alarms: []))
            try await store.set("/a", "v", in: config)
        }
    }

    /// A disarm clears the alarm and nothing else; a patch of other settings keeps it;
    /// alarms are absent by default and kept from creation.
    public func disarmClearsTheAlarmAndKeepsTheOtherSettings() async throws {
        try await conformance.withStore { store, _ in
            let plain = try await store.makeConfig("plain")
            try await expectEqual(store.configInfo(plain).settings.alarms, [])
            let settings = ConfigSettings(description: "d", quotaBytes: 4096)
            let config = try await store.makeConfig("app", settings: settings)
            _ = try await store.updateConfig(config, ConfigSettingsPatch(alarms: [.noSpace]))
            let patched = try await store.updateConfig(config, ConfigSettingsPatch(description: "e"))
            expectEqual(patched.settings.alarms, [.noSpace], "a patch of another setting keeps the alarm")
            try await Self.expectRefused("a set after another setting changed", config) { try await store.set("/a", "v", in: config) }
            let disarmed = try await store.updateConfig(config, ConfigSettingsPatch(alarms: []))
            expectEqual(disarmed.settings, ConfigSettings(description: "e", quotaBytes: 4096))
            try await store.set("/a", "v", in: config)
            try await expectEqual(store.get(Key("/a"), in: config)?.value, Data("v".utf8))
            let created = try await store.makeConfig("born-raised", settings: ConfigSettings(alarms: [.noSpace]))
            try await expectEqual(store.configInfo(created).settings.alarms, [.noSpace])
            try await Self.expectRefused("a set on a config created with the alarm", created) { try await store.set("/a", "v", in: created) }
        }
    }

    /// How many raises and disarms the concurrency checks run at once.
    static let concurrentChanges = 20

    /// Raises and disarms are applied to the alarms the store holds, in the write that
    /// changes them: concurrent raises of different members' alarms, half through a
    /// second opening of the store (a second server over it), all stay raised.
    public func concurrentRaisesOfDifferentMembersAreAllKept() async throws {
        try await conformance.withFixture { fixture, _ in
            let store = fixture.store
            let second = try await fixture.reopen?() ?? store
            let config = try await store.makeConfig("raised-at-once")
            let raised = Set((0..<Self.concurrentChanges).map { RaisedAlarm(.noSpace, member: UInt64($0)) })
            try await withThrowingTaskGroup(of: Void.self) { group in
                for alarm in raised {
                    let opening = alarm.member.map { $0.isMultiple(of: 2) } == true ? store : second
                    group.addTask { _ = try await opening.updateConfig(config, ConfigSettingsPatch(raiseAlarms: [alarm])) }
                }
                try await group.waitForAll()
            }
            try await expectEqual(store.configInfo(config).settings.alarms, raised, "every raise is kept")
            try await expectEqual(second.configInfo(config).settings.alarms, raised, "every raise is kept, seen by the second opening")
        }
    }

    /// Concurrent disarms of some members' alarms leave the others raised, and a raise
    /// beside an alarm keeps it; a patch that replaces the alarms and raises or disarms
    /// some too, or raises and disarms one alarm, is refused and changes nothing.
    public func concurrentDisarmsLeaveTheOtherAlarmsRaised() async throws {
        try await conformance.withFixture { fixture, _ in
            let store = fixture.store
            let second = try await fixture.reopen?() ?? store
            let config = try await store.makeConfig("disarmed-at-once")
            let members = (0..<Self.concurrentChanges).map { RaisedAlarm(.noSpace, member: UInt64($0)) }
            let all = Set(members).union([.noSpace])
            _ = try await store.updateConfig(config, ConfigSettingsPatch(alarms: Set(members)))
            let beside = try await store.updateConfig(config, ConfigSettingsPatch(raiseAlarms: [.noSpace]))
            expectEqual(beside.settings.alarms, all, "a raise keeps the alarms raised before")
            let disarmed = members.filter { $0.member.map { $0.isMultiple(of: 2) } == true }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, alarm) in disarmed.enumerated() {
                    let opening = index.isMultiple(of: 2) ? store : second
                    group.addTask { _ = try await opening.updateConfig(config, ConfigSettingsPatch(disarmAlarms: [alarm])) }
                }
                try await group.waitForAll()
            }
            let left = all.subtracting(disarmed)
            try await expectEqual(store.configInfo(config).settings.alarms, left, "each disarm removes its alarm alone")
            let again = try await second.updateConfig(config, ConfigSettingsPatch(disarmAlarms: Set(disarmed)))
            expectEqual(again.settings.alarms, left, "disarming alarms not raised changes nothing")

            let refused: [(String, ConfigSettingsPatch)] = [
                ("a replacement with a raise", ConfigSettingsPatch(alarms: [], raiseAlarms: [.noSpace])),
                ("a replacement with a disarm", ConfigSettingsPatch(alarms: [.noSpace], disarmAlarms: [.noSpace])),
                ("a raise and a disarm of one alarm", ConfigSettingsPatch(raiseAlarms: [.noSpace], disarmAlarms: [.noSpace])),
            ]
            for (name, patch) in refused {
                try await expectError(.invalidArgument, name) { try await store.updateConfig(config, patch) }
            }
            try await expectEqual(store.configInfo(config).settings.alarms, left, "a refused patch changes nothing")
        }
    }
}

extension StoreConformance {
    /// The checks of config alarms.
    public var alarms: AlarmChecks { AlarmChecks(conformance: self) }
}
