import DiscfgCore
import Foundation

public struct ConfigLifecycleChecks: Sendable {
    let conformance: StoreConformance

    public func createStartsAtRevisionZeroAndKeepsSettings() async throws {
        try await conformance.withStore { store, clock in
            let name = try ConfigName("myapp-prod")
            let settings = ConfigSettings(history: .last(50), description: "production settings")
            let created = try await store.createConfig(name, settings: settings)
            expectEqual(created.name, name)
            expectEqual(created.revision, .zero)
            expectEqual(created.compactedRevision, .zero)
            expectEqual(created.settings, settings)
            expectEqual(created.createdAt, clock.now())
            expectEqual(created.modifiedAt, clock.now())
            try await expectEqual(store.configInfo(name), created)
        }
    }

    public func createTwiceFailsWithConfigExists() async throws {
        try await conformance.withStore { store, _ in
            let name = try await store.makeConfig("app", settings: ConfigSettings(description: "first"))
            let before = try await store.configInfo(name)
            try await expectError(.configExists) { try await store.createConfig(name, settings: ConfigSettings(description: "second")) }
            try await expectEqual(store.configInfo(name), before)
        }
    }

    public func listConfigsIsSortedByName() async throws {
        try await conformance.withStore { store, _ in
            try await expectEmpty(store.listConfigs())
            for name in ["beta", "Alpha", "alpha", "_x", "1st", "alpha.v2"] {
                _ = try await store.makeConfig(name)
            }
            let names = try await store.listConfigs().map(\.name.rawValue)
            expectEqual(names, ["1st", "Alpha", "_x", "alpha", "alpha.v2", "beta"])
        }
    }

    public func updatePatchesOnlyTheGivenSettings() async throws {
        try await conformance.withStore { store, clock in
            let name = try await store.makeConfig("app", settings: ConfigSettings(history: .days(7), description: "keep me"))
            try await store.set("/k", "v", in: name)
            clock.advance(seconds: 60)

            let retention = try await store.updateConfig(name, ConfigSettingsPatch(history: .last(10)))
            expectEqual(retention.settings, ConfigSettings(history: .last(10), description: "keep me"))
            expectEqual(retention.modifiedAt, clock.now())
            expectEqual(retention.revision, 1, "changing settings is not a change of keys")

            let described = try await store.updateConfig(name, ConfigSettingsPatch(description: "new words"))
            expectEqual(described.settings, ConfigSettings(history: .last(10), description: "new words"))

            let cleared = try await store.updateConfig(name, ConfigSettingsPatch(description: ""))
            expectEqual(cleared.settings, ConfigSettings(history: .last(10), description: nil))
            try await expectEqual(store.configInfo(name), cleared)
        }
    }

    public func notificationTargetsAreKeptReplacedAndCleared() async throws {
        try await conformance.withStore { store, _ in
            let name = try await store.makeConfig("app", settings: ConfigSettings(description: "d"))
            let targets: [NotificationTarget] = [
                .eventBridge(bus: "arn:aws:events:us-east-1:123456789012:event-bus/config"),
                .webhook(url: "https://hooks.example.com/discfg?team=a", secret: "s3cret"),
                .webhook(url: "http://127.0.0.1:9/plain", secret: nil),
            ]
            let set = try await store.updateConfig(name, ConfigSettingsPatch(notify: targets))
            expectEqual(set.settings, ConfigSettings(description: "d", notify: targets))
            try await expectEqual(store.configInfo(name).settings.notify, targets, "the secret is kept for the stream handler")

            let other = try await store.updateConfig(name, ConfigSettingsPatch(history: .forever))
            expectEqual(other.settings.notify, targets, "other settings leave the targets alone")

            let cleared = try await store.updateConfig(name, ConfigSettingsPatch(notify: []))
            expectEmpty(cleared.settings.notify)
            try await expectEqual(store.listConfigs().first { $0.name == name }?.settings, ConfigSettings(history: .forever, description: "d"))
        }
    }

    public func encryptionSettingsAreKeptAndReplacedWhole() async throws {
        try await conformance.withStore { store, _ in
            let wrapped = Data((0..<60).map { UInt8($0) })
            let first = EncryptionSettings(key: "file:///keys/app.key", current: "1", dataKeys: [WrappedDataKey(id: "1", wrapped: wrapped, created: Date(milliseconds: 1_767_225_600_000))])
            let name = try await store.makeConfig("app", settings: ConfigSettings(encryption: first))
            try await expectEqual(store.configInfo(name).settings.encryption, first)

            var rotated = first
            rotated.dataKeys.append(WrappedDataKey(id: "2", wrapped: Data(wrapped.reversed())))
            rotated.current = "2"
            rotated.key = "kms://us-east-1/alias/app"
            try await expectEqual(store.updateConfig(name, ConfigSettingsPatch(encryption: rotated)).settings.encryption, rotated)
            let other = try await store.updateConfig(name, ConfigSettingsPatch(description: "d"))
            expectEqual(other.settings.encryption, rotated, "other settings leave encryption alone")
            try await expectEqual(store.listConfigs().first { $0.name == name }?.settings.encryption, rotated)
        }
    }

    public func deleteRemovesTheConfigAndEverythingInIt() async throws {
        try await conformance.withStore { store, _ in
            let doomed = try await store.makeConfig("doomed")
            let kept = try await store.makeConfig("kept")
            try await store.set("/k", "gone", in: doomed)
            try await store.set("/k", "stays", in: kept)

            try await store.deleteConfig(doomed)

            try await expectError(.configNotFound) { try await store.configInfo(doomed) }
            try await expectError(.configNotFound) { try await store.get(Key("/k"), in: doomed) }
            try await expectError(.configNotFound) { try await store.deleteConfig(doomed) }
            try await expectEqual(store.listConfigs().map(\.name), [kept])
            try await expectEqual(store.get(Key("/k"), in: kept)?.value, Data(text: "stays"))

            // The name is free again, and the new config starts from nothing.
            let reborn = try await store.createConfig(doomed, settings: ConfigSettings())
            expectEqual(reborn.revision, .zero)
            try await expectNil(store.get(Key("/k"), in: doomed))
            try await expectEmpty(store.fullHistory(of: Key("/k"), in: doomed))
        }
    }

    /// A config counts its keys through every kind of change, in its info and in the
    /// list of configs alike.
    public func keyCountFollowsEveryKindOfChange() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig("counted")
            let other = try await store.makeConfig("other")
            func count() async throws -> Int? {
                let listed = try await store.listConfigs().first { $0.name == config }?.keyCount
                let info = try await store.configInfo(config).keyCount
                expectEqual(listed, info, "the list of configs and the config's info disagree")
                return info
            }
            try await expectEqual(count(), 0)
            for key in ["/a", "/b", "/dir/c", "/dir/d"] { try await store.set(key, "v", in: config) }
            try await store.set("/elsewhere", "v", in: other)
            try await expectEqual(count(), 4)
            try await store.set("/a", "changed", in: config)
            try await expectEqual(count(), 4, "a key changed is not a key more")
            _ = try await store.delete(Key("/b"), in: config, conditions: [])
            try await expectEqual(count(), 3)
            try await expectError(.conditionFailed) { try await store.delete(Key("/a"), in: config, conditions: [.version(9)]) }
            try await expectEqual(count(), 3, "a refused change counts nothing")
            _ = try await store.deletePrefix(KeyPrefix("/dir"), in: config)
            try await expectEqual(count(), 1)
            _ = try await store.transact(Transaction(success: [.put(Key("/t1"), Data("x".utf8)), .put(Key("/t2"), Data("y".utf8)), .delete(Key("/a"))]), in: config)
            try await expectEqual(count(), 2)
            try await store.set("/short", "v", in: config, options: SetOptions(ttlSeconds: 5))
            try await expectEqual(count(), 3)
            clock.advance(seconds: 6)
            _ = try await store.sweepExpired()
            try await expectEqual(count(), 2, "an expired key is counted out when swept")
            let snapshot = ConfigSnapshot(items: [ConfigSnapshot.Entry(key: try Key("/t1"), value: Data("x".utf8)), ConfigSnapshot.Entry(key: try Key("/n"), value: Data("n".utf8))])
            _ = try await store.importSnapshot(snapshot, into: config, replace: true)
            try await expectEqual(count(), 2, "an import that replaces counts what it leaves")
            try await expectEqual(store.configInfo(other).keyCount, 1, "other configs are untouched")
        }
    }

    public func missingKeyInExistingConfigReadsAsNil() async throws {
        try await conformance.withStore { store, _ in
            let name = try await store.makeConfig()
            try await expectNil(store.get(Key("/nothing/here"), in: name))
            try await expectNil(store.get(Key("/nothing/here"), in: name, atRevision: .zero))
        }
    }

    public func everyOperationOnAnUnknownConfigThrowsConfigNotFound() async throws {
        try await conformance.withStore { store, _ in
            _ = try await store.makeConfig("exists")
            let name = try ConfigName("missing")
            let key = try Key("/k")
            let snapshot = ConfigSnapshot(items: [.init(key: key, value: Data(text: "v"))])
            try await expectError(.configNotFound, "configInfo") { try await store.configInfo(name) }
            try await expectError(.configNotFound, "deleteConfig") { try await store.deleteConfig(name) }
            try await expectError(.configNotFound, "updateConfig") { try await store.updateConfig(name, ConfigSettingsPatch(description: "x")) }
            try await expectError(.configNotFound, "get") { try await store.get(key, in: name) }
            try await expectError(.configNotFound, "get at revision") { try await store.get(key, in: name, atRevision: .zero) }
            try await expectError(.configNotFound, "list") { try await store.list(in: name, ListQuery()) }
            try await expectError(.configNotFound, "set") { try await store.set(key, to: Data(), in: name) }
            try await expectError(.configNotFound, "delete") { try await store.delete(key, in: name, conditions: []) }
            try await expectError(.configNotFound, "deletePrefix") { try await store.deletePrefix(.root, in: name) }
            try await expectError(.configNotFound, "history") { try await store.history(of: key, in: name, HistoryQuery()) }
            try await expectError(.configNotFound, "events") { try await store.events(in: name, scope: .prefix(.root), from: 1, limit: 10) }
            try await expectError(.configNotFound, "export") { try await store.export(name) }
            try await expectError(.configNotFound, "import") { try await store.importSnapshot(snapshot, into: name, replace: false) }

            let watch = WatchRecorder(await store.watch(name, scope: .prefix(.root), from: nil))
            try await expectEqual(watch.waitForEnding().code, .configNotFound)
            try await expectEqual(store.listConfigs().map(\.name.rawValue), ["exists"])
        }
    }
}

extension StoreConformance {
    /// The checks of config lifecycle.
    public var configLifecycle: ConfigLifecycleChecks { ConfigLifecycleChecks(conformance: self) }
}
