import DiscfgCore
import Foundation

public struct ItemChecks: Sendable {
    let conformance: StoreConformance

    public func firstSetCreatesVersionOneAtRevisionOne() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            let key = try Key("/db/host")
            let event = try await store.set(key, to: Data(text: "db1"), in: config)

            expectEqual(event.kind, .put)
            expectEqual(event.revision, 1)
            expectEqual(event.key, key)
            expectEqual(event.at, clock.now())
            expectNil(event.prevItem)
            let item = try require(event.item)
            expectEqual(item, Item(key: key, value: Data(text: "db1"), version: 1, createRevision: 1, modRevision: 1, modifiedAt: clock.now()))
            try await expectEqual(store.revision(of: config), 1)
            try await expectEqual(store.configInfo(config).modifiedAt, clock.now())
        }
    }

    public func secondSetBumpsVersionAndKeepsCreateRevision() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            let first = try await require(store.set("/k", "one", in: config).item)
            clock.advance(seconds: 1.5)
            let second = try await store.set("/k", "two", in: config)

            expectEqual(second.revision, 2)
            expectEqual(second.prevItem, first)
            let item = try require(second.item)
            expectEqual(item.version, 2)
            expectEqual(item.createRevision, 1)
            expectEqual(item.modRevision, 2)
            expectEqual(item.modifiedAt, clock.now())
            expectEqual(item.value, Data(text: "two"))
            try await expectEqual(store.revision(of: config), 2)
        }
    }

    public func deleteRecordsTheItemBeforeAndReCreateStartsOver() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let key = try Key("/k")
            try await store.set("/k", "one", in: config)
            let before = try await require(store.set("/k", "two", in: config).item)

            let deleted = try await store.delete(key, in: config, conditions: [])
            expectEqual(deleted.kind, .delete)
            expectEqual(deleted.revision, 3)
            expectNil(deleted.item)
            expectEqual(deleted.prevItem, before)
            try await expectNil(store.get(key, in: config))
            try await expectEqual(store.revision(of: config), 3)

            let recreated = try await store.set("/k", "three", in: config)
            expectNil(recreated.prevItem)
            let item = try require(recreated.item)
            expectEqual(item.version, 1)
            expectEqual(item.createRevision, 4)
            expectEqual(item.modRevision, 4)
        }
    }

    public func deletingAMissingKeyThrowsKeyNotFoundAndChangesNothing() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/other", "x", in: config)
            let before = try await store.observableState(of: config)
            try await expectError(.keyNotFound) { try await store.delete(Key("/missing"), in: config, conditions: []) }
            try await expectEqual(store.observableState(of: config), before)
        }
    }

    public func setReturnsExactlyWhatGetReadsBack() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            clock.advance(seconds: 0.123)
            let options = SetOptions(ttlSeconds: 3600, contentType: "application/json; charset=utf-8")
            let written = try await require(store.set(Key("/a/b"), to: Data(text: #"{"json":"works"}"#), in: config, options: options).item)
            let read = try await require(store.get(Key("/a/b"), in: config))
            expectEqual(read, written)
            expectEqual(read.contentType, "application/json; charset=utf-8")
            expectEqual(read.expiresAt, Date(milliseconds: clock.now().milliseconds + 3_600_000))
            expectEqual(read.modifiedAt.milliseconds, clock.now().milliseconds)
        }
    }

    public func contentTypeIsKeptAndReplacedBySet() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/k", "a: 1", in: config, options: SetOptions(contentType: "application/yaml"))
            try await expectEqual(store.get(Key("/k"), in: config)?.contentType, "application/yaml")
            try await store.set("/k", "plain", in: config)
            try await expectNil(store.get(Key("/k"), in: config)?.contentType)
        }
    }

    public func binaryValuesRoundTripByteForByte() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let value = Data([0x00, 0xFF, 0xFE, 0xC3, 0x28, 0x00, 0x80, 0x0A, 0x0D, 0x00] + (0...255).map(UInt8.init))
            expectNil(String(validating: value, as: UTF8.self), "the value must not be UTF-8")
            let written = try await require(store.set(Key("/bin"), to: value, in: config).item)
            let read = try await require(store.get(Key("/bin"), in: config))
            expectEqual(read.value, value)
            expectEqual(read, written)
            let listed = try await store.list(in: config, ListQuery()).items
            expectEqual(listed.map(\.value), [value])
            try await expectEqual(store.export(config).items.map(\.value), [value])
        }
    }

    public func emptyValueIsAllowedAndDistinctFromAbsent() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let event = try await store.set(Key("/empty"), to: Data(), in: config)
            expectEqual(event.item?.value, Data())
            let read = try await require(store.get(Key("/empty"), in: config))
            expectEmpty(read.value)
            expectEqual(read.version, 1)
            let deleted = try await store.delete(Key("/empty"), in: config, conditions: [])
            expectEqual(deleted.prevItem?.value, Data())
        }
    }

    public func keysAreNormalizedBeforeTheyReachTheStore() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("caf\u{E9}/name", "composed", in: config)
            let read = try await store.get(Key("/cafe\u{301}/name"), in: config)
            expectEqual(read?.value, Data(text: "composed"))
            expectEqual(read?.key.path, "/caf\u{E9}/name")
        }
    }

    public func configsAreIndependent() async throws {
        try await conformance.withStore { store, _ in
            let one = try await store.makeConfig("one")
            let two = try await store.makeConfig("two")
            try await store.set("/k", "1", in: one)
            try await store.set("/k", "1", in: one)
            let other = try await store.set("/k", "2", in: two)
            expectEqual(other.revision, 1, "each config has its own revision counter")
            expectEqual(other.item?.version, 1)
            try await expectEqual(store.revision(of: one), 2)
            try await expectEqual(store.get(Key("/k"), in: one)?.value, Data(text: "1"))
        }
    }
}

extension StoreConformance {
    /// The checks of items: set, get, delete, versions and revisions.
    public var item: ItemChecks { ItemChecks(conformance: self) }
}
