import DiscfgCore
import Foundation

public struct TTLChecks: Sendable {
    let conformance: StoreConformance

    public func ttlSetsExpiresAtAndTheKeyIsReadableUntilThen() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            let start = clock.now()
            let event = try await store.set("/session", "token", in: config, options: SetOptions(ttlSeconds: 30))
            let expected = Date(milliseconds: start.milliseconds + 30_000)
            expectEqual(event.item?.expiresAt, expected)

            clock.advance(seconds: 29.999)
            try await expectEqual(store.get(Key("/session"), in: config)?.expiresAt, expected)
            try await expectEqual(store.list(in: config, ListQuery()).items.map(\.key.path), ["/session"])
            try await expectEqual(store.export(config).items.map(\.key.path), ["/session"])
            try await expectEmpty(store.sweepExpired())
        }
    }

    public func expiredKeyIsHiddenFromEveryReadBeforeAnySweep() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            try await store.set("/a/short", "x", in: config, options: SetOptions(ttlSeconds: 10))
            try await store.set("/a/long", "y", in: config)
            clock.advance(seconds: 10)

            try await expectNil(store.get(Key("/a/short"), in: config))
            try await expectNil(store.get(Key("/a/short"), in: config, atRevision: 2), "nothing is returned at the current revision")
            try await expectEqual(store.list(in: config, ListQuery()).items.map(\.key.path), ["/a/long"])
            try await expectEqual(store.list(in: config, ListQuery(recursive: false)).prefixes.map(\.path), ["/a/"])
            try await expectEqual(store.export(config).items.map(\.key.path), ["/a/long"])
            try await expectEqual(store.revision(of: config), 2, "hiding needs no write")
            // History still tells what was there.
            try await expectEqual(store.get(Key("/a/short"), in: config, atRevision: 1)?.value, Data(text: "x"))
        }
    }

    public func sweepEmitsExactlyOneExpireEvent() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            let item = try await require(store.set("/t", "x", in: config, options: SetOptions(ttlSeconds: 5)).item)
            try await store.set("/keep", "y", in: config)
            clock.advance(seconds: 6)

            let swept = try await store.sweepExpired()
            expectEqual(swept.count, 1)
            let expire = try require(swept.first)
            expectEqual(expire.kind, .expire)
            expectEqual(expire.key, item.key)
            expectEqual(expire.revision, 3)
            expectNil(expire.item)
            expectEqual(expire.prevItem, item)
            expectEqual(expire.at, clock.now())
            try await expectEqual(store.revision(of: config), 3)
            try await expectEqual(store.fullHistory(of: item.key, in: config).first, expire)

            try await expectEmpty(store.sweepExpired(), "a key expires once")
            try await expectEqual(store.revision(of: config), 3)
            try await expectNotNil(store.get(Key("/keep"), in: config))
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
            expectEqual(Set(swept.map { "\($0.key)@\($0.revision)" }), ["/a@3", "/b@4", "/c@2"])
        }
    }

    public func setOnAnExpiredKeyFirstRecordsTheExpiry() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            let old = try await require(store.set("/t", "old", in: config, options: SetOptions(ttlSeconds: 5)).item)
            clock.advance(seconds: 5)

            let event = try await store.set("/t", "new", in: config)
            expectEqual(event.revision, 3)
            expectNil(event.prevItem, "the old value had expired")
            let item = try require(event.item)
            expectEqual(item.version, 1)
            expectEqual(item.createRevision, 3)
            expectNil(item.expiresAt)

            let history = try await store.fullHistory(of: old.key, in: config)
            expectEqual(history.map(\.kind), [.put, .expire, .put])
            expectEqual(history.map(\.revision), [3, 2, 1])
            expectEqual(history[1].prevItem, old)
            try await expectEmpty(store.sweepExpired())
        }
    }

    public func anyWriteExpiresDueKeysFirst() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            try await store.set("/t", "x", in: config, options: SetOptions(ttlSeconds: 5))
            clock.advance(seconds: 5)
            let event = try await store.set("/other", "y", in: config)
            expectEqual(event.revision, 3)
            let expired = try await store.events(in: config, scope: .prefix(.root), from: 2, limit: 10).events
            expectEqual(expired.map(\.kind), [.expire, .put])
            try await expectEmpty(store.sweepExpired())
        }
    }

    public func setWithoutTTLClearsAnEarlierTTL() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            try await store.set("/t", "a", in: config, options: SetOptions(ttlSeconds: 5))
            let event = try await store.set("/t", "b", in: config)
            expectNil(event.item?.expiresAt)
            expectEqual(event.item?.version, 2)
            clock.advance(seconds: 3600)
            try await expectEqual(store.get(Key("/t"), in: config)?.value, Data(text: "b"))
            try await expectEmpty(store.sweepExpired())
        }
    }

    public func newTTLReplacesTheOldOne() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            try await store.set("/t", "a", in: config, options: SetOptions(ttlSeconds: 5))
            clock.advance(seconds: 4)
            let renewed = try await store.set("/t", "a", in: config, options: SetOptions(ttlSeconds: 5))
            expectEqual(renewed.item?.expiresAt, Date(milliseconds: clock.now().milliseconds + 5000))
            clock.advance(seconds: 4)
            try await expectNotNil(store.get(Key("/t"), in: config))
            clock.advance(seconds: 1)
            try await expectNil(store.get(Key("/t"), in: config))
        }
    }

    /// The arguments ``invalidTTLIsRejectedAndChangesNothing(ttl:)`` is checked with.
    public static let invalidTTLIsRejectedAndChangesNothingArguments: [Int64] = [Int64(0), -1, Int64.min, Limits.maxTTLSeconds + 1, Int64.max]

    public func invalidTTLIsRejectedAndChangesNothing(ttl: Int64) async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/t", "a", in: config)
            let before = try await store.observableState(of: config)
            try await expectError(.invalidArgument, field: "ttl") {
                try await store.set("/t", "b", in: config, options: SetOptions(ttlSeconds: ttl))
            }
            try await expectEqual(store.observableState(of: config), before)
        }
    }

    public func longestTTLIsAccepted() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            let event = try await store.set("/t", "a", in: config, options: SetOptions(ttlSeconds: Limits.maxTTLSeconds))
            expectEqual(event.item?.expiresAt, Date(milliseconds: clock.now().milliseconds + Limits.maxTTLSeconds * 1000))
        }
    }
}

extension StoreConformance {
    /// The checks of TTLs and expiry.
    public var ttl: TTLChecks { TTLChecks(conformance: self) }
}
