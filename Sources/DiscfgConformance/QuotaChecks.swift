import DiscfgCore
import Foundation

/// Every store counts a config's live bytes (key paths and values) in the same
/// transaction as each change, and refuses a change that would take them past the
/// config's quota (``ConfigSettings/quotaBytes``), while deletes and changes that do not
/// grow the config always pass.
public struct QuotaChecks: Sendable {
    let conformance: StoreConformance

    /// The bytes the live keys of `config` hold, from a listing.
    static func listedBytes(_ store: any ConfigStore, _ config: ConfigName) async throws -> Int {
        try await store.list(in: config, ListQuery(limit: Limits.maxPageSize)).items.map(PageBudget.size).reduce(0, +)
    }

    /// The byte count of `config` as its info and the list of configs give it, which must
    /// agree.
    static func byteCount(_ store: any ConfigStore, _ config: ConfigName) async throws -> Int? {
        let listed = try await store.listConfigs().first { $0.name == config }?.byteCount
        let info = try await store.configInfo(config).byteCount
        expectEqual(listed, info, "the list of configs and the config's info disagree")
        return info
    }

    /// A config's byte count follows every kind of change: its key paths and values, in
    /// its info and the list of configs alike; refused changes count nothing.
    public func byteCountFollowsEveryKindOfChange() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig("counted")
            let other = try await store.makeConfig("other")
            func expectCounted(_ comment: String) async throws {
                let counted = try await Self.byteCount(store, config)
                let listed = try await Self.listedBytes(store, config)
                expectEqual(counted, listed, comment)
            }
            try await expectEqual(Self.byteCount(store, config), 0)
            for key in ["/a", "/b", "/dir/c", "/dir/d"] { try await store.set(key, "value", in: config) }
            try await store.set("/elsewhere", "v", in: other)
            try await expectEqual(Self.byteCount(store, config), 4 * 5 + 2 + 2 + 6 + 6)
            try await store.set("/a", "a longer value", in: config)
            try await expectCounted("a value grown")
            try await store.set("/a", "", in: config)
            try await expectCounted("a value emptied")
            _ = try await store.delete(Key("/b"), in: config, conditions: [])
            try await expectCounted("a key deleted")
            try await expectError(.conditionFailed) { try await store.set(Key("/a"), to: Data("x".utf8), in: config, options: SetOptions(conditions: [.version(9)])) }
            try await expectCounted("a refused change counts nothing")
            _ = try await store.deletePrefix(KeyPrefix("/dir"), in: config)
            try await expectCounted("a prefix deleted")
            _ = try await store.transact(Transaction(success: [.put(Key("/t1"), Data("xx".utf8)), .put(Key("/t2"), Data("y".utf8)), .delete(Key("/a"))]), in: config)
            try await expectCounted("a transaction")
            try await store.set("/short", "lives five seconds", in: config, options: SetOptions(ttlSeconds: 5))
            try await expectCounted("a key with a TTL")
            clock.advance(seconds: 6)
            _ = try await store.sweepExpired()
            try await expectCounted("an expired key is counted out when swept")
            let snapshot = ConfigSnapshot(items: [
                ConfigSnapshot.Entry(key: try Key("/t1"), value: Data("xx".utf8)), ConfigSnapshot.Entry(key: try Key("/n"), value: Data("imported".utf8)),
            ])
            _ = try await store.importSnapshot(snapshot, into: config, replace: true)
            try await expectCounted("an import that replaces")
            try await expectEqual(Self.byteCount(store, config), 3 + 2 + 2 + 8)
            try await expectEqual(Self.byteCount(store, other), 10 + 1, "other configs are untouched")
        }
    }

    /// A change that would take a config past its quota is refused with `quotaExceeded`
    /// naming the quota and the size, and changes nothing; deletes and changes that do
    /// not grow the config pass, even over the quota (after it was lowered); raising or
    /// removing the quota lets growth through again.
    public func changesPastTheQuotaAreRefusedAndShrinkingOnesPass() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig("limited", settings: ConfigSettings(quotaBytes: 1000))
            try await expectEqual(store.configInfo(config).settings.quotaBytes, 1000)
            let value = Data(repeating: 0x61, count: 400)
            _ = try await store.set(Key("/a"), to: value, in: config)
            _ = try await store.set(Key("/b"), to: value, in: config)
            try await expectEqual(Self.byteCount(store, config), 804)

            let before = try await store.observableState(of: config)
            let refusals: [(String, () async throws -> Void)] = [
                ("a new key", { _ = try await store.set(Key("/c"), to: value, in: config) }),
                ("a value grown", { _ = try await store.set(Key("/a"), to: Data(repeating: 0x62, count: 600), in: config) }),
                ("a transaction that grows on the whole", {
                    _ = try await store.transact(Transaction(success: [.delete(Key("/a")), .put(Key("/c"), value), .put(Key("/d"), Data(repeating: 0x63, count: 200))]), in: config)
                }),
                ("an import", {
                    _ = try await store.importSnapshot(ConfigSnapshot(items: [ConfigSnapshot.Entry(key: try Key("/c"), value: value)]), into: config, replace: false)
                }),
            ]
            for (name, change) in refusals {
                try await expectError(.quotaExceeded, "\(name)", field: "quotaBytes", mentioning: ["1000", "\"limited\""]) { try await change() }
            }
            try await expectError(.quotaExceeded, "the size after the change is named", mentioning: ["1206"]) { _ = try await store.set(Key("/c"), to: value, in: config) }
            try await expectEqual(store.observableState(of: config), before, "a refused change changes nothing")

            // Exactly up to the quota passes: 804 + 2 + 194 = 1000.
            _ = try await store.set(Key("/c"), to: Data(repeating: 0x64, count: 194), in: config)
            try await expectEqual(Self.byteCount(store, config), 1000)
            // A transaction that moves bytes without growing passes at the quota.
            _ = try await store.transact(Transaction(success: [.delete(Key("/c")), .put(Key("/e"), Data(repeating: 0x65, count: 194))]), in: config)
            try await expectEqual(Self.byteCount(store, config), 1000)

            // Lowered below what the config holds: growth is refused, shrinking passes.
            _ = try await store.updateConfig(config, ConfigSettingsPatch(quotaBytes: 500))
            try await expectError(.quotaExceeded, "growth over a lowered quota") { _ = try await store.set(Key("/f"), to: Data("x".utf8), in: config) }
            _ = try await store.set(Key("/a"), to: Data(repeating: 0x66, count: 300), in: config)
            _ = try await store.set(Key("/a"), to: Data(repeating: 0x67, count: 300), in: config)
            _ = try await store.delete(Key("/b"), in: config, conditions: [])
            _ = try await store.deletePrefix(KeyPrefix("/e/"), in: config)
            _ = try await store.delete(Key("/e"), in: config, conditions: [])
            try await expectEqual(Self.byteCount(store, config), 302)
            _ = try await store.set(Key("/f"), to: Data(repeating: 0x68, count: 196), in: config)
            try await expectEqual(Self.byteCount(store, config), 500)

            // Removed: anything goes again, and the settings no longer carry it.
            let removed = try await store.updateConfig(config, ConfigSettingsPatch(quotaBytes: ConfigSettingsPatch.removeQuota))
            expectNil(removed.settings.quotaBytes)
            _ = try await store.set(Key("/g"), to: Data(repeating: 0x69, count: 4000), in: config)
            try await expectEqual(Self.byteCount(store, config), 4502)
        }
    }

    /// The quota is a setting like the others: given at creation, kept by patches of other
    /// settings, replaced, removed, and absent by default.
    public func quotaIsKeptReplacedAndRemoved() async throws {
        try await conformance.withStore { store, _ in
            let plain = try await store.makeConfig("plain")
            try await expectNil(store.configInfo(plain).settings.quotaBytes)
            let name = try await store.makeConfig("app", settings: ConfigSettings(description: "d", quotaBytes: 512 * 1024 * 1024))
            try await expectEqual(store.configInfo(name).settings, ConfigSettings(description: "d", quotaBytes: 512 * 1024 * 1024))
            try await expectEqual(store.updateConfig(name, ConfigSettingsPatch(description: "e")).settings.quotaBytes, 512 * 1024 * 1024)
            try await expectEqual(store.updateConfig(name, ConfigSettingsPatch(quotaBytes: 2048)).settings.quotaBytes, 2048)
            try await expectEqual(store.listConfigs().first { $0.name == name }?.settings.quotaBytes, 2048)
            let removed = try await store.updateConfig(name, ConfigSettingsPatch(quotaBytes: ConfigSettingsPatch.removeQuota))
            expectEqual(removed.settings, ConfigSettings(description: "e"))
            try await expectNil(store.configInfo(name).settings.quotaBytes)
        }
    }
}

extension StoreConformance {
    /// The checks of config quotas.
    public var quota: QuotaChecks { QuotaChecks(conformance: self) }
}
