import DiscfgCore
import Foundation
import Testing

public struct ItemChecks: Sendable {
    let conformance: StoreConformance

    public func firstSetCreatesVersionOneAtRevisionOne() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            let key = try Key("/db/host")
            let event = try await store.set(key, to: Data(text: "db1"), in: config)

            #expect(event.kind == .put)
            #expect(event.revision == 1)
            #expect(event.key == key)
            #expect(event.at == clock.now())
            #expect(event.prevItem == nil)
            let item = try #require(event.item)
            #expect(item == Item(key: key, value: Data(text: "db1"), version: 1, createRevision: 1, modRevision: 1, modifiedAt: clock.now()))
            #expect(try await store.revision(of: config) == 1)
            #expect(try await store.configInfo(config).modifiedAt == clock.now())
        }
    }

    public func secondSetBumpsVersionAndKeepsCreateRevision() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            let first = try #require(try await store.set("/k", "one", in: config).item)
            clock.advance(seconds: 1.5)
            let second = try await store.set("/k", "two", in: config)

            #expect(second.revision == 2)
            #expect(second.prevItem == first)
            let item = try #require(second.item)
            #expect(item.version == 2)
            #expect(item.createRevision == 1)
            #expect(item.modRevision == 2)
            #expect(item.modifiedAt == clock.now())
            #expect(item.value == Data(text: "two"))
            #expect(try await store.revision(of: config) == 2)
        }
    }

    public func deleteRecordsTheItemBeforeAndReCreateStartsOver() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let key = try Key("/k")
            try await store.set("/k", "one", in: config)
            let before = try #require(try await store.set("/k", "two", in: config).item)

            let deleted = try await store.delete(key, in: config, conditions: [])
            #expect(deleted.kind == .delete)
            #expect(deleted.revision == 3)
            #expect(deleted.item == nil)
            #expect(deleted.prevItem == before)
            #expect(try await store.get(key, in: config) == nil)
            #expect(try await store.revision(of: config) == 3)

            let recreated = try await store.set("/k", "three", in: config)
            #expect(recreated.prevItem == nil)
            let item = try #require(recreated.item)
            #expect(item.version == 1)
            #expect(item.createRevision == 4)
            #expect(item.modRevision == 4)
        }
    }

    public func deletingAMissingKeyThrowsKeyNotFoundAndChangesNothing() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/other", "x", in: config)
            let before = try await store.observableState(of: config)
            await expectError(.keyNotFound) { try await store.delete(Key("/missing"), in: config, conditions: []) }
            #expect(try await store.observableState(of: config) == before)
        }
    }

    public func setReturnsExactlyWhatGetReadsBack() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            clock.advance(seconds: 0.123)
            let options = SetOptions(ttlSeconds: 3600, contentType: "application/json; charset=utf-8")
            let written = try #require(try await store.set(Key("/a/b"), to: Data(text: #"{"json":"works"}"#), in: config, options: options).item)
            let read = try #require(try await store.get(Key("/a/b"), in: config))
            #expect(read == written)
            #expect(read.contentType == "application/json; charset=utf-8")
            #expect(read.expiresAt == Date(milliseconds: clock.now().milliseconds + 3_600_000))
            #expect(read.modifiedAt.milliseconds == clock.now().milliseconds)
        }
    }

    public func contentTypeIsKeptAndReplacedBySet() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/k", "a: 1", in: config, options: SetOptions(contentType: "application/yaml"))
            #expect(try await store.get(Key("/k"), in: config)?.contentType == "application/yaml")
            try await store.set("/k", "plain", in: config)
            #expect(try await store.get(Key("/k"), in: config)?.contentType == nil)
        }
    }

    public func binaryValuesRoundTripByteForByte() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let value = Data([0x00, 0xFF, 0xFE, 0xC3, 0x28, 0x00, 0x80, 0x0A, 0x0D, 0x00] + (0...255).map(UInt8.init))
            #expect(String(validating: value, as: UTF8.self) == nil, "the value must not be UTF-8")
            let written = try #require(try await store.set(Key("/bin"), to: value, in: config).item)
            let read = try #require(try await store.get(Key("/bin"), in: config))
            #expect(read.value == value)
            #expect(read == written)
            let listed = try await store.list(in: config, ListQuery()).items
            #expect(listed.map(\.value) == [value])
            #expect(try await store.export(config).items.map(\.value) == [value])
        }
    }

    public func emptyValueIsAllowedAndDistinctFromAbsent() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let event = try await store.set(Key("/empty"), to: Data(), in: config)
            #expect(event.item?.value == Data())
            let read = try #require(try await store.get(Key("/empty"), in: config))
            #expect(read.value.isEmpty)
            #expect(read.version == 1)
            let deleted = try await store.delete(Key("/empty"), in: config, conditions: [])
            #expect(deleted.prevItem?.value == Data())
        }
    }

    public func keysAreNormalizedBeforeTheyReachTheStore() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("caf\u{E9}/name", "composed", in: config)
            let read = try await store.get(Key("/cafe\u{301}/name"), in: config)
            #expect(read?.value == Data(text: "composed"))
            #expect(read?.key.path == "/caf\u{E9}/name")
        }
    }

    public func configsAreIndependent() async throws {
        try await conformance.withStore { store, _ in
            let one = try await store.makeConfig("one")
            let two = try await store.makeConfig("two")
            try await store.set("/k", "1", in: one)
            try await store.set("/k", "1", in: one)
            let other = try await store.set("/k", "2", in: two)
            #expect(other.revision == 1, "each config has its own revision counter")
            #expect(other.item?.version == 1)
            #expect(try await store.revision(of: one) == 2)
            #expect(try await store.get(Key("/k"), in: one)?.value == Data(text: "1"))
        }
    }
}

extension StoreConformance {
    /// The checks of items: set, get, delete, versions and revisions.
    public var item: ItemChecks { ItemChecks(conformance: self) }
}
