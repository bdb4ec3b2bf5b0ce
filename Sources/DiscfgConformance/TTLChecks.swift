import DiscfgCore
import Foundation
import Testing

public struct TTLChecks: Sendable {
    let conformance: StoreConformance

    public func ttlSetsExpiresAtAndTheKeyIsReadableUntilThen() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            let start = clock.now()
            let event = try await store.set("/session", "token", in: config, options: SetOptions(ttlSeconds: 30))
            let expected = Date(milliseconds: start.milliseconds + 30_000)
            #expect(event.item?.expiresAt == expected)

            clock.advance(seconds: 29.999)
            #expect(try await store.get(Key("/session"), in: config)?.expiresAt == expected)
            #expect(try await store.list(in: config, ListQuery()).items.map(\.key.path) == ["/session"])
            #expect(try await store.export(config).items.map(\.key.path) == ["/session"])
            #expect(try await store.sweepExpired().isEmpty)
        }
    }

    public func expiredKeyIsHiddenFromEveryReadBeforeAnySweep() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            try await store.set("/a/short", "x", in: config, options: SetOptions(ttlSeconds: 10))
            try await store.set("/a/long", "y", in: config)
            clock.advance(seconds: 10)

            #expect(try await store.get(Key("/a/short"), in: config) == nil)
            #expect(try await store.get(Key("/a/short"), in: config, atRevision: 2) == nil, "nothing is returned at the current revision")
            #expect(try await store.list(in: config, ListQuery()).items.map(\.key.path) == ["/a/long"])
            #expect(try await store.list(in: config, ListQuery(recursive: false)).prefixes.map(\.path) == ["/a/"])
            #expect(try await store.export(config).items.map(\.key.path) == ["/a/long"])
            #expect(try await store.revision(of: config) == 2, "hiding needs no write")
            // History still tells what was there.
            #expect(try await store.get(Key("/a/short"), in: config, atRevision: 1)?.value == Data(text: "x"))
        }
    }

    public func sweepEmitsExactlyOneExpireEvent() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            let item = try #require(try await store.set("/t", "x", in: config, options: SetOptions(ttlSeconds: 5)).item)
            try await store.set("/keep", "y", in: config)
            clock.advance(seconds: 6)

            let swept = try await store.sweepExpired()
            #expect(swept.count == 1)
            let expire = try #require(swept.first)
            #expect(expire.kind == .expire)
            #expect(expire.key == item.key)
            #expect(expire.revision == 3)
            #expect(expire.item == nil)
            #expect(expire.prevItem == item)
            #expect(expire.at == clock.now())
            #expect(try await store.revision(of: config) == 3)
            #expect(try await store.fullHistory(of: item.key, in: config).first == expire)

            #expect(try await store.sweepExpired().isEmpty, "a key expires once")
            #expect(try await store.revision(of: config) == 3)
            #expect(try await store.get(Key("/keep"), in: config) != nil)
        }
    }

    public func sweepCoversEveryConfigInKeyOrder() async throws {
        try await conformance.withStore { store, clock in
            let one = try await store.makeConfig("one")
            let two = try await store.makeConfig("two")
            try await store.set("/b", "x", in: one, options: SetOptions(ttlSeconds: 1))
            try await store.set("/a", "x", in: one, options: SetOptions(ttlSeconds: 1))
            try await store.set("/c", "x", in: two, options: SetOptions(ttlSeconds: 1))
            clock.advance(seconds: 1)
            let swept = try await store.sweepExpired()
            #expect(Set(swept.map { "\($0.key)@\($0.revision)" }) == ["/a@3", "/b@4", "/c@2"])
        }
    }

    public func setOnAnExpiredKeyFirstRecordsTheExpiry() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            let old = try #require(try await store.set("/t", "old", in: config, options: SetOptions(ttlSeconds: 5)).item)
            clock.advance(seconds: 5)

            let event = try await store.set("/t", "new", in: config)
            #expect(event.revision == 3)
            #expect(event.prevItem == nil, "the old value had expired")
            let item = try #require(event.item)
            #expect(item.version == 1)
            #expect(item.createRevision == 3)
            #expect(item.expiresAt == nil)

            let history = try await store.fullHistory(of: old.key, in: config)
            #expect(history.map(\.kind) == [.put, .expire, .put])
            #expect(history.map(\.revision) == [3, 2, 1])
            #expect(history[1].prevItem == old)
            #expect(try await store.sweepExpired().isEmpty)
        }
    }

    public func anyWriteExpiresDueKeysFirst() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            try await store.set("/t", "x", in: config, options: SetOptions(ttlSeconds: 5))
            clock.advance(seconds: 5)
            let event = try await store.set("/other", "y", in: config)
            #expect(event.revision == 3)
            let expired = try await store.events(in: config, scope: .prefix(.root), from: 2, limit: 10).events
            #expect(expired.map(\.kind) == [.expire, .put])
            #expect(try await store.sweepExpired().isEmpty)
        }
    }

    public func setWithoutTTLClearsAnEarlierTTL() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            try await store.set("/t", "a", in: config, options: SetOptions(ttlSeconds: 5))
            let event = try await store.set("/t", "b", in: config)
            #expect(event.item?.expiresAt == nil)
            #expect(event.item?.version == 2)
            clock.advance(seconds: 3600)
            #expect(try await store.get(Key("/t"), in: config)?.value == Data(text: "b"))
            #expect(try await store.sweepExpired().isEmpty)
        }
    }

    public func newTTLReplacesTheOldOne() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            try await store.set("/t", "a", in: config, options: SetOptions(ttlSeconds: 5))
            clock.advance(seconds: 4)
            let renewed = try await store.set("/t", "a", in: config, options: SetOptions(ttlSeconds: 5))
            #expect(renewed.item?.expiresAt == Date(milliseconds: clock.now().milliseconds + 5000))
            clock.advance(seconds: 4)
            #expect(try await store.get(Key("/t"), in: config) != nil)
            clock.advance(seconds: 1)
            #expect(try await store.get(Key("/t"), in: config) == nil)
        }
    }

    /// The arguments ``invalidTTLIsRejectedAndChangesNothing(ttl:)`` is checked with.
    public static let invalidTTLIsRejectedAndChangesNothingArguments: [Int64] = [Int64(0), -1, Int64.min, Limits.maxTTLSeconds + 1, Int64.max]

    public func invalidTTLIsRejectedAndChangesNothing(ttl: Int64) async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/t", "a", in: config)
            let before = try await store.observableState(of: config)
            let error = await expectError(.invalidArgument) {
                try await store.set("/t", "b", in: config, options: SetOptions(ttlSeconds: ttl))
            }
            #expect(error?.field == "ttl")
            #expect(try await store.observableState(of: config) == before)
        }
    }

    public func longestTTLIsAccepted() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            let event = try await store.set("/t", "a", in: config, options: SetOptions(ttlSeconds: Limits.maxTTLSeconds))
            #expect(event.item?.expiresAt == Date(milliseconds: clock.now().milliseconds + Limits.maxTTLSeconds * 1000))
        }
    }
}

extension StoreConformance {
    /// The checks of TTLs and expiry.
    public var ttl: TTLChecks { TTLChecks(conformance: self) }
}
