import DiscfgCore
import Foundation

public struct ImportExportChecks: Sendable {
    let conformance: StoreConformance

    /// A config with plain, typed, binary, TTL'd, expired and deleted keys.
    static func prepare(_ store: any ConfigStore, clock: ManualClock) async throws -> ConfigName {
        let config = try await store.makeConfig("source")
        try await store.set("/db/host", "db1", in: config)
        try await store.set("/db/port", "5432", in: config, options: SetOptions(contentType: "text/plain"))
        _ = try await store.set(Key("/bin"), to: Data([0xFF, 0x00, 0xFE]), in: config, options: SetOptions(contentType: "application/octet-stream"))
        try await store.set("/lease", "l", in: config, options: SetOptions(ttlSeconds: 600))
        try await store.set("/gone-soon", "g", in: config, options: SetOptions(ttlSeconds: 1))
        try await store.set("/deleted", "d", in: config)
        _ = try await store.delete(Key("/deleted"), in: config, conditions: [])
        clock.advance(seconds: 1)
        return config
    }

    public func exportHoldsEveryLiveItemInKeyOrder() async throws {
        try await conformance.withStore { store, clock in
            let config = try await Self.prepare(store, clock: clock)
            let snapshot = try await store.export(config)
            expectEqual(snapshot.config, config)
            expectEqual(snapshot.revision, 7)
            expectEqual(snapshot.exportedAt, clock.now())
            let live = try await store.list(in: config, ListQuery()).items
            expectEqual(snapshot.items, live.map(ConfigSnapshot.Entry.init))
            expectEqual(snapshot.items.map(\.key.path), ["/bin", "/db/host", "/db/port", "/lease"])
            expectEqual(snapshot.items.first?.contentType, "application/octet-stream")
            expectNotNil(snapshot.items.last?.expiresAt)
        }
    }

    public func importIntoAnotherConfigReproducesTheLiveItems() async throws {
        try await conformance.withStore { store, clock in
            let source = try await Self.prepare(store, clock: clock)
            let target = try await store.makeConfig("target")
            let snapshot = try await store.export(source)

            let result = try await store.importSnapshot(snapshot, into: target, replace: false)
            expectEqual(result.events.map(\.revision), [1, 1, 1, 1], "one change: one revision")
            expect(result.events.allSatisfy { $0.kind == .put && $0.item?.version == 1 }, "not all first puts: \(result.events.map { ($0.kind, $0.item?.version) })")
            expectEqual(result.unchanged, 0)
            expectEqual(result.revision, 1)
            try await expectEqual(store.export(target).items, snapshot.items)
            try await expectEqual(store.revision(of: target), 1)
        }
    }

    public func reimportingTheSameSnapshotChangesNothing() async throws {
        try await conformance.withStore { store, clock in
            let source = try await Self.prepare(store, clock: clock)
            let target = try await store.makeConfig("target")
            let snapshot = try await store.export(source)
            _ = try await store.importSnapshot(snapshot, into: target, replace: false)
            // A write sweeps due keys first, so let the one pending expiry happen now.
            try await expectEqual(store.sweepExpired().map(\.key.path), ["/gone-soon"])

            for config in [source, target] {
                let before = try await store.observableState(of: config)
                let again = try await store.importSnapshot(snapshot, into: config, replace: true)
                expectEmpty(again.events)
                expectEqual(again.unchanged, snapshot.items.count)
                expectEqual(again.revision, before.info.revision)
                try await expectEqual(store.observableState(of: config), before)
            }
        }
    }

    public func importChangesOnlyWhatDiffers() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/same", "s", in: config) // 1
            try await store.set("/value", "old", in: config) // 2
            try await store.set("/type", "t", in: config) // 3
            try await store.set("/extra", "e", in: config) // 4
            let snapshot = try ConfigSnapshot(items: [
                .init(key: Key("/value"), value: Data(text: "new")),
                .init(key: Key("/same"), value: Data(text: "s")),
                .init(key: Key("/type"), value: Data(text: "t"), contentType: "text/plain"),
                .init(key: Key("/added"), value: Data(text: "a")),
            ])
            let result = try await store.importSnapshot(snapshot, into: config, replace: false)
            expectEqual(result.unchanged, 1)
            expectEqual(result.events.map(\.key.path), ["/added", "/type", "/value"])
            expectEqual(result.events.map(\.revision), [5, 5, 5])
            expectEqual(result.events.map { $0.item?.version }, [1, 2, 2])
            try await expectNotNil(store.get(Key("/extra"), in: config), "without replace, other keys stay")
        }
    }

    public func replaceDeletesKeysNotInTheSnapshot() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/keep", "k", in: config) // 1
            try await store.set("/drop/a", "a", in: config) // 2
            try await store.set("/drop/b", "b", in: config) // 3
            let snapshot = try ConfigSnapshot(items: [.init(key: Key("/keep"), value: Data(text: "k")), .init(key: Key("/new"), value: Data(text: "n"))])
            let result = try await store.importSnapshot(snapshot, into: config, replace: true)
            expectEqual(result.events.map(\.kind), [.delete, .delete, .put])
            expectEqual(result.events.map(\.key.path), ["/drop/a", "/drop/b", "/new"])
            expectEqual(result.events.map(\.revision), [4, 4, 4])
            expectEqual(result.unchanged, 1)
            try await expectEqual(store.list(in: config, ListQuery()).items.map(\.key.path), ["/keep", "/new"])
        }
    }

    public func importWithADuplicateKeyChangesNothing() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/k", "v", in: config)
            let before = try await store.observableState(of: config)
            let snapshot = try ConfigSnapshot(items: [
                .init(key: Key("/a"), value: Data(text: "1")),
                .init(key: Key("/k"), value: Data(text: "2")),
                .init(key: Key("k"), value: Data(text: "3")),
            ])
            try await expectError(.invalidArgument) { try await store.importSnapshot(snapshot, into: config, replace: true) }
            try await expectEqual(store.observableState(of: config), before)
        }
    }

    public func importWithAnOversizedValueChangesNothing() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/k", "v", in: config)
            let before = try await store.observableState(of: config)
            let snapshot = try ConfigSnapshot(items: [
                .init(key: Key("/a"), value: Data(text: "fine")),
                .init(key: Key("/big"), value: Data(count: Limits.maxValueBytes + 1)),
            ])
            try await expectError(.tooLarge) { try await store.importSnapshot(snapshot, into: config, replace: true) }
            let badType = try ConfigSnapshot(items: [.init(key: Key("/a"), value: Data(text: "fine"), contentType: "not a type")])
            try await expectError(.invalidArgument) { try await store.importSnapshot(badType, into: config, replace: false) }
            try await expectEqual(store.observableState(of: config), before)
        }
    }

    public func importSkipsEntriesThatHaveAlreadyExpired() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            let past = Date(milliseconds: clock.now().milliseconds - 1)
            let future = Date(milliseconds: clock.now().milliseconds + 60_000)
            let snapshot = try ConfigSnapshot(items: [
                .init(key: Key("/old"), value: Data(text: "o"), expiresAt: past),
                .init(key: Key("/live"), value: Data(text: "l"), expiresAt: future),
            ])
            let result = try await store.importSnapshot(snapshot, into: config, replace: false)
            expectEqual(result.events.map(\.key.path), ["/live"])
            try await expectEqual(store.get(Key("/live"), in: config)?.expiresAt, future)
            try await expectNil(store.get(Key("/old"), in: config))
        }
    }
}

extension StoreConformance {
    /// The checks of export and import.
    public var importExport: ImportExportChecks { ImportExportChecks(conformance: self) }
}
