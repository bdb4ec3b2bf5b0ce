import DiscfgCore
import Foundation
import Testing

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
            #expect(snapshot.config == config)
            #expect(snapshot.revision == 7)
            #expect(snapshot.exportedAt == clock.now())
            let live = try await store.list(in: config, ListQuery()).items
            #expect(snapshot.items == live.map(ConfigSnapshot.Entry.init))
            #expect(snapshot.items.map(\.key.path) == ["/bin", "/db/host", "/db/port", "/lease"])
            #expect(snapshot.items.first?.contentType == "application/octet-stream")
            #expect(snapshot.items.last?.expiresAt != nil)
        }
    }

    public func importIntoAnotherConfigReproducesTheLiveItems() async throws {
        try await conformance.withStore { store, clock in
            let source = try await Self.prepare(store, clock: clock)
            let target = try await store.makeConfig("target")
            let snapshot = try await store.export(source)

            let result = try await store.importSnapshot(snapshot, into: target, replace: false)
            #expect(result.events.map(\.revision) == [1, 2, 3, 4])
            #expect(result.events.allSatisfy { $0.kind == .put && $0.item?.version == 1 })
            #expect(result.unchanged == 0)
            #expect(result.revision == 4)
            #expect(try await store.export(target).items == snapshot.items)
            #expect(try await store.revision(of: target) == 4)
        }
    }

    public func reimportingTheSameSnapshotChangesNothing() async throws {
        try await conformance.withStore { store, clock in
            let source = try await Self.prepare(store, clock: clock)
            let target = try await store.makeConfig("target")
            let snapshot = try await store.export(source)
            _ = try await store.importSnapshot(snapshot, into: target, replace: false)
            // A write sweeps due keys first, so let the one pending expiry happen now.
            #expect(try await store.sweepExpired().map(\.key.path) == ["/gone-soon"])

            for config in [source, target] {
                let before = try await store.observableState(of: config)
                let again = try await store.importSnapshot(snapshot, into: config, replace: true)
                #expect(again.events.isEmpty)
                #expect(again.unchanged == snapshot.items.count)
                #expect(again.revision == before.info.revision)
                #expect(try await store.observableState(of: config) == before)
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
            #expect(result.unchanged == 1)
            #expect(result.events.map(\.key.path) == ["/added", "/type", "/value"])
            #expect(result.events.map(\.revision) == [5, 6, 7])
            #expect(result.events.map { $0.item?.version } == [1, 2, 2])
            #expect(try await store.get(Key("/extra"), in: config) != nil, "without replace, other keys stay")
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
            #expect(result.events.map(\.kind) == [.delete, .delete, .put])
            #expect(result.events.map(\.key.path) == ["/drop/a", "/drop/b", "/new"])
            #expect(result.events.map(\.revision) == [4, 5, 6])
            #expect(result.unchanged == 1)
            #expect(try await store.list(in: config, ListQuery()).items.map(\.key.path) == ["/keep", "/new"])
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
            await expectError(.invalidArgument) { try await store.importSnapshot(snapshot, into: config, replace: true) }
            #expect(try await store.observableState(of: config) == before)
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
            await expectError(.tooLarge) { try await store.importSnapshot(snapshot, into: config, replace: true) }
            let badType = try ConfigSnapshot(items: [.init(key: Key("/a"), value: Data(text: "fine"), contentType: "not a type")])
            await expectError(.invalidArgument) { try await store.importSnapshot(badType, into: config, replace: false) }
            #expect(try await store.observableState(of: config) == before)
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
            #expect(result.events.map(\.key.path) == ["/live"])
            #expect(try await store.get(Key("/live"), in: config)?.expiresAt == future)
            #expect(try await store.get(Key("/old"), in: config) == nil)
        }
    }
}

extension StoreConformance {
    /// The checks of export and import.
    public var importExport: ImportExportChecks { ImportExportChecks(conformance: self) }
}
