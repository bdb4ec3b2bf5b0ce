import DiscfgCore
import Foundation

/// Every change records who made it and why, in the same transaction as the change.
public struct AttributionChecks: Sendable {
    let conformance: StoreConformance

    static let deployer = Principal(kind: .token, id: "0123456789ab", description: "deploy job")

    /// What `fixture`'s store records for a change attributed `attribution`: the same,
    /// or, where the store's server records its own caller, that caller with the message.
    static func recorded(_ attribution: Attribution?, by fixture: StoreConformance.Fixture) -> Attribution? {
        guard let principal = fixture.recordedPrincipal else { return attribution }
        return Attribution(principal: principal, message: attribution?.message)
    }

    /// Expects every event of `config`'s history, and of each change's answer, to carry
    /// `expected`.
    static func expectEveryEvent(of config: ConfigName, in store: any ConfigStore, answered: [Event], carry expected: Attribution?, fileID: String = #fileID, line: Int = #line) async throws {
        for event in answered {
            expectEqual(event.attribution, expected, "the answer for \(event.key) at \(event.revision)", fileID: fileID, line: line)
        }
        let events = try await store.events(in: config, scope: .prefix(.root), from: Revision(1), limit: Limits.maxPageSize).events
        expect(!events.isEmpty, "no events", fileID: fileID, line: line)
        for event in events {
            expectEqual(event.attribution, expected, "the event for \(event.key) at \(event.revision)", fileID: fileID, line: line)
        }
        for key in Set(events.map(\.key)) {
            for event in try await store.fullHistory(of: key, in: config) {
                expectEqual(event.attribution, expected, "history of \(key) at \(event.revision)", fileID: fileID, line: line)
            }
        }
    }

    public func everyKindOfChangeRecordsWhoAndWhy() async throws {
        try await conformance.withFixture { fixture, _ in
            let store = fixture.store
            let config = try await store.makeConfig()
            let attribution = Attribution(principal: Self.deployer, message: "move to the new primary — ünïcode, 100%\nsecond line")
            let answered: [Event] = try await attribution.withValue {
                var events: [Event] = []
                events.append(try await store.set("/db/host", "db1", in: config))
                events.append(try await store.set("/db/json", #"{"a":1}"#, in: config, options: SetOptions(contentType: "application/json")))
                events.append(try await store.patch(Key("/db/json"), .merge(["b": 2]), in: config, conditions: []))
                events.append(try await store.delete(Key("/db/host"), in: config, conditions: []))
                events += try await store.transact(Transaction(success: [.put(Key("/t/a"), Data("a".utf8)), .put(Key("/t/b"), Data("b".utf8))]), in: config).events
                events += try await store.deletePrefix(KeyPrefix("/t/"), in: config)
                events += try await store.importSnapshot(ConfigSnapshot(items: [.init(key: Key("/i"), value: Data("i".utf8))]), into: config, replace: false).events
                events += try await store.putDocument(["x": 1], under: KeyPrefix("/doc/"), in: config, replace: false).events
                return events
            }
            expectEqual(answered.count, 10)
            try await Self.expectEveryEvent(of: config, in: store, answered: answered, carry: Self.recorded(attribution, by: fixture))
        }
    }

    public func aChangeWithoutAMessageRecordsWhoAlone() async throws {
        try await conformance.withFixture { fixture, _ in
            let store = fixture.store
            let config = try await store.makeConfig()
            let attribution = Attribution(principal: Self.deployer)
            let event = try await attribution.withValue { try await store.set("/k", "v", in: config) }
            let recorded = Self.recorded(attribution, by: fixture)
            expectNil(recorded?.message)
            try await Self.expectEveryEvent(of: config, in: store, answered: [event], carry: recorded)
        }
    }

    public func changesWithoutAttributionReadAsUnknown() async throws {
        try await conformance.withFixture { fixture, _ in
            let store = fixture.store
            let config = try await store.makeConfig()
            let event = try await store.set("/k", "v", in: config)
            try await Self.expectEveryEvent(of: config, in: store, answered: [event], carry: Self.recorded(nil, by: fixture))
        }
    }

    public func anOversizedMessageIsRefusedAndChangesNothing() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/k", "v1", in: config)
            let before = try await store.observableState(of: config)
            let oversized = Attribution(principal: Self.deployer, message: String(repeating: "é", count: Attribution.maxMessageBytes / 2 + 1))
            try await oversized.withValue {
                try await expectError(.tooLarge, "set", field: "message", mentioning: ["\(Attribution.maxMessageBytes)"]) { try await store.set("/k", "v2", in: config) }
                try await expectError(.tooLarge, "delete", field: "message") { try await store.delete(Key("/k"), in: config, conditions: []) }
                try await expectError(.tooLarge, "transaction", field: "message") {
                    try await store.transact(Transaction(success: [.put(Key("/a"), Data("a".utf8))]), in: config)
                }
                try await expectError(.tooLarge, "import", field: "message") {
                    try await store.importSnapshot(ConfigSnapshot(items: [.init(key: Key("/i"), value: Data("i".utf8))]), into: config, replace: false)
                }
            }
            let exactly = Attribution(principal: Self.deployer, message: String(repeating: "m", count: Attribution.maxMessageBytes))
            try await expectEqual(store.observableState(of: config), before)
            let event = try await exactly.withValue { try await store.set("/k", "v3", in: config) }
            expectEqual(event.attribution?.message, exactly.message)
        }
    }

    public func aTransactionNamesItsOwnAttribution() async throws {
        try await conformance.withFixture { fixture, _ in
            let store = fixture.store
            let config = try await store.makeConfig()
            let named = Attribution(principal: Self.deployer, message: "named on the transaction")
            var transaction = Transaction(success: [.put(try Key("/t/a"), Data("a".utf8))])
            transaction.attribution = named
            // The transaction's own wins over the task's.
            let result = try await Attribution(principal: Principal(kind: .local, id: "someone@else"), message: "the task's").withValue {
                try await store.transact(transaction, in: config)
            }
            try await Self.expectEveryEvent(of: config, in: store, answered: result.events, carry: Self.recorded(named, by: fixture))
            // And is checked as the task's is: nothing changes.
            let before = try await store.observableState(of: config)
            transaction.success = [.put(try Key("/t/b"), Data("b".utf8))]
            transaction.attribution = Attribution(principal: Self.deployer, message: String(repeating: "m", count: Attribution.maxMessageBytes + 1))
            try await expectError(.tooLarge, "transaction", field: "message") { try await store.transact(transaction, in: config) }
            try await expectEqual(store.observableState(of: config), before)
        }
    }

    public func anExpiryIsRecordedAsDiscfgsOwn() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            try await Attribution(principal: Self.deployer, message: "short-lived").withValue {
                _ = try await store.set("/lease", "x", in: config, options: SetOptions(ttlSeconds: 5))
            }
            clock.advance(seconds: 6)
            let swept = try await store.sweepExpired()
            expectEqual(swept.map(\.kind), [.expire])
            let history = try await store.fullHistory(of: Key("/lease"), in: config)
            expectEqual(history.map(\.kind), [.expire, .put])
            expectEqual(history.first?.attribution, Attribution.expiry)
            expectEqual(history.last?.attribution?.message, "short-lived")
        }
    }
}

extension StoreConformance {
    /// Checks that every change records who and why.
    public var attribution: AttributionChecks { AttributionChecks(conformance: self) }
}
